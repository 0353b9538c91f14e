"""The third-party plugins (adapters/impls/): found by their entry points, their spaces well formed,
each at most 60 lines, each config mapped onto a scenario the runner accepts as expressing it (and a
config that does not express a scenario declined under the knob at fault), the fix registry applied
and reverted, and the runner's merged groups. Needs the four packages (scripts/bootstrap.sh); exit 77
(ctest SKIP) without them. No training runs here (scripts/impl-run.sh judges them)."""
import copy
import importlib.util
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
for module in ("torch", "muon", "emerging_optimizers", "heavyball", "pytorch_optimizer"):
    if importlib.util.find_spec(module) is None:
        print(f"SKIP: {module} is not installed (scripts/bootstrap.sh installs it)")
        sys.exit(77)

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


# Entry points from the checkout: the dist-info scripts/impl-run.sh lays, from adapters/pyproject.toml.
ep = tempfile.mkdtemp()
info = os.path.join(ep, "muoncheck_checkout_plugins-0.dist-info")
os.makedirs(info)
open(os.path.join(info, "METADATA"), "w").write("Metadata-Version: 2.1\nName: muoncheck-checkout-plugins\nVersion: 0\n")
lines, on = ["[muoncheck.implementations]"], False
for line in open(os.path.join(ROOT, "adapters", "pyproject.toml")):
    if line.startswith("["):
        on = line.strip() == '[project.entry-points."muoncheck.implementations"]'
    elif on and " = " in line:
        lines.append(line.replace('"', "").replace("muoncheck_adapters.", "adapters.").strip())
open(os.path.join(info, "entry_points.txt"), "w").write("\n".join(lines) + "\n")
sys.path.insert(0, ep)

from adapters import plugins, space  # noqa: E402
from adapters.impls import run as runner  # noqa: E402
from adapters.impls.groups import merged  # noqa: E402

NAMES = ["muon-optimizer", "emerging-optimizers", "heavyball", "pytorch-optimizer"]
check(all(n in plugins.names() for n in NAMES), f"the four plugins are found by entry point: {plugins.names()}")


class Resolved:
    """What the runner reads of a resolved scenario (adapters.common.scenario.Scenario), without muoncheck."""

    def __init__(self, raw, config):
        self.raw, self.config = raw, config
        o = raw["optimizer"]
        self.ns_steps = o["ns_steps"]
        c = o["ns_coefficients"]
        c = [c] if c and isinstance(c[0], (int, float)) else c
        self.ns_iterations = [tuple(t) for t in (c * self.ns_steps if len(c) == 1 else c)]


BASE = {"name": "t", "seed": 1, "steps": 3, "model": {"params": [{"name": "layers.0.weight", "shape": [4, 64]}]},
        "engine": {"stage": 0, "dp": 1, "gas": 1, "micro_batch": 2, "param_dtype": "fp32"},
        "optimizer": {"lr": 0.02, "momentum": 0.95, "momentum_form": "ema", "nesterov": True, "ns_method": "standard",
                      "ns_steps": 5, "ns_coefficients": [[3.4445, -4.775, 2.0315]], "ns_dtype": "bf16",
                      "scale_rule": "deepspeed", "weight_decay": 0.0}}
for name in NAMES:
    p = plugins.load(name)
    source = sys.modules[type(p).__module__].__file__
    n = sum(1 for _ in open(source))
    check(n <= 60, f"{name}: plugin {os.path.relpath(source, ROOT)} has {n} lines (at most 60)")
    check(bool(p.version()), f"{name}: version {p.version()}")
    for k in p.knobs:   # every value of every knob, the others at their defaults
        for v in k.values:
            config = space.full_config(p, {k.name: v})
            mapped = p.to_scenario(config, copy.deepcopy(BASE))
            s = Resolved(mapped, config)
            why = runner._not_expressed(p, s)
            check(why is None, f"{name}: {k.name}={v!r} maps to a scenario it expresses ({why})")
    # A planted mismatch: the scenario's momentum is no value of the knob's; the runner declines under that knob.
    config = space.full_config(p, {})
    mapped = p.to_scenario(config, copy.deepcopy(BASE))
    wrong = copy.deepcopy(mapped)
    wrong["optimizer"]["momentum"] = 0.3
    why = runner._not_expressed(p, Resolved(wrong, config)) or ""
    check(why.startswith("knob momentum:"), f"{name}: a scenario the config does not express is declined under its knob: {why[:80]}")

# The fix registry: applied, it replaces; reverted, the package is as shipped.
import muon  # noqa: E402
p = plugins.load("muon-optimizer")
originals = (muon.muon_update, muon.Muon.step, muon.MuonWithAuxAdam.step)
reverts = [f.apply() for f in p.fixes().values()]
check((muon.muon_update, muon.Muon.step, muon.MuonWithAuxAdam.step) != originals, "the fixes replace muon_update and the steps")
for r in reverts:
    r()
check((muon.muon_update, muon.Muon.step, muon.MuonWithAuxAdam.step) == originals, "reverted, muon is as shipped")

# Merged groups: same rate, decay and schedule together, in order; anything different apart.
class Spec:
    def __init__(self, scale, sched="constant"):
        self.lr_scale, self.lr_schedule = scale, {"shape": sched}
a, b, c = object(), object(), object()
groups = [{"params": [a], "lr": 0.02, "weight_decay": 0.0}, {"params": [b], "lr": 0.02, "weight_decay": 0.0},
          {"params": [c], "lr": 0.01, "weight_decay": 0.0}]
out = merged(groups, [Spec(1.0), Spec(1.0), Spec(0.5)])
check([g["params"] for g in out] == [[a, b], [c]], "groups merge by rate, decay and schedule")
out = merged(groups[:2], [Spec(1.0), Spec(1.0, "cosine")])
check(len(out) == 2, "another schedule keeps a parameter apart")

print(f"{len(failures)} failed" if failures else "all checks passed")
sys.exit(1 if failures else 0)
