"""The training loop muoncheck runs for a plain-optimizer plugin (adapters/plugin.py,
OptimizerPlugin): the scenario's model wrapped by its stage (stage 0: DDP, 2/3: FSDP2 —
common/parallel.py), the Muon-tagged params given to the plugin's factory as Muon groups, the rest as
Adam groups; gas with gradient sync on the last micro-step only under DDP, on every one under FSDP2 (common/parallel.py), the schedule's rate set on every
group before each step, clipping by torch's clip_grad_norm_, and after every step the state read
back wherever a rank holds it (the plugin's `state_keys`), the NS calls counted by wrapping the
plugin's `ns_functions`, every collective recorded (common/collectives.py), digests of each rank's
replicated state. What the wrapping cannot express is declined here (`check_wrappable`); what the
optimizer cannot is the plugin's `declines`.
"""
import time

import torch

from .common import optimizer_trace, ranks
from .common import trace as trace_doc
from .common.collectives import CollectiveRecorder
from .common.model import ScenarioModel, make_batch
from .common.ns_counter import NsCounter
from .common.parallel import Parallel, full
from .plugin import Unsupported

CLIP_EPS = 1e-6


def parallelism(s):
    """"ddp" for stage 0, "fsdp2" for stages 2/3 (reshard_after_forward = stage 3)."""
    if s.stage == 0:
        return "ddp"
    if s.stage in (2, 3):
        return "fsdp2"
    raise Unsupported("engine.stage 1: optimizer state sharded with gradients and params whole has no mapping onto "
                      "torch's wrappers (ZeroRedundancyOptimizer wraps one optimizer class, the scenario needs Muon and AdamW)")


def check_wrappable(s, world_size):
    """Declines (Unsupported, the feature before the first ':') what DDP/FSDP2 and this loop cannot
    run as written; returns the parallelism."""
    if s.dp != world_size:
        raise Unsupported(f"engine.dp {s.dp}: this worker has {world_size} process(es)")
    mode = parallelism(s)
    if s.zero_init:
        raise Unsupported("engine.zero_init: FSDP2 builds sharded params from a meta-device model; not mapped")
    if s.per_head:
        raise Unsupported("optimizer.per_head: a plain optimizer orthogonalizes whole matrices")
    if s.clip["max_norm"] > 0 and s.clip["mode"] != "raw_grad":
        raise Unsupported("optimizer.clip.mode update: the loop clips gradients (clip_grad_norm_), not Muon updates")
    if s.param_dtype == "fp16" or s.loss_scaler["type"] != "none":
        raise Unsupported("fp16 / loss_scaler: torch.amp.GradScaler has no hysteresis or min_scale; not mapped")
    if s.overflow:
        raise Unsupported("overflow injections need a loss scaler that skips steps; a plain optimizer has none")
    if s.checkpoint:
        raise Unsupported("checkpoint: the loop does not save and load a plain optimizer's state yet")
    if s.offload_optimizer != "none":
        raise Unsupported(f"engine.offload_optimizer {s.offload_optimizer}: FSDP2's CPUOffloadPolicy is not mapped")
    if s.compile:
        raise Unsupported("engine.compile: a plain optimizer runs eagerly here")
    if mode == "ddp" and (s.grad_accum_dtype != s.param_dtype or s.comm_dtype != s.param_dtype):
        raise Unsupported("DDP accumulates and all-reduces gradients in the param dtype: grad_accum_dtype / "
                          "comm_dtype other than param_dtype are not mapped")
    return mode


def clip_edge(norms, max_norm):
    """The first step whose total norm N has max − 1e-6 < N ≤ max (torch clips, the scenario does not)."""
    for t, n in enumerate(norms):
        if max_norm - CLIP_EPS < n <= max_norm:
            return f"clip norm within 1e-6 below max_norm: step {t} gradient norm {n!r}, max_norm {max_norm}; " \
                   f"torch's clip_grad_norm_ scales by max/(N+1e-6) < 1, the scenario leaves it"
    return None


def _snapshot(t):
    """A copy of the whole tensor in fp32 on the CPU: never the live tensor (an fp32 CPU tensor's
    .float().cpu() is itself, which clipping or the next step would change under the trace)."""
    return full(t.detach()).float().cpu().clone()


