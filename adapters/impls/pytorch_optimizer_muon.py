"""pytorch-optimizer's Muon and DistributedMuon as a plugin: docs/implementations.md."""
from importlib.metadata import version

from ..plugin import Decline, Knob, OptimizerPlugin
from .configs import expressing, matching
from .groups import clamp_norm, count_by_shape, merged, of_kind
COEFFS, STEPS = ["original", "quintic", "polar_express", "polar_express_safer"], [5, 3, 7]
F = {k: {v: {"optimizer." + k: v} for v in vs} for k, vs in
     (("nesterov", [True, False]), ("momentum", [0.95, 0.9, 0.5]), ("weight_decay", [0.0, 0.01, 0.1]))}
METHOD = {"newton_schulz": {"optimizer.ns_method": "standard", "optimizer.ns_dtype": "bf16"},
          "gram_newton_schulz": {"optimizer.ns_method": "gram", "optimizer.ns_dtype": "fp16"}}


class Plugin(OptimizerPlugin):
    name, title = "pytorch-optimizer", "pytorch-optimizer Muon"
    knobs = [Knob("class", ["Muon", "DistributedMuon"]), *(Knob(k, list(f), fields=f) for k, f in F.items()),
             Knob("ns_method", list(METHOD), fields=METHOD), Knob("ns_coeffs", COEFFS), Knob("ns_steps", STEPS),
             Knob("use_adjusted_lr", [False, True], fields={False: {"optimizer.scale_rule": "deepspeed"},
                                                          True: {"optimizer.scale_rule": "moonlight"}}),
             Knob("weight_decouple", [True, False]), Knob("foreach", [None, False])]
    ns_functions = [("pytorch_optimizer.optimizer.muon.base", f) for f in ("zero_power_via_newton_schulz_5", "zero_power_via_gram_newton_schulz")]
    ns_observers, ns_scalars = clamp_norm, True   # NS divides by max(‖U‖, 1e-7); gram normalizes (and FSDP2 gathers) in fp32

    def install_ns_counter(self, counter, scenario):   # foreach stacks same-shape matrices; its NS caller's `p` is stale
        super().install_ns_counter(counter, scenario)
        count_by_shape(counter, scenario)

    def version(self):
        return version("pytorch_optimizer")

    def to_scenario(self, config, scenario_json):
        from pytorch_optimizer.optimizer.utils.matrix import get_newton_schulz_weights
        out, c = super().to_scenario(config, scenario_json), {**{k.name: k.default for k in self.knobs}, **config}
        w = get_newton_schulz_weights(c["ns_coeffs"])   # a shorter schedule repeats its last triple
        out["optimizer"].update(momentum_form="ema", ns_steps=c["ns_steps"],
                                ns_coefficients=[list(w[min(i, len(w) - 1)]) for i in range(c["ns_steps"])])
        return out

    def from_scenario(self, scenario_json):
        base = matching(self, scenario_json)
        return expressing(self, scenario_json, ({**base, "ns_coeffs": kind, "ns_steps": steps} for kind in COEFFS for steps in STEPS))

    def declines(self, s, c):
        if c["class"] == "DistributedMuon" and s.stage != 0:
            return Decline("class", "DistributedMuon all-gathers whole parameters (replicated, DDP); FSDP2 shards them")
        if not c["weight_decouple"] and any(p.weight_decay > 0 for p in s.params):   # groups included
            return Decline("weight_decouple", "False: L2 decay added to the gradient; the semantics decay decoupled")
        if c["ns_method"] == "gram_newton_schulz" and any(p.use_muon and p.rows == p.cols for p in s.params):
            return Decline("ns_method", "gram_newton_schulz runs Gram on square matrices too; the semantics' gram runs them standard")
        return None

    def optimizer(self, muon_groups, adam_groups, s):
        import pytorch_optimizer as po
        c, self.ns_dtype = s.config, s.ns_dtype
        adam = dict(betas=tuple(s.adam["betas"]), eps=s.adam["eps"], use_muon=False)
        groups = [dict(g, use_muon=True) for g in merged(muon_groups, of_kind(s, True))]
        groups += [dict(g, **adam) for g in merged(adam_groups, of_kind(s, False))]
        return [getattr(po, c["class"])(groups, momentum=s.momentum, nesterov=s.nesterov, ns_steps=c["ns_steps"],
                                        ns_coeffs=c["ns_coeffs"], ns_method=c["ns_method"], use_adjusted_lr=c["use_adjusted_lr"],
                                        weight_decouple=c["weight_decouple"], foreach=c["foreach"])]
