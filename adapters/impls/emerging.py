"""emerging-optimizers (NVIDIA; Megatron-core's Muon) as a plugin: docs/implementations.md."""
import itertools
import typing
from importlib.metadata import version

from ..plugin import Decline, Knob, OptimizerPlugin
from .configs import expressing, matching
from .groups import clamp_norm

if not hasattr(typing, "override"):   # the package needs Python ≥ 3.12 only for typing.override
    typing.override = __import__("typing_extensions").override
COEFFS, STEPS = ["quintic", "simple", "polar_express", "cans", "aol", "deepseekv4"], [5, 3, 7]
SCALE = {("spectral", 1.0): "max_dim", ("spectral", 0.2): "moonlight", ("shape_scaling", 1.0): "deepspeed",
         ("unit_rms_norm", 1.0): "spectral"}
F = {k: {v: {"optimizer." + k: v} for v in vs} for k, vs in
     (("nesterov", [False, True]), ("momentum", [0.95, 0.9, 0.5]), ("weight_decay", [0.01, 0.0, 0.1]))}


class Plugin(OptimizerPlugin):
    name, title = "emerging-optimizers", "emerging-optimizers Muon"
    knobs = [*(Knob(k, list(f), fields=f) for k, f in F.items()), Knob("weight_decay_method", ["decoupled", "independent", "l2", "palm"]),
             Knob("coefficient_type", COEFFS), Knob("num_ns_steps", STEPS),
             Knob("scale_mode", ["spectral", "shape_scaling", "unit_rms_norm"]), Knob("extra_scale_factor", [1.0, 0.2]),
             Knob("fp32_matmul_prec", ["medium", "highest"], fields={"medium": {"optimizer.ns_dtype": "bf16"},
                                                                   "highest": {"optimizer.ns_dtype": "fp32"}})]
    ns_functions = [("emerging_optimizers.orthogonalized_optimizers.muon_utils", "newton_schulz")]
    ns_observers, ns_scalars = clamp_norm, True   # its NS divides by max(‖U‖, eps), the norm taken (and reduced) in fp32

    def version(self):
        return version("emerging-optimizers")
    def to_scenario(self, config, scenario_json):
        from emerging_optimizers.orthogonalized_optimizers import muon_utils as mu
        out, c = super().to_scenario(config, scenario_json), {**{k.name: k.default for k in self.knobs}, **config}
        kind, steps = c["coefficient_type"], c["num_ns_steps"]   # polar_express, cans, deepseekv4 repeat their last
        it = mu.get_coefficient_iterator(steps, mu._COEFFICIENT_SETS[kind], "repeat_last" if kind in ("polar_express", "cans", "deepseekv4") else "cycle")
        out["optimizer"].update(momentum_form="ema", ns_method="standard", ns_steps=steps, ns_coefficients=[list(k) for k in it],
                                scale_rule=SCALE.get((c["scale_mode"], c["extra_scale_factor"]), "deepspeed"))
        return out

    def from_scenario(self, sj):
        base = matching(self, sj)
        return expressing(self, sj, ({**base, "coefficient_type": kind, "num_ns_steps": steps, "scale_mode": mode, "extra_scale_factor": extra}
                                     for kind, steps, (mode, extra) in itertools.product(COEFFS, STEPS, SCALE)))

    def declines(self, s, c):
        if (c["scale_mode"], c["extra_scale_factor"]) not in SCALE:
            return Decline("extra_scale_factor", f"{c['scale_mode']} × {c['extra_scale_factor']}: no scenario scale rule")
        if c["weight_decay_method"] != "decoupled" and any(p.weight_decay > 0 for p in s.params):   # groups included
            return Decline("weight_decay_method", f"{c['weight_decay_method']}: the semantics decay decoupled by lr·wd")
        if any(p.use_muon and len(p.shape) != 2 for p in s.params):
            return Decline(None, "a Muon parameter that is not 2-D: Muon.orthogonalize raises ValueError (documented)")
        return None

    def optimizer(self, muon_groups, adam_groups, s):
        import torch
        from emerging_optimizers.orthogonalized_optimizers import Muon
        self.ns_dtype, c = s.ns_dtype, {k: v for k, v in s.config.items() if k not in F}
        out = [Muon(muon_groups, lr=s.lr, momentum=s.momentum, weight_decay=s.weight_decay, nesterov=s.nesterov, **c)] if muon_groups else []
        return out + ([torch.optim.AdamW(adam_groups, lr=s.adam["lr"], betas=tuple(s.adam["betas"]), eps=s.adam["eps"],
                                         weight_decay=s.weight_decay)] if adam_groups else [])
