"""The third-party plugins (adapters/impls/) through the generic worker's path (adapters/worker.py,
adapters/case.py): loaded by name, their spaces well formed, each at most 60 lines, each config's
scenario mapped back to a config that expresses it (worker `from_scenario`), a scenario no config
expresses declined under the knob at fault, one small case of each run through adapters.case, the
known-defect registries' fixes applied and reverted, and the merged groups. Needs the four packages
(scripts/bootstrap.sh); exit 77 (ctest SKIP) without them."""
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


from adapters import case, plugins, space, worker  # noqa: E402
from adapters.common import scenario as scenario_file  # noqa: E402
from adapters.impls.groups import merged  # noqa: E402

NAMES = ["muon-optimizer", "emerging-optimizers", "heavyball", "pytorch-optimizer"]
check(all(n in plugins.names() for n in NAMES), f"the four plugins load by name in the generic worker: {plugins.names()}")
toml = open(os.path.join(ROOT, "adapters", "pyproject.toml")).read()
check(all(f"\n{n} = " in toml for n in NAMES), "adapters/pyproject.toml keeps their entry points for the installed package")

BASE = {"name": "t", "seed": 1, "steps": 2, "model": {"params": [{"name": "layers.0.weight", "shape": [4, 64]},
                                                               {"name": "norm.weight", "shape": [8]}]},
        "engine": {"stage": 0, "dp": 1, "gas": 1, "micro_batch": 2, "param_dtype": "fp32"},
        "optimizer": {"lr": 0.02, "momentum": 0.95, "momentum_form": "ema", "nesterov": True, "ns_method": "standard",
                      "ns_steps": 5, "ns_coefficients": [3.4445, -4.775, 2.0315], "ns_dtype": "bf16",
                      "scale_rule": "deepspeed", "weight_decay": 0.0}}


def resolved(scenario_json):
    d = tempfile.mkdtemp()
    path = os.path.join(d, scenario_json["name"] + ".json")
    json.dump(scenario_json, open(path, "w"))
    return scenario_file.resolve(path)


worker.init_process_group("cpu")
for name in NAMES:
    p = plugins.load(name)
    source = sys.modules[type(p).__module__].__file__
    n = sum(1 for _ in open(source))
    check(n <= 60, f"{name}: plugin {os.path.relpath(source, ROOT)} has {n} lines (at most 60)")
    check(bool(p.version()), f"{name}: version {p.version()}")
    hello = worker.hello(p, 1, "cpu")
    check(hello["implementation"] == name and hello["space"]["knobs"], f"{name}: hello names it and its space")
    for k in p.knobs:   # every value of every knob, the others at their defaults
        for v in k.values:
            config = space.full_config(p, {k.name: v})
            mapped = worker.answer(p, {"map": {"config": config, "scenario": copy.deepcopy(BASE)}})["scenario"]
            back = worker.answer(p, {"from_scenario": mapped})
            same = "config" in back and p.to_scenario(back["config"], copy.deepcopy(mapped)) == mapped
            check(same, f"{name}: {k.name}={v!r}: from_scenario gives a config that maps the scenario onto itself ({back})")
    # A planted mismatch: the scenario's momentum is no value of the knob's; from_scenario declines under that knob.
    wrong = worker.answer(p, {"map": {"config": space.full_config(p, {}), "scenario": copy.deepcopy(BASE)}})["scenario"]
    wrong["optimizer"]["momentum"] = 0.3
    why = worker.answer(p, {"from_scenario": wrong})
    check(why.get("knob") == "momentum", f"{name}: a scenario no config expresses is declined under its knob: {why}")
    # One small case through the generic loop, as a resident worker runs it (heavyball declines Nesterov with EMA).
    config = space.full_config(p, {"nesterov": False} if any(k.name == "nesterov" for k in p.knobs) else {})
    mine = worker.answer(p, {"map": {"config": config, "scenario": copy.deepcopy(BASE)}})["scenario"]
    trace = case.run(p, resolved(mine), config)
    check(trace.get("error") is None and trace.get("unsupported") is None and len(trace.get("steps", [])) == 2,
          f"{name}: a 2-step case runs through adapters.case ({trace.get('error') or trace.get('unsupported')})")

# The known-defect registries (adapters/NAME/known_defects.json): applied, each fix replaces; reverted, the package is as shipped.
import muon  # noqa: E402
from pytorch_optimizer.optimizer.muon import distributed_muon  # noqa: E402
p = plugins.load("muon-optimizer")
check(len(p.fixes()) == 4, f"muon-optimizer: four registry fixes ({sorted(p.fixes())})")
originals = (muon.muon_update, muon.Muon.step, muon.MuonWithAuxAdam.step)
reverts = [f.apply() for f in p.fixes().values()]
check(all(a is not b for a, b in zip((muon.muon_update, muon.Muon.step, muon.MuonWithAuxAdam.step), originals)),
      "the fixes replace muon_update and the steps")
for r in reversed(reverts):
    r()
