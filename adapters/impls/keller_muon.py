"""muon-optimizer (Keller Jordan's reference Muon, `import muon`) as a plugin: docs/implementations.md."""
from importlib.metadata import version

import torch

from ..plugin import Decline, Knob, OptimizerPlugin, Unsupported
from .configs import expressing, matching
from .groups import merged, of_kind, rate

# What every class always does (no knob for it): EMA momentum with Nesterov, the standard quintic
# NS in bf16 (5 iterations of one triple), scale √max(1, r/c).
FIXED = {"optimizer.nesterov": True, "optimizer.momentum_form": "ema", "optimizer.ns_method": "standard",
         "optimizer.ns_steps": 5, "optimizer.ns_dtype": "bf16", "optimizer.scale_rule": "deepspeed",
         "optimizer.ns_coefficients": [[3.4445, -4.7750, 2.0315]] * 5}
F = {k: {v: {"optimizer." + k: v} for v in vs} for k, vs in
     (("momentum", [0.95, 0.9, 0.5, 0.0]), ("weight_decay", [0.0, 0.01, 0.1]))}


class Plugin(OptimizerPlugin):
    name, title = "muon-optimizer", "muon-optimizer Muon"
    knobs = [Knob("class", ["Muon", "SingleDeviceMuon", "MuonWithAuxAdam", "SingleDeviceMuonWithAuxAdam"],
                  doc="Muon / MuonWithAuxAdam split the Muon params round-robin over ranks and all-gather them"),
             Knob("semantics", ["reference"], fields={"reference": FIXED}, doc="what every class does"),
             *(Knob(k, list(f), fields=f) for k, f in F.items())]
    ns_functions = [("muon", "zeropower_via_newtonschulz5")]

    def from_scenario(self, scenario_json):
        return expressing(self, scenario_json, [matching(self, scenario_json)])

    def version(self):
        return version("muon-optimizer")

    def declines(self, s, config):
        if s.stage != 0:
            return Decline("class", f"engine.stage {s.stage}: the package steps and all-gathers whole parameters, FSDP2 shards them")
        if s.ns_iterations != [tuple(t) for t in FIXED["optimizer.ns_coefficients"]] or s.ns_dtype != "bf16":
            return Decline("semantics", "optimizer.ns_*: every class runs 5 bf16 iterations of one fixed triple")
        if not config["class"].endswith("WithAuxAdam") and len({rate(p) for p in of_kind(s, True)}) > 1:
            return Decline("class", "optimizer.groups: Muon and SingleDeviceMuon take one list of parameters, one rate")
        return None

    def optimizer(self, muon_groups, adam_groups, s):
        import muon
        cls, adam = s.config["class"], dict(betas=tuple(s.adam["betas"]), eps=s.adam["eps"])
        mg, ag = merged(muon_groups, of_kind(s, True)), merged(adam_groups, of_kind(s, False))
        if cls.endswith("WithAuxAdam"):
            return [getattr(muon, cls)([dict(params=g["params"], lr=g["lr"], momentum=s.momentum, weight_decay=g["weight_decay"],
                                             use_muon=True) for g in mg] +
                                       [dict(params=g["params"], lr=g["lr"], weight_decay=g["weight_decay"], use_muon=False, **adam)
                                        for g in ag])]
        if len(mg) > 1:
            raise Unsupported("optimizer.groups: Muon and SingleDeviceMuon take one list of parameters, one rate", knob="class")
        out = [getattr(muon, cls)(mg[0]["params"], lr=mg[0]["lr"], weight_decay=mg[0]["weight_decay"], momentum=s.momentum)] if mg else []
        return out + ([torch.optim.AdamW(ag, **adam)] if ag else [])
