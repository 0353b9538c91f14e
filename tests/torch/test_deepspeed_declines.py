"""adapters/deepspeed/plugin.py declines_here: a scenario whose NS dtype is not the one DeepSpeed's
Newton-Schulz runs in on this accelerator (a suite written on a GPU, gram in fp16, run on a CPU,
where it runs in fp32) is declined under ns_method, not judged against a band for what did not run.
The accelerator is simulated: DeepSpeed need not be installed."""
from types import SimpleNamespace

from adapters.deepspeed import plugin as ds


def scenario(ns_method, ns_dtype, param_dtype="bf16"):
    return SimpleNamespace(ns_method=ns_method, ns_dtype=ns_dtype, param_dtype=param_dtype)


def test_an_ns_dtype_this_accelerator_does_not_run_is_declined(monkeypatch):
    monkeypatch.setattr(ds, "_ns_compute_dtype", lambda method: "fp32" if method == "gram" else "bf16")
    monkeypatch.setattr(ds, "_accelerator_has_fp16", lambda: False)
    p = ds.DeepSpeedMuon()
    decline = p.declines_here(scenario("gram", "fp16"), {"precision": "bf16"})
    assert decline is not None and decline.knob == "ns_method"
    assert "runs gram Newton-Schulz in fp32" in decline.reason
    assert p.declines_here(scenario("gram", "fp32"), {"precision": "bf16"}) is None
    assert p.declines_here(scenario("standard", "bf16"), {"precision": "bf16"}) is None