check((muon.muon_update, muon.Muon.step, muon.MuonWithAuxAdam.step) == originals, "reverted, muon is as shipped")
p, original = plugins.load("pytorch-optimizer"), distributed_muon.all_gather
revert = p.fixes()["pytorch-optimizer-distributed-muon-mixed-shapes"].apply()
check(distributed_muon.all_gather is not original, "pytorch-optimizer: the fix replaces DistributedMuon's all_gather")
revert()
check(distributed_muon.all_gather is original, "reverted, pytorch_optimizer is as shipped")
import heavyball.chainable  # noqa: E402
import heavyball.utils  # noqa: E402
import torch  # noqa: E402
p = plugins.load("heavyball")
check(sorted(p.fixes()) == ["heavyball-fsdp2-full-fp32-gathers", "heavyball-ns-input-stochastic-rounding"],
      f"heavyball: two registry fixes ({sorted(p.fixes())})")
heavyball.utils.compile_mode = None
originals = (heavyball.utils.zeropower_via_newtonschulz5, heavyball.chainable.TagGuard.__dict__["_call"])
G = torch.randn(2, 3, generator=torch.Generator().manual_seed(0))


def ns_under(seed):
    """NS of G after torch.manual_seed(seed), and whether the call left torch's generator where it was."""
    torch.manual_seed(seed)
    before = torch.get_rng_state()
    out = heavyball.utils.zeropower_via_newtonschulz5(G.clone())
    return out, torch.equal(before, torch.get_rng_state())


(a, kept_a), (b, _) = ns_under(1), ns_under(2)
check(not kept_a and not torch.equal(a, b), "heavyball as shipped: the NS input's rounding draws from torch's generator")
reverts = [f.apply() for f in p.fixes().values()]
check(heavyball.utils.zeropower_via_newtonschulz5 is not originals[0]
      and heavyball.chainable.TagGuard.__dict__["_call"] is not originals[1], "the fixes replace NS and TagGuard._call")
(a, kept_a), (b, kept_b) = ns_under(1), ns_under(2)
check(kept_a and kept_b and torch.equal(a, b), "fixed: the NS input is rounded to nearest, torch's generator untouched")
for r in reversed(reverts):
    r()
check((heavyball.utils.zeropower_via_newtonschulz5, heavyball.chainable.TagGuard.__dict__["_call"]) == originals,
      "reverted, heavyball is as shipped")

# The FSDP2 gather fixes read the dtype FSDP2 reduces a gradient in from torch releases with and
# without FSDPParam.unsharded_grad_dtype. 2.11 has only reduce_dtype and param_dtype, each clamped
# to None where no cast is needed: bf16 params with a bf16 reduce keep reduce_dtype None and reduce
# in param_dtype (read as the fp32 orig_dtype, the fixes did nothing there).
from adapters.common.fsdp2_params import reduce_dtype as _reduce_dtype  # noqa: E402


class OldFsdpParam:   # torch 2.11's attributes: no unsharded_grad_dtype
    def __init__(self, reduce_dtype, param_dtype, orig_dtype):
        self.reduce_dtype, self.param_dtype, self.orig_dtype = reduce_dtype, param_dtype, orig_dtype


class NewFsdpParam(OldFsdpParam):
    unsharded_grad_dtype = property(lambda self: torch.float16)


check(_reduce_dtype(OldFsdpParam(torch.bfloat16, None, torch.float32)) == torch.bfloat16
      and _reduce_dtype(OldFsdpParam(None, torch.bfloat16, torch.float32)) == torch.bfloat16
      and _reduce_dtype(OldFsdpParam(None, None, torch.float32)) == torch.float32
      and _reduce_dtype(NewFsdpParam(None, None, torch.float32)) == torch.float16,
      "FSDP2 gather fixes: the reduce dtype with and without FSDPParam.unsharded_grad_dtype")

# pytorch-optimizer's foreach Muon stacks two tall (16, 4) matrices transposed beside a wide (4, 16)
# one (one batch under use_adjusted_lr; two batches of G shape (4, 16) without): each matrix is one NS
# call of its own parameter, none left unattributed (count_by_shape took only one shape's list).
import types  # noqa: E402
import pytorch_optimizer  # noqa: E402
from adapters.common.ns_counter import NsCounter  # noqa: E402
from adapters.impls.groups import count_by_shape  # noqa: E402
for adjusted in (True, False):
    ws = [torch.nn.Parameter(torch.randn(*s, generator=torch.Generator().manual_seed(i)))
          for i, s in enumerate([(16, 4), (4, 16), (16, 4)])]
    for w in ws:
        w.grad = torch.randn_like(w)
    counter = NsCounter([(f"w{i}", w) for i, w in enumerate(ws)])
    spec = types.SimpleNamespace(params=[types.SimpleNamespace(use_muon=True)] * 3, config={"class": "Muon"})
    plugins.load("pytorch-optimizer").install_ns_counter(counter, spec)
    try:
        pytorch_optimizer.Muon([{"params": ws, "use_muon": True}], foreach=True, use_adjusted_lr=adjusted).step()
    finally:
        counter.uninstall()
    check(counter.calls == {0: 1, 1: 1, 2: 1} and counter.unattributed == 0,
          f"pytorch-optimizer foreach (use_adjusted_lr={adjusted}): tall and wide matrices one NS each "
          f"({counter.calls}, {counter.unattributed} unattributed)")

