"""torch.optim.Muon (+ torch.optim.AdamW for the rest) as a plain-optimizer plugin: muoncheck wraps
the model in DDP (stage 0) or FSDP2 (stages 2, 3) and runs the loop (adapters/optimizer_loop.py).

Its space: the wrapping (stage), the param dtype and FSDP2's reduce dtype, Nesterov and
`adjust_lr_fn`; the rest of what it can express is fixed by a one-value knob (`muon`): EMA
momentum, the standard quintic in bf16, whole matrices, gradient clipping, no loss scaler.
`optimizers.py` holds the factories (the conforming one and the deliberately broken ones).
"""
import inspect

from ..plugin import Decline, Knob, OptimizerPlugin
from . import optimizers, semantics

_ONE_TRIPLE = [3.4445, -4.775, 2.0315]


def _spectral_available():
    import torch.optim._muon as m
    return "spectral_unclamped" in inspect.getsource(m)


class TorchMuon(OptimizerPlugin):
    name = "torch"
    title = "torch.optim.Muon"
    ns_functions = [("torch.optim._muon", "_zeropower_via_newtonschulz")]
    factory = staticmethod(optimizers.torch_muon)
    knobs = [
        Knob("stage", [2, 0, 3], fields={s: {"engine.stage": s, "engine.zero_init": None} for s in (2, 0, 3)},
             doc="the wrapping: 0 DDP, 2 FSDP2 (reshard_after_forward false), 3 FSDP2 (true)"),
        Knob("param_dtype", ["fp32", "bf16"], fields={d: {"engine.param_dtype": d} for d in ("fp32", "bf16")},
             doc="the module's dtype (DDP: fp32 masters beside bf16 params; FSDP2: MixedPrecisionPolicy.param_dtype)"),
        Knob("reduce_dtype", ["param", "fp32"], doc="FSDP2's MixedPrecisionPolicy.reduce_dtype (DDP: the param dtype)"),
        Knob("nesterov", [True, False], fields={v: {"optimizer.nesterov": v} for v in (True, False)}),
        Knob("adjust_lr_fn", ["original", "match_rms_adamw", "spectral_unclamped"],
             fields={"original": {"optimizer.scale_rule": "deepspeed"},
                     "match_rms_adamw": {"optimizer.scale_rule": "moonlight"},
                     "spectral_unclamped": {"optimizer.scale_rule": "spectral"}}),
        Knob("muon", ["torch"], fields={"torch": {
            "optimizer.momentum_form": "ema", "optimizer.ns_method": "standard", "optimizer.ns_dtype": "bf16",
            "optimizer.per_head": False, "optimizer.clip.mode": "raw_grad", "loss_scaler.type": "none",
            "overflow": [], "checkpoint": None, "engine.offload_optimizer": None, "engine.compile": None}},
             doc="what torch.optim.Muon fixes: EMA momentum, the standard quintic in bf16, whole matrices"),
    ]

    def __init__(self):
        import os
        spec = os.environ.get("MUONCHECK_TORCH_FACTORY")
        if spec and type(self) is TorchMuon:
            optimizers.load_factory(spec)   # a bad spec fails here, before the hello
            self.factory_spec = spec        # looked up per case, so a known-defect fix may replace it
            self.title = f"torch.optim.Muon ({spec})"

    def version(self):
        import torch
        return torch.__version__

    def to_scenario(self, config, scenario_json):
        out = super().to_scenario(config, scenario_json)
        from .. import space
        config = space.full_config(self, config)
        e = out["engine"]
        if e["stage"] == 0 or config["reduce_dtype"] == "param":
            e["comm_dtype"] = e["param_dtype"]
        else:
            e["comm_dtype"] = "fp32"
        e["grad_accum_dtype"] = e["param_dtype"] if e["stage"] == 0 else e["comm_dtype"]   # FSDP2 accumulates in reduce_dtype
        if e.get("param_dtype") == "fp16":
            e["param_dtype"] = "bf16"
        return out

    def from_scenario(self, scenario_json):
        config = super().from_scenario(scenario_json)
        e = scenario_json["engine"]
        config["reduce_dtype"] = "fp32" if e.get("comm_dtype", e.get("param_dtype")) != e.get("param_dtype") else "param"
        return config

    def declines(self, s, config):
        if s.momentum_form != "ema":
            return Decline("muon", "optimizer.momentum_form sum: torch.optim.Muon's momentum is an EMA")
        if s.ns_method != "standard":
            return Decline("muon", f"optimizer.ns_method {s.ns_method}: torch.optim.Muon runs the standard quintic NS loop")
        if s.ns_coefficients is None:
            return Decline("muon", "optimizer.ns_coefficients: a per-iteration schedule; torch.optim.Muon takes one "
                                   "(a, b, c) for every iteration")
        if s.ns_dtype != "bf16":
            return Decline("muon", f"optimizer.ns_dtype {s.ns_dtype}: torch.optim.Muon's NS computes in bf16")
        if s.per_head:
            return Decline("muon", "optimizer.per_head: torch.optim.Muon orthogonalizes whole matrices")
        if s.scale_rule == "spectral" and not _spectral_available():
            return Decline("adjust_lr_fn", "optimizer.scale_rule spectral: this torch has no adjust_lr_fn "
                                           "\"spectral_unclamped\" (added after 2.11)")
        for p in s.params:
            if p.use_muon and len(p.shape) != 2:
                return Decline(None, f"Muon param not 2-D: {p.name} shape {p.shape}; torch.optim.Muon takes 2-D "
                                     f"params only (ValueError)")
        return None

    def ns_observers(self):
        return [semantics.NormCheck()]

    def optimizer(self, muon_groups, adam_groups, scenario):
        spec = getattr(self, "factory_spec", None)
        factory = optimizers.load_factory(spec) if spec else self.factory
        return factory(muon_groups, adam_groups, scenario)


def with_factory(factory, label):
    """A TorchMuon whose optimizers come from another factory (conformance.py's `--optimizer-factory`)."""
    class Custom(TorchMuon):
        pass
    Custom.factory = staticmethod(factory)
    Custom.title = f"torch.optim.Muon ({label})" if label != "adapters.torch.optimizers:torch_muon" else TorchMuon.title
    return Custom()