def read_state(s, params, opts, keys, grads=False, hook=None):
    """[{weight, momentum | adam_m, adam_v[, grad]}] on rank 0 (None elsewhere), in the scenario's
    order. A state tensor is taken from whichever rank holds it: every rank (replicated; DTensor
    shards are gathered whole), or only some (an optimizer that keeps a param's state on its owner
    rank): then from the lowest rank holding it. Collective. `hook`: the plugin's param_state (state
    `keys` cannot name)."""
    state_of, opt_of = {}, {}
    for opt in opts:
        for p in (q for g in opt.param_groups for q in g["params"]):
            state_of[id(p)], opt_of[id(p)] = opt.state.get(p, {}), opt
    mine, local = [], {}
    for i, (ps, p) in enumerate(zip(s.params, params)):
        entry = {"weight": _snapshot(p)}
        st = state_of.get(id(p), {})
        extra = hook(opt_of[id(p)], p, ps.use_muon) if hook is not None and st else {}
        for field, names in keys.fields(ps.use_muon):
            if torch.is_tensor(extra.get(field)):   # the plugin's own reading (a DTensor: gathered whole)
                if hasattr(extra[field], "full_tensor"):
                    entry[field] = _snapshot(extra[field])
                else:
                    local[(i, field)] = extra[field].detach().float().cpu().clone()
                continue
            key = next((k for k in names if torch.is_tensor(st.get(k))), None)
            if key is None:
                continue
            if hasattr(st[key], "full_tensor"):   # a DTensor exists on every rank: gathered whole
                entry[field] = _snapshot(st[key])
            else:
                local[(i, field)] = st[key].detach().float().cpu().clone()
        if grads and p.grad is not None:   # the step's reduced gradient, before clipping
            entry["grad"] = _snapshot(p.grad)
        mine.append(entry)
    wanted = sorted({k for i, ps in enumerate(s.params) for k in [(i, f) for f, _ in keys.fields(ps.use_muon)]})
    everywhere = ranks.all_ranks_true([k in local for k in wanted])
    missing = [k for k, all_have in zip(wanted, everywhere) if not all_have]
    held = ranks.gather_to_rank0({k: local[k] for k in missing if k in local}) if missing else [{}]
    if ranks.rank() != 0:
        return None
    for (i, field), all_have in zip(wanted, everywhere):
        if all_have:
            mine[i][field] = local[(i, field)]
            continue
        holder = next((r for r in held if (i, field) in r), None)
        if holder is not None:
            mine[i][field] = holder[(i, field)]
    return mine


def as_values(state):
    return [{k: trace_doc.tensor_values(v) for k, v in e.items()} for e in state]


def _since(now, before):
    return {k: n - before.get(k, 0) for k, n in now.items() if n - before.get(k, 0) > 0}


def described(opts, name_of):
    """What the factory built, as JSON (the trace's details; a repro script rebuilds it)."""
    def plain(v):
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        return float(v) if hasattr(v, "item") and getattr(v, "numel", lambda: 0)() == 1 else str(v)
    return [{"class": type(o).__name__, "module": type(o).__module__,
             "defaults": {k: plain(v) for k, v in o.defaults.items()},
             "groups": [{"param": name_of.get(id(g["params"][0]), "?"),
                         **{k: plain(v) for k, v in g.items() if k not in ("params", "lr")}} for g in o.param_groups]}
            for o in opts]


