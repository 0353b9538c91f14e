"""Runs muoncheck scenarios through torch.optim.Muon + torch.optim.AdamW under DDP or FSDP2 and
writes one trace each (docs/trace-format.md) for `muoncheck verify`.

    python -m adapters.torch.run --out DIR SCENARIO.json...                 (dp 1, from the checkout)
    torchrun --nproc-per-node 2 -m adapters.torch.run --out DIR SCENARIO.json...    (dp 2)

One process per rank; a scenario runs when its `engine.dp` is the world size (else it is declined).
The device is CPU over gloo unless MUONCHECK_DEVICE=cuda (NCCL, one GPU per rank). The Muon-tagged
params (SPEC §3, as `muoncheck resolve` tags them) go to torch.optim.Muon, the rest to AdamW, through
an optimizer factory (optimizers.py; --optimizer-factory module:attr for another). State after
every step is read from the optimizers' own state (FSDP2: the DTensor shards gathered); NS calls
are counted by wrapping torch.optim._muon._zeropower_via_newtonschulz; each step's collectives (counted
by a dispatch mode, common/collectives.py) and each rank's digest of its full state go in
`implementation.details`.
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
from ..common.collectives import CollectiveCounter  # noqa: E402
from ..common.model import ScenarioModel, make_batch  # noqa: E402
from ..common.ns_counter import NsCounter  # noqa: E402
from . import optimizers, semantics  # noqa: E402
from .parallel import Parallel, full  # noqa: E402

DEVICE = os.environ.get("MUONCHECK_DEVICE", "cpu")
_STATE_KEYS = {True: [("momentum_buffer", "momentum")], False: [("exp_avg", "adam_m"), ("exp_avg_sq", "adam_v")]}


def read_state(s, par, opts):
    """[{weight, momentum | adam_m, adam_v}] on every rank, in the scenario's order. Collective."""
    state_of = {}
    for opt in opts:
        for p in (q for g in opt.param_groups for q in g["params"]):
            state_of[id(p)] = opt.state.get(p, {})
    out = []
    for ps, p in zip(s.params, par.params):
        entry = {"weight": full(p.detach()).float().cpu()}
        st = state_of.get(id(p), {})
        for key, field in _STATE_KEYS[ps.use_muon]:
            if key in st:
                entry[field] = full(st[key]).float().cpu()
        out.append(entry)
    return out


def as_values(state):
    return [{k: trace_doc.tensor_values(v) for k, v in e.items()} for e in state]


