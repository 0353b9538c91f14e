"""The plugin interface's plain-data parts: knobs mapped onto the scenario both ways, a malformed
plugin named with its field, the torch plugin's mapping staying in what torch.optim.Muon can run,
DeepSpeed declining a scenario it cannot express with its reason."""
import pytest

from adapters import plugins, space
from adapters.plugin import Knob, OptimizerPlugin, PluginError, Unsupported


def canonical(**engine):
    e = {"stage": 1, "dp": 2, "gas": 1, "micro_batch": 1, "param_dtype": "bf16", "grad_accum_dtype": "bf16",
         "comm_dtype": "bf16", "contiguous_gradients": True, "reduce_bucket_size": 500000000,
         "allgather_bucket_size": 500000000}
    e.update(engine)
    return {"name": "x", "steps": 3, "engine": e,
            "optimizer": {"momentum_form": "sum", "nesterov": False, "ns_method": "gram", "ns_dtype": "fp16",
                          "ns_steps": 5, "ns_coefficients": [3.4445, -4.775, 2.0315], "scale_rule": "deepspeed",
                          "per_head": False, "groups": [], "clip": {"max_norm": 1.0, "mode": "update"}},
            "loss_scaler": {"type": "static"}, "overflow": [{"step": 0, "micro_step": 1, "rank": 0}]}


class Tiny(OptimizerPlugin):
    name, title = "tiny", "Tiny"
    knobs = [Knob("stage", [0, 2], fields={0: {"engine.stage": 0}, 2: {"engine.stage": 2}}),
             Knob("overlap", [False, True])]


def test_field_knobs_map_both_ways_and_engine_knobs_never_touch_the_scenario():
    t = Tiny()
    out = t.to_scenario({"stage": 2, "overlap": True}, canonical())
    assert out["engine"]["stage"] == 2 and out == dict(canonical(stage=2))
    assert t.from_scenario(out) == {"stage": 2, "overlap": False}
    with pytest.raises(Unsupported) as e:
        t.from_scenario(canonical(stage=3))
    assert e.value.knob == "stage"
    with pytest.raises(Unsupported) as e:
        t.to_scenario({"stage": 1}, canonical())
    assert e.value.knob == "stage" and "not one of" in e.value.reason
    with pytest.raises(Unsupported) as e:
        t.to_scenario({"nope": 1}, canonical())
    assert e.value.knob == "nope"


def test_a_malformed_plugin_is_named_with_its_field():
    class Bad(Tiny):
        knobs = [Knob("stage", [])]
    with pytest.raises(PluginError, match="plugin 'tiny': knob stage: values"):
        space.check(Bad())

    class Dup(Tiny):
        knobs = [Knob("a", [1]), Knob("a", [2])]
    with pytest.raises(PluginError, match=r"knobs\[1\].name"):
        space.check(Dup())
    with pytest.raises(PluginError, match="no implementation plugin 'no-such'"):
        plugins.load("no-such")


def test_the_torch_plugin_maps_every_configuration_into_what_torch_can_run():
    t = plugins.load("torch")
    for stage in (0, 2, 3):
        for dtype in ("fp32", "bf16"):
            for reduce in ("param", "fp32"):
                out = t.to_scenario({"stage": stage, "param_dtype": dtype, "reduce_dtype": reduce}, canonical())
                e, o = out["engine"], out["optimizer"]
                assert (o["momentum_form"], o["ns_method"], o["ns_dtype"], o["clip"]["mode"]) == ("ema", "standard", "bf16", "raw_grad")
                assert out["loss_scaler"]["type"] == "none" and out["overflow"] == []
                if stage == 0:
                    assert e["comm_dtype"] == e["grad_accum_dtype"] == dtype
                else:
                    assert e["comm_dtype"] == ("fp32" if reduce == "fp32" else dtype)
                    assert e["grad_accum_dtype"] == e["comm_dtype"]   # FSDP2 accumulates in its reduce_dtype


def test_deepspeed_declines_a_scenario_it_cannot_express_with_the_knob_and_reason():
    d = plugins.load("deepspeed")
    fp32 = dict(canonical(param_dtype="fp32", grad_accum_dtype="fp32", comm_dtype="fp32"), loss_scaler={"type": "none"})
    with pytest.raises(Unsupported) as e:      # sum momentum: no value of knob "muon" expresses it
        d.from_scenario(fp32)
    assert e.value.knob == "muon" and "optimizer.momentum_form" in e.value.reason
    with pytest.raises(Unsupported) as e:      # bf16 params accumulating in fp16: no precision path
        d.from_scenario(canonical(grad_accum_dtype="fp16"))
    assert e.value.knob == "precision"
    # a drawn configuration always maps onto a scenario DeepSpeed's knobs can say back
    out = d.to_scenario({"precision": "bf16_fp32_master", "gas": 1, "checkpoint": "save_load"}, canonical())
    assert out["engine"]["grad_accum_dtype"] == "fp32" and out["overflow"] == []   # the micro-step-1 injection is gone at gas 1
    assert d.from_scenario(out)["precision"] == "bf16_fp32_master"
    # a base drawn with zero_init (stage 3 only) mapped onto another stage leaves it off
    assert d.to_scenario({"stage": 1}, canonical(stage=3, zero_init=True))["engine"]["zero_init"] is False
    assert d.to_scenario({"stage": 3}, canonical(stage=3, zero_init=True))["engine"]["zero_init"] is True


def test_deepspeed_draws_gradient_clipping_as_clipping_the_gradient_and_its_ns_dtype_where_it_runs():
    d = plugins.load("deepspeed")
    base = canonical()   # its clip mode is "update"
    for clip in (0.05, 1.0):
        out = d.to_scenario({"gradient_clipping": clip, "ns_method": "gram"}, base)
        assert out["optimizer"]["clip"] == {"max_norm": clip, "mode": "raw_grad"}
    try:
        from deepspeed.accelerator import get_accelerator
    except ImportError:
        return
    gram = d.to_scenario({"ns_method": "gram"}, base)["optimizer"]["ns_dtype"]
    assert gram == ("fp16" if get_accelerator().is_fp16_supported() else "fp32")