def run(plugin, s, details, device):
    """The trace body on rank 0 (None elsewhere); fills `details` as it goes. Raises Unsupported."""
    mode = check_wrappable(s, ranks.world_size())
    model = ScenarioModel(s).to(device)
    par = Parallel(model, s, mode, device)
    lr = lambda ps, t: (s.lr if ps.use_muon else s.adam["lr"]) * s.lr_factor(ps.name, t)   # noqa: E731
    muon_groups, adam_groups = [], []
    for ps, p in zip(s.params, par.params):
        (muon_groups if ps.use_muon else adam_groups).append({"params": [p], "lr": lr(ps, 0),
                                                             "weight_decay": ps.weight_decay})
    opts = plugin.optimizer(muon_groups, adam_groups, s)
    if not isinstance(opts, (list, tuple)) or not all(hasattr(o, "step") and hasattr(o, "param_groups") for o in opts):
        from .plugin import PluginError
        raise PluginError(f"plugin {plugin.name!r}: optimizer(): expected a list of torch optimizers, got {type(opts).__name__}")
    name_of = {id(p): ps.name for ps, p in zip(s.params, par.params)}
    details["optimizers"] = described(opts, name_of)
    details["lr_by_step"] = [[lr(ps, t) for ps in s.params] for t in range(s.steps)]
    details.update(par.settings)
    group_of = {id(g["params"][0]): (g, ps) for opt in opts for g in opt.param_groups
                for ps, p in zip(s.params, par.params) if g["params"][0] is p}
    named = [(ps.name, p) for ps, p in zip(s.params, par.params)]
    counter = NsCounter(named, muon=[i for i, ps in enumerate(s.params) if ps.use_muon])
    checks = list(plugin.ns_observers()) if hasattr(plugin, "ns_observers") else []
    counter.observers.extend(checks)
    plugin.install_ns_counter(counter, s)   # the default wraps its ns_functions
    where = ["train"]
    recorder = CollectiveRecorder(optimizer_trace.classify(counter, lambda: where[0], getattr(plugin, "ns_scalars", False),
                                                           sharded=mode == "fsdp2", ns_dtype=s.ns_dtype))
    tags = [{"name": p.name, "use_muon": p.use_muon, "num_heads": 0} for p in s.params]
    keys, hook = plugin.state_keys, getattr(plugin, "param_state", None)
    initial = read_state(s, par.params, opts, keys, hook=hook)
    keep = ranks.rank() == 0
    steps, digests = [], []
    details.update({"ns_calls_by_rank": [], "collectives_by_rank": [], "clip_norms": [], "step_seconds": []})
    try:
        for t in range(s.steps):
            counter.reset_step()
            for g, ps in group_of.values():   # the schedule's rate of this step (lr_scale · f(t))
                g["lr"] = lr(ps, t)
            begin, losses = time.perf_counter(), []
            recorder.step, where[0] = t, "train"
            counts_before = dict(recorder.counts)
            for k in range(s.gas):
                recorder.phase = "boundary" if k == s.gas - 1 else "micro_step"
                with recorder, par.sync(k == s.gas - 1):
                    loss = par.module(make_batch(s, t, k, device, par.compute_dtype))
                    (loss / s.gas).backward()
                losses.append(float(loss.detach().float()))
            par.after_backward()
            grads = read_state(s, par.params, opts, keys, grads=True, hook=hook)   # before clipping (it scales in place)
            train_counts, counts_before = _since(recorder.counts, counts_before), dict(recorder.counts)
            where[0] = "step"
            with recorder:
                if s.clip["max_norm"] > 0:
                    where[0] = "clip"   # its reductions are norms (FSDP2: the per-param norms' vector), fp32 scalars
                    n = torch.nn.utils.clip_grad_norm_(par.params, s.clip["max_norm"])
                    details["clip_norms"].append(float(full(n)))
                    where[0] = "step"
                for opt in opts:
                    opt.step()
                for opt in opts:
                    opt.zero_grad(set_to_none=True)
            par.after_step()
            if device.type == "cuda":
                torch.cuda.synchronize()
            details["step_seconds"].append(round(time.perf_counter() - begin, 6))
            state = read_state(s, par.params, opts, keys, hook=hook)
            digests.append(optimizer_trace.replicated_digest(par, opts, optimizer_trace.held_everywhere(par.params, opts)))
            mine = {"ns": [counter.calls.get(i, 0) for i in range(len(named))] + [counter.unattributed],
                    "comm": {"forward_backward": train_counts, "optimizer_step": _since(recorder.counts, counts_before)}}
            per_rank = ranks.gather_to_rank0(mine)
            loss = ranks.mean_over_ranks(sum(losses) / len(losses), device)
            if not keep:
                continue
            for e, g in zip(state, grads):
                if "grad" in g:
                    e["grad"] = g["grad"]
            ns = [r["ns"] for r in per_rank]
            details["ns_calls_by_rank"].append([r[:-1] for r in ns])
            details["collectives_by_rank"].append([r["comm"] for r in per_rank])
            steps.append({"step": t, "skipped": False, "loss": loss, "loss_scale": 1.0, "loss_scale_after": 1.0,
                          "ns_calls": [sum(r[i] for r in ns) for i in range(len(named))],
                          "ns_unattributed": sum(r[-1] for r in ns), "ns_events": optimizer_trace.ns_events(ns),
                          "params": as_values(state)})
    finally:
        counter.uninstall()
    blocks = optimizer_trace.rank_blocks(tags, recorder, digests)
    problems = ranks.gather_to_rank0([p for c in checks for p in getattr(c, "differing", [])])
    dtypes_seen = ranks.gather_to_rank0(sorted(counter.dtypes))
    unrecorded = ranks.gather_to_rank0(dict(recorder.unrecorded))
    if not keep:
        return None
    problems = [d for r in problems for d in r]
    if problems:
        raise Unsupported(f"NS normalization: {len(problems)} NS calls normalize differently in the implementation "
                          f"than in the scenario; {problems[0]}")
    edge = clip_edge(details["clip_norms"], s.clip["max_norm"]) if s.clip["max_norm"] > 0 else None
    if edge:
        raise Unsupported(edge)
    ns_dtypes = sorted({d for r in dtypes_seen for d in r})
    details["collectives_unrecorded_by_rank"] = unrecorded
    details["ranks_agree"] = all(len({b["digests"][t] for b in blocks}) == 1 for t in range(len(digests)))
    dtypes = {"param": s.param_dtype, "grad_accum": "fp32" if mode == "fsdp2" and s.gas > 1 else s.param_dtype,
              "master": "fp32",
              "comm": s.comm_dtype if mode == "fsdp2" else s.param_dtype,
              "ns": {"bfloat16": "bf16", "float32": "fp32", "float16": "fp16"}.get(ns_dtypes[0], ns_dtypes[0])
              if len(ns_dtypes) == 1 else s.ns_dtype}
    return {"dtypes": dtypes, "tags": tags, "initial": as_values(initial), "steps": steps, "ranks": blocks}