def run_scenario(s, factory):
    mode = semantics.check_runnable(s, ranks.world_size())
    device = torch.device("cuda", ranks.local_rank()) if DEVICE == "cuda" else torch.device("cpu")
    model = ScenarioModel(s).to(device)
    if sorted(n for n, _ in model.named_parameters()) != sorted(p.name for p in s.params):
        raise RuntimeError("the module's parameter names differ from the scenario's")
    par = Parallel(model, s, mode, device)
    muon_groups, adam_groups = [], []
    for ps, p in zip(s.params, par.params):
        lr = (s.lr if ps.use_muon else s.adam["lr"]) * ps.lr_scale
        (muon_groups if ps.use_muon else adam_groups).append({"params": [p], "lr": lr, "weight_decay": ps.weight_decay})
    opts = factory(muon_groups, adam_groups, s)
    named = [(ps.name, p) for ps, p in zip(s.params, par.params)]
    counter = NsCounter(named)
    norm_check = semantics.NormCheck()
    counter.observers.append(norm_check)
    import torch.optim._muon as muon_module
    counter.install(muon_module, ("_zeropower_via_newtonschulz",))
    tags = [{"name": p.name, "use_muon": p.use_muon, "num_heads": 0} for p in s.params]
    initial = read_state(s, par, opts)
    keep = ranks.rank() == 0
    steps, details = [], {"ns_calls_by_rank": [], "collectives_by_rank": [], "digests_by_rank": [],
                          "clip_norms": [], "step_seconds": []}
    try:
        for t in range(s.steps):
            counter.reset_step()
            begin, losses = time.perf_counter(), []
            with CollectiveCounter() as fwd_bwd:
                for k in range(s.gas):
                    with par.sync(k == s.gas - 1):
                        loss = par.module(make_batch(s, t, k, device, par.compute_dtype))
                        (loss / s.gas).backward()
                    losses.append(float(loss.detach().float()))
            par.after_backward()
            with CollectiveCounter() as opt_step:
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
            mine = {"ns": [counter.calls.get(i, 0) for i in range(len(named))] + [counter.unattributed],
                    "comm": {"forward_backward": dict(fwd_bwd.counts), "optimizer_step": dict(opt_step.counts)},
                    "digest": trace_doc.digest([v for e in state for v in e.values()])}
            per_rank = ranks.gather_to_rank0(mine)
            loss = ranks.mean_over_ranks(sum(losses) / len(losses), device)
            if not keep:
                continue
            ns = [r["ns"] for r in per_rank]
            details["ns_calls_by_rank"].append([r[:-1] for r in ns])
            details["collectives_by_rank"].append([r["comm"] for r in per_rank])
            details["digests_by_rank"].append([r["digest"] for r in per_rank])
            steps.append({"step": t, "skipped": False, "loss": loss, "loss_scale": 1.0, "loss_scale_after": 1.0,
                          "ns_calls": [sum(r[i] for r in ns) for i in range(len(named))],
                          "ns_unattributed": sum(r[-1] for r in ns), "params": as_values(state)})
    finally:
        counter.uninstall()
    differing = ranks.gather_to_rank0(norm_check.differing)
    dtypes_seen = ranks.gather_to_rank0(sorted(counter.dtypes))
    if not keep:
        return None
    problems = [d for r in differing for d in r]
    if problems:
        raise semantics.Unsupported(f"{len(problems)} of {norm_check.calls} NS calls on rank 0 normalize differently "
                                    f"under torch's clamp(min=eps) than the scenario's + 1e-7: {problems[0]}")
    edge = semantics.clip_edge(details["clip_norms"], s.clip["max_norm"]) if s.clip["max_norm"] > 0 else None
    if edge:
        raise semantics.Unsupported(edge)
    ns_dtypes = sorted({d for r in dtypes_seen for d in r})
    details["ranks_agree"] = all(len(set(d)) == 1 for d in details["digests_by_rank"])
    details["ns_norm_checked_calls"] = norm_check.calls
    details.update(par.settings)
    dtypes = {"param": s.param_dtype, "grad_accum": s.param_dtype, "master": "fp32",
              "comm": s.comm_dtype if mode == "fsdp2" else s.param_dtype,
              "ns": {"bfloat16": "bf16", "float32": "fp32"}.get(ns_dtypes[0], ns_dtypes[0]) if len(ns_dtypes) == 1 else "bf16"}
    body = {"dtypes": dtypes, "tags": tags, "initial": as_values(initial), "steps": steps}
    return body, details


def header_details():
    return {"torch": torch.__version__, "device": torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu",
            "backend": "nccl" if DEVICE == "cuda" else "gloo", "world_size": ranks.world_size(),
            "nccl": ranks.nccl_version() if DEVICE == "cuda" else None, "adapter": "adapters/torch/run.py"}


def run_file(path, factory, factory_name, out_dir):
    s = scenario_file.load(path)
    start = time.time()
    details, body, unsupported, error = header_details(), None, None, None
    details["optimizer_factory"] = factory_name
    try:
        result = run_scenario(s, factory)
        if result:
            body, more = result
            details.update(more)
        status = "ran"
    except semantics.Unsupported as e:
        unsupported, status = str(e), "UNSUPPORTED: " + str(e)
    except Exception as e:   # a crash is a verdict about the implementation, and must not lose the others
        import traceback
        traceback.print_exc()
        error, status = f"{type(e).__name__}: {e}", f"ERROR: {type(e).__name__}: {e}"
    if ranks.rank() != 0:
        return error is None
    details["wall_seconds"] = round(time.time() - start, 2)
    trace = trace_doc.document(s, "torch.optim.Muon", torch.__version__, details, body=body,
                               unsupported=unsupported, error=error)
    out = os.path.join(out_dir, f"{s.name}.trace.json")
    trace_doc.write(trace, out)
    print(f"{s.name}: {status} in {time.time() - start:.1f} s -> {out}", flush=True)
    return error is None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenarios", nargs="+", help="scenario files (or files written by `muoncheck resolve`)")
    ap.add_argument("--out", required=True, help="folder the traces go to (<scenario>.trace.json)")
    ap.add_argument("--optimizer-factory", default="adapters.torch.optimizers:torch_muon",
                    help="module:attribute of the factory (see optimizers.py)")
    args = ap.parse_args(argv)
    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                       ("MASTER_PORT", os.environ.get("MUONCHECK_PORT", "29541"))):   # torchrun sets these
        os.environ.setdefault(key, value)
    factory = optimizers.load_factory(args.optimizer_factory)
    if DEVICE == "cuda":
        torch.cuda.set_device(ranks.local_rank())
    dist.init_process_group("nccl" if DEVICE == "cuda" else "gloo")
    os.makedirs(args.out, exist_ok=True)
    try:
        ok = [run_file(p, factory, args.optimizer_factory, args.out) for p in args.scenarios]
    finally:
        dist.destroy_process_group()
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
