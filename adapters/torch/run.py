"""Runs muoncheck scenarios through torch.optim.Muon + torch.optim.AdamW under DDP or FSDP2 and
writes one trace each (docs/trace-format.md) for `muoncheck verify`.

    python -m adapters.torch.run --out DIR SCENARIO.json...                 (dp 1, from the checkout)
    torchrun --nproc-per-node 2 -m adapters.torch.run --out DIR SCENARIO.json...    (dp 2)

One process per rank; a scenario runs when its `engine.dp` is the world size (else it is declined).
The device is CPU over gloo unless MUONCHECK_DEVICE=cuda (NCCL, one GPU per rank). The Muon-tagged
params (docs/semantics.md §3, as `muoncheck resolve` tags them) go to torch.optim.Muon, the rest to AdamW, through
an optimizer factory (optimizers.py; --optimizer-factory module:attr for another). State after
every step (and the step's reduced gradient) is read from the optimizers' own state (FSDP2: the
DTensor shards gathered); NS calls are counted by wrapping
torch.optim._muon._zeropower_via_newtonschulz; the trace is format /2 (trace_v2.py): every rank's
collectives (recorded by a dispatch mode, common/collectives.py), its digests of its replicated
state, the NS calls as events. `--repeat` runs each scenario twice (the deterministic invariant).
"""
import argparse
import os
import sys
import time

if __package__ in (None, ""):   # run as a file: import the package from the checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    __package__ = "adapters.torch"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from ..common import ranks  # noqa: E402
from ..common import scenario as scenario_file  # noqa: E402
from ..common import trace as trace_doc  # noqa: E402
from ..common.collectives import CollectiveRecorder  # noqa: E402
from ..common.model import ScenarioModel, make_batch  # noqa: E402
from ..common.ns_counter import NsCounter  # noqa: E402
from . import optimizers, semantics, trace_v2  # noqa: E402
from .parallel import Parallel, full  # noqa: E402

DEVICE = os.environ.get("MUONCHECK_DEVICE", "cpu")
_STATE_KEYS = {True: [("momentum_buffer", "momentum")], False: [("exp_avg", "adam_m"), ("exp_avg_sq", "adam_v")]}


def read_state(s, par, opts, grads=False):
    """[{weight, momentum | adam_m, adam_v[, grad]}] on every rank, in the scenario's order. Collective."""
    state_of = {}
    for opt in opts:
        for p in (q for g in opt.param_groups for q in g["params"]):
            state_of[id(p)] = opt.state.get(p, {})
    out = []
    for ps, p in zip(s.params, par.params):
        entry = {"weight": _snapshot(p)}
        st = state_of.get(id(p), {})
        for key, field in _STATE_KEYS[ps.use_muon]:
            if key in st:
                entry[field] = _snapshot(st[key])
        if grads and p.grad is not None:   # the step's reduced gradient, before clipping
            entry["grad"] = _snapshot(p.grad)
        out.append(entry)
    return out


def _snapshot(t):
    """A copy of the whole tensor in fp32 on the CPU: never the live tensor (an fp32 CPU tensor's
    .float().cpu() is itself, which clipping or the next step would change under the trace)."""
    return full(t.detach()).float().cpu().clone()


def as_values(state):
    return [{k: trace_doc.tensor_values(v) for k, v in e.items()} for e in state]