# The gram fix gathers the update in the comm dtype (bf16) inside the NS call: with ns_scalars, an
# all-gather inside NS in a dtype other than the NS dtype (fp16) is the NS input (muon_gather, judged
# against the comm dtype), not the iterate (ns_internal, judged against the NS dtype).
from adapters.common.optimizer_trace import classify  # noqa: E402
inside = types.SimpleNamespace(inside=1)
purpose = classify(inside, lambda: "step", True, sharded=True, ns_dtype="fp16")
check([purpose("all_gather", 8, d) for d in ("bf16", "fp32", "fp16")] == ["muon_gather", "muon_gather", "ns_internal"],
      "inside NS (ns_scalars, fp16 NS): a bf16 or fp32 all-gather is the gathered input, an fp16 one the iterate")
from pytorch_optimizer.optimizer.utils import matrix  # noqa: E402
p, original = plugins.load("pytorch-optimizer"), matrix._orthogonalize_dtensor
revert = p.fixes()["pytorch-optimizer-fsdp2-gram-fp32-gather"].apply()
check(matrix._orthogonalize_dtensor is not original, "pytorch-optimizer: the gram fix replaces _orthogonalize_dtensor")
revert()
check(matrix._orthogonalize_dtensor is original, "reverted, pytorch_optimizer's matrix utils are as shipped")

# emerging-optimizers' cans fix: under "medium" the shipped NS blows some 37x8 matrices up (norm > 10); fixed, none.
from emerging_optimizers.orthogonalized_optimizers import muon_utils  # noqa: E402
g = torch.Generator().manual_seed(0)
xs = [torch.randn(37, 8, generator=g) for _ in range(40)]


def diverging():
    torch.set_float32_matmul_precision("medium")
    try:
        outs = [muon_utils.newton_schulz(x, 5, coefficient_type="cans") for x in xs]
        return sum(1 for o in outs if not torch.isfinite(o).all() or o.norm() > 10)   # an orthogonal 8x37: norm √8
    finally:
        torch.set_float32_matmul_precision("highest")


p, original, shipped = plugins.load("emerging-optimizers"), muon_utils.newton_schulz, diverging()
revert = p.fixes()["emerging-optimizers-cans-bf16-diverges"].apply()
fixed = diverging()
revert()
check(shipped > 0 and fixed == 0 and muon_utils.newton_schulz is original,
      f"emerging-optimizers cans in bf16: {shipped} of 40 diverge as shipped, {fixed} fixed; reverted as shipped")

# Merged groups: same rate, decay and schedule together, in order; anything different apart.
class Spec:
    def __init__(self, scale, sched="constant"):
        self.lr_scale, self.lr_schedule, self.weight_decay = scale, {"shape": sched}, 0.0
a, b, c = object(), object(), object()
groups = [{"params": [a], "lr": 0.02, "weight_decay": 0.0}, {"params": [b], "lr": 0.02, "weight_decay": 0.0},
          {"params": [c], "lr": 0.01, "weight_decay": 0.0}]
out = merged(groups, [Spec(1.0), Spec(1.0), Spec(0.5)])
check([g["params"] for g in out] == [[a, b], [c]], "groups merge by rate, decay and schedule")
out = merged(groups[:2], [Spec(1.0), Spec(1.0, "cosine")])
check(len(out) == 2, "another schedule keeps a parameter apart")

# FSDP2 (stages 2/3) reduces every micro-step, as the semantics' stage-2/3 order does (docs/semantics.md §9);
# reducing once (no sync until the last micro-step, the stage-0/1 order) rounds a 16-bit wire once where the
# scenario rounds it per micro-step: heavyball seed-31 dp-2 c191 (bf16 wire, gas 8) FAILed 2.67x on AdamW alone.
from adapters.common.model import ScenarioModel, make_batch  # noqa: E402
from adapters.common.parallel import Parallel  # noqa: E402
z2 = copy.deepcopy(BASE)
z2.update(name="z2gas", steps=1)
z2["engine"].update(stage=2, gas=2, micro_batch=1, param_dtype="bf16", comm_dtype="bf16", grad_accum_dtype="bf16")
sz = scenario_file.Scenario(resolved(z2), "<z2gas>")
par = Parallel(ScenarioModel(sz), sz, "fsdp2", torch.device("cpu"))
with par.sync(False):
    par.module(make_batch(sz, 0, 0, torch.device("cpu"), par.compute_dtype)).backward()
check(all(q.grad is not None for q in par.params),
      "FSDP2 gas 2: the first (non-last) micro-step's gradient is already reduced into the sharded grads")

print(f"{len(failures)} failed" if failures else "all checks passed")
sys.exit(1 if failures else 0)
