"""heavyball's Muon as a plugin: docs/implementations.md."""
from importlib.metadata import version

from ..plugin import Decline, Knob, OptimizerPlugin
from .configs import expressing, matching
from .groups import clamp_norm

F = {k: {v: {"optimizer." + k: v} for v in vs} for k, vs in
     (("nesterov", [True, False]), ("momentum", [0.9, 0.95, 0.5]), ("weight_decay", [0.0, 0.01, 0.1]))}
# heavyball.Muon always runs its own NS: 5 iterations of the modded-nanogpt quintic schedule (the named
# schedule "quintic"), the input stochastically rounded to bf16 after normalising by max(‖G‖, 1e-7); scale √max(1, r/c).
FIXED = {"optimizer.ns_method": "standard", "optimizer.ns_steps": 5, "optimizer.ns_dtype": "bf16",
         "optimizer.scale_rule": "deepspeed", "optimizer.ns_coefficients": [[4.0848, -6.8946, 2.9270], [3.9505, -6.3029, 2.6377],
         [3.7418, -5.5913, 2.3037], [2.8769, -3.1427, 1.2046], [2.8366, -3.0525, 1.2012]]}


class Plugin(OptimizerPlugin):
    name, title = "heavyball", "heavyball Muon"
    knobs = [Knob("heavyball_momentum", [False, True], fields={False: {"optimizer.momentum_form": "ema"},
                                                              True: {"optimizer.momentum_form": "sum"}}),
             *(Knob(k, list(f), fields=f) for k, f in F.items()),
             Knob("semantics", ["heavyball"], fields={"heavyball": FIXED}, doc="what every configuration does"),
             Knob("multi_tensor", [True, False]), Knob("caution", [False, True])]
    ns_functions = [("heavyball.utils", "zeropower_via_newtonschulz5")]
    ns_observers = clamp_norm   # its NS divides by max(‖U‖, 1e-7)

    def from_scenario(self, scenario_json):
        return expressing(self, scenario_json, [matching(self, scenario_json)])

    def version(self):
        return version("heavyball")

    def declines(self, s, c):
        if c["caution"]:
            return Decline("caution", "True: the update is masked where its sign disagrees with the gradient")
        if s.momentum_form == "ema" and s.nesterov:
            return Decline("nesterov", "nesterov_ema: U = G + EMA(G) (Grokfast form), not (1-β)G + β·M")
        return None

    def param_state(self, opt, p, use_muon):
        """opt.state[p][0], keys named by chain position. Its EMA (exp_avg) is kept debiased, m/(1−βᵗ), by
        another recurrence: m itself is not recoverable to the ulp, so only the `sum` form's buffer is shown."""
        if not use_muon or type(opt).__module__.split(".")[0] != "heavyball":
            return {}
        key = next((k for k in opt.state[p][0] if "momentum" in k), None)
        return {"momentum": opt.state[p][0][key]} if key else {}

    def optimizer(self, muon_groups, adam_groups, s):
        import heavyball.utils
        import torch
        heavyball.utils.compile_mode = None   # eager: torch.compile of every step on the CPU costs minutes per shape
        torch.manual_seed(s.seed)             # its stochastic rounding draws from torch's generator
        c, self.ns_dtype = s.config, s.ns_dtype
        out = [heavyball.Muon(muon_groups, betas=(s.momentum, 0.99), nesterov=s.nesterov, heavyball_momentum=c["heavyball_momentum"],
                              multi_tensor=c["multi_tensor"], caution=c["caution"])] if muon_groups else []
        return out + ([torch.optim.AdamW(adam_groups, lr=s.adam["lr"], betas=tuple(s.adam["betas"]), eps=s.adam["eps"])]
                      if adam_groups else [])