def run_scenario(s, factory, details):
    """The trace's body on rank 0, None elsewhere; fills `details` as it goes (what the optimizers
    and the parallelism are is there even when torch raises later: `muoncheck repro` rebuilds the
    case from it). Raises semantics.Unsupported."""
    mode = semantics.check_runnable(s, ranks.world_size())
    device = torch.device("cuda", ranks.local_rank()) if DEVICE == "cuda" else torch.device("cpu")
    model = ScenarioModel(s).to(device)
    if sorted(n for n, _ in model.named_parameters()) != sorted(p.name for p in s.params):
        raise RuntimeError("the module's parameter names differ from the scenario's")
    par = Parallel(model, s, mode, device)
    muon_groups, adam_groups = [], []
    for ps, p in zip(s.params, par.params):
        (muon_groups if ps.use_muon else adam_groups).append({"params": [p], "lr": _lr(s, ps, 0),
                                                             "weight_decay": ps.weight_decay})
    opts = factory(muon_groups, adam_groups, s)
    details["optimizers"] = optimizers.described(opts, {id(p): ps.name for ps, p in zip(s.params, par.params)})
    details["lr_by_step"] = [[_lr(s, ps, t) for ps in s.params] for t in range(s.steps)]
    details.update(par.settings)
    group_of = {id(g["params"][0]): (g, ps) for opt in opts for g in opt.param_groups
                for ps, p in zip(s.params, par.params) if g["params"][0] is p}
    named = [(ps.name, p) for ps, p in zip(s.params, par.params)]
    counter = NsCounter(named)
    norm_check = semantics.NormCheck()
    counter.observers.append(norm_check)
    import torch.optim._muon as muon_module
    counter.install(muon_module, ("_zeropower_via_newtonschulz",))
    where = ["train"]
    recorder = CollectiveRecorder(trace_v2.classify(counter, lambda: where[0]))
    tags = [{"name": p.name, "use_muon": p.use_muon, "num_heads": 0} for p in s.params]
    initial = read_state(s, par, opts)
    keep = ranks.rank() == 0
    steps, digests = [], []
    details.update({"ns_calls_by_rank": [], "collectives_by_rank": [], "clip_norms": [], "step_seconds": []})
    try:
        for t in range(s.steps):
            counter.reset_step()
            for g, ps in group_of.values():   # the schedule's rate of this step (lr_scale · f(t))
                g["lr"] = _lr(s, ps, t)
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
            grads = read_state(s, par, opts, grads=True)   # before clipping (it scales in place)
            train_counts, counts_before = _since(recorder.counts, counts_before), dict(recorder.counts)
            where[0] = "step"
            with recorder:
                if s.clip["max_norm"] > 0:
                    n = torch.nn.utils.clip_grad_norm_(par.params, s.clip["max_norm"])
                    details["clip_norms"].append(float(full(n)))
                for opt in opts:
                    opt.step()
                for opt in opts:
                    opt.zero_grad(set_to_none=True)
            par.after_step()
            if DEVICE == "cuda":
                torch.cuda.synchronize()
            details["step_seconds"].append(round(time.perf_counter() - begin, 6))
            state = read_state(s, par, opts)
            for e, g in zip(state, grads):
                if "grad" in g:
                    e["grad"] = g["grad"]
            digests.append(trace_v2.replicated_digest(par, opts))
            mine = {"ns": [counter.calls.get(i, 0) for i in range(len(named))] + [counter.unattributed],
                    "comm": {"forward_backward": train_counts, "optimizer_step": _since(recorder.counts, counts_before)}}
            per_rank = ranks.gather_to_rank0(mine)
            loss = ranks.mean_over_ranks(sum(losses) / len(losses), device)
            if not keep:
                continue
            ns = [r["ns"] for r in per_rank]
            details["ns_calls_by_rank"].append([r[:-1] for r in ns])
            details["collectives_by_rank"].append([r["comm"] for r in per_rank])
            steps.append({"step": t, "skipped": False, "loss": loss, "loss_scale": 1.0, "loss_scale_after": 1.0,
                          "ns_calls": [sum(r[i] for r in ns) for i in range(len(named))],
                          "ns_unattributed": sum(r[-1] for r in ns), "ns_events": trace_v2.ns_events(ns),
                          "params": as_values(state)})
    finally:
        counter.uninstall()
    blocks = trace_v2.rank_blocks(tags, recorder, digests)
    differing = ranks.gather_to_rank0(norm_check.differing)
    dtypes_seen = ranks.gather_to_rank0(sorted(counter.dtypes))
    unrecorded = ranks.gather_to_rank0(dict(recorder.unrecorded))
    if not keep:
        return None
    problems = [d for r in differing for d in r]
    if problems:
        raise semantics.Unsupported(f"NS normalization clamp(min=eps) vs + 1e-7: {len(problems)} of {norm_check.calls} "
                                    f"NS calls normalize differently in torch than in the scenario; {problems[0]}")
    edge = semantics.clip_edge(details["clip_norms"], s.clip["max_norm"]) if s.clip["max_norm"] > 0 else None
    if edge:
        raise semantics.Unsupported(edge)
    ns_dtypes = sorted({d for r in dtypes_seen for d in r})
    details["collectives_unrecorded_by_rank"] = unrecorded
    details["ranks_agree"] = all(len({b["digests"][t] for b in blocks}) == 1 for t in range(len(digests)))
    details["ns_norm_checked_calls"] = norm_check.calls
    dtypes = {"param": s.param_dtype, "grad_accum": s.comm_dtype if mode == "fsdp2" and s.gas > 1 else s.param_dtype,
              "master": "fp32",
              "comm": s.comm_dtype if mode == "fsdp2" else s.param_dtype,
              "ns": {"bfloat16": "bf16", "float32": "fp32"}.get(ns_dtypes[0], ns_dtypes[0]) if len(ns_dtypes) == 1 else "bf16"}
    return {"dtypes": dtypes, "tags": tags, "initial": as_values(initial), "steps": steps, "ranks": blocks}


def _lr(s, ps, t):
    return (s.lr if ps.use_muon else s.adam["lr"]) * s.lr_factor(ps.name, t)


def _since(now, before):
    """The op counts added since `before` (a snapshot of recorder.counts)."""
    return {k: n - before.get(k, 0) for k, n in now.items() if n - before.get(k, 0) > 0}


def header_details(factory_name):
    return {"torch": torch.__version__, "device": torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu",
            "backend": "nccl" if DEVICE == "cuda" else "gloo", "world_size": ranks.world_size(),
            "nccl": ranks.nccl_version() if DEVICE == "cuda" else None, "adapter": "adapters/torch/run.py",
            "optimizer_factory": factory_name}


def trace_of(s, factory, factory_name, repeat=0):
    """(trace on rank 0 — None elsewhere, status line, whether it ran without error). Never raises
    for the scenario: a decline is `unsupported`, a crash `error` (a verdict about torch)."""
    start = time.time()
    details, body, unsupported, error = header_details(factory_name), None, None, None
    try:
        body = run_scenario(s, factory, details)
        status = "ran"
    except semantics.Unsupported as e:
        unsupported, status = str(e), "UNSUPPORTED: " + str(e)
    except Exception as e:   # a crash is a verdict about the implementation, and must not lose the others
        import traceback
        traceback.print_exc()
        error, status = f"{type(e).__name__}: {e}", f"ERROR: {type(e).__name__}: {e}"
    if DEVICE == "cuda":
        torch.cuda.empty_cache()
    if ranks.rank() != 0:
        return None, status, error is None
    details["wall_seconds"] = round(time.time() - start, 2)
    trace = trace_doc.document(s, "torch.optim.Muon", torch.__version__, details, body=body,
                               unsupported=unsupported, error=error, repeat=repeat)
    return trace, status, error is None


def run_file(path, factory, factory_name, out_dir, repeat=0):
    s = scenario_file.load(path)
    start = time.time()
    trace, status, ok = trace_of(s, factory, factory_name, repeat)
    if trace is not None:
        out = os.path.join(out_dir, f"{s.name}{'.repeat1' if repeat else ''}.trace.json")
        trace_doc.write(trace, out)
        print(f"{s.name}{' (repeat)' if repeat else ''}: {status} in {time.time() - start:.1f} s -> {out}", flush=True)
    return ok


def init_process_group():
    """gloo on CPU, NCCL on CUDA (one GPU per rank); a launch without torchrun is rank 0 of 1."""
    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                       ("MASTER_PORT", os.environ.get("MUONCHECK_PORT", "29541"))):   # torchrun sets these
        os.environ.setdefault(key, value)
    if DEVICE == "cuda":
        torch.cuda.set_device(ranks.local_rank())
    dist.init_process_group("nccl" if DEVICE == "cuda" else "gloo")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenarios", nargs="+", help="scenario files (or files written by `muoncheck resolve`)")
    ap.add_argument("--out", required=True, help="folder the traces go to (<scenario>.trace.json)")
    ap.add_argument("--optimizer-factory", default="adapters.torch.optimizers:torch_muon",
                    help="module:attribute of the factory (see optimizers.py)")
    ap.add_argument("--repeat", action="store_true",
                    help="run each scenario a second time as well: <scenario>.repeat1.trace.json, \"repeat\": 1 "
                         "(the run muoncheck's deterministic invariant compares against)")
    args = ap.parse_args(argv)
    factory = optimizers.load_factory(args.optimizer_factory)
    init_process_group()
    os.makedirs(args.out, exist_ok=True)
    try:
        ok = [run_file(p, factory, args.optimizer_factory, args.out, repeat)
              for p in args.scenarios for repeat in ((0, 1) if args.repeat else (0,))]
    finally:
        dist.destroy_process_group()
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
