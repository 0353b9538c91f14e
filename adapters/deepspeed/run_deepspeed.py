"""Runs muoncheck scenarios through DeepSpeed's own Muon under ZeRO and writes one trace each.

    python3 adapters/deepspeed/run_deepspeed.py --out DIR SCENARIO.json...

The model is a tree of nn.Modules whose parameters carry the scenario's names and layer shapes
(adapters/common/model.py), so DeepSpeed's tagging reads real names; under `engine.zero_init` it is
built inside `deepspeed.zero.Init`. Each leaf computes the loss of docs/semantics.md §2 of its parameters with torch
ops on the data of docs/semantics.md §1, so DeepSpeed's backward makes the gradients. The engine is configured from
the scenario (engine_config.py) and run with its watchers (engine_run.py): NS calls counted by
wrapping DeepSpeed's Newton–Schulz functions (adapters/common/ns_counter.py), the /2 collective
log, digests and scaler counters (trace_v2.py). After every step the fp32 master weights (and the
Muon momentum and Adam moments where DeepSpeed exposes them) are read back (state_readback.py). A
checkpoint scenario goes through DeepSpeed's save/load (checkpoint_cycle.py).

One process per GPU: a scenario with `engine.dp` N runs under `torchrun --nproc-per-node N`
(scripts/deepspeed-run.sh groups the scenarios by dp); rank r feeds the samples (docs/semantics.md §2) of rank r, and
rank 0 writes the one merged trace (NS calls summed over ranks, state fragments gathered from
every rank, state_readback.py). Trace format: docs/trace-format.md (/2; --repeat writes a second
run for the deterministic invariant).
"""
import argparse
import os
import sys
import time

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")   # see adapters/common/ns_counter.py
# MUONCHECK_DEVICE=cpu runs DeepSpeed's CPU accelerator over gloo (a smoke test without a GPU).
DEVICE = os.environ.get("MUONCHECK_DEVICE", "cuda")
if DEVICE == "cpu":
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29533")):   # torchrun sets these for dp > 1
    os.environ.setdefault(key, value)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))   # the checkout
import torch  # noqa: E402

from adapters.common import ranks  # noqa: E402
from adapters.common import scenario as muoncheck_scenario  # noqa: E402
from adapters.common import trace as trace_io  # noqa: E402
import checkpoint_cycle  # noqa: E402
import ds_coverage  # noqa: E402
from engine_config import (Unsupported, check_runnable, ds_config, extra_config_for,  # noqa: E402,F401
                           head_config, merged)   # the resident worker calls these through this module
from engine_run import Run  # noqa: E402
from adapters.common.state_fields import exported_alike, zero_before_created  # noqa: E402

TRACE_FORMAT = trace_io.TRACE_FORMAT
_DTYPE_NAME = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
PhaseDone = checkpoint_cycle.PhaseDone


def run_scenario(s, deepspeed, extra_config, phase=None):
    """(body, details) of the trace on rank 0, None elsewhere. `phase`: this launch's half of a
    checkpoint scenario resuming at another dp (save: raises PhaseDone)."""
    cross_dp = bool(s.checkpoint) and s.resumed().dp != s.dp
    if cross_dp and phase is None:
        raise Unsupported(f"checkpoint.resume.dp {s.resumed().dp}: another process world; run it as two launches, "
                          "--checkpoint-phase save then resume (scripts/deepspeed-run-cpu.sh does)")
    check_runnable(s.resumed() if cross_dp and phase == "resume" else s, deepspeed)
    device = torch.device("cuda", ranks.local_rank()) if DEVICE == "cuda" else torch.device("cpu")
    if cross_dp and phase == "save":
        checkpoint_cycle.save_phase(s, deepspeed, extra_config, device)
    if cross_dp:
        done = checkpoint_cycle.resume_phase(s, deepspeed, extra_config, device)
        return trace_body(s, *done, extra_config) if done else None
    run = Run(s, deepspeed, extra_config, device)
    details = None
    try:
        initial = run.read_state()
        if s.checkpoint:
            steps, run, details = checkpoint_cycle.cycle(s, deepspeed, extra_config, device, run)
        else:
            steps = run.train(0, s.steps)
    finally:
        summary = run.close()
    if ranks.rank() != 0:
        return None
    return trace_body(s, run, summary, initial, steps, details, extra_config)


def trace_body(s, run, summary, initial, steps, checkpoint_details, extra_config):
    tags = run.tags
    if checkpoint_details:
        exported_alike(initial, steps)
    else:
        zero_before_created(initial, steps)
    ns_dtype = sorted({d for ds in summary["dtypes"] for d in ds})
    dtypes = {"param": s.param_dtype, "grad_accum": s.grad_accum_dtype, "comm": s.comm_dtype, "master": "fp32",
              "ns": _DTYPE_NAME.get(ns_dtype[0], ns_dtype[0]) if len(ns_dtype) == 1 else
              ("fp16" if s.ns_method == "gram" else "bf16")}
    for heads in summary["heads"]:
        for i, h in heads.items():
            tags[i]["ns_heads_seen"] = h
    details = {"world_size": ranks.world_size(), "step_seconds": [round(x, 6) for x in run.step_seconds],
               "lr_by_group": run.lrs,
               "ns_calls_by_rank": [[r[:-1] for r in step] for step in run.calls_by_rank],
               "muon_gathers_by_rank": summary["gathers"]}
    if extra_config:
        details["deepspeed_config_extra"] = extra_config
    if checkpoint_details:
        details["checkpoint"] = checkpoint_details
    return {"dtypes": dtypes, "tags": tags, "initial": initial, "steps": steps, "ranks": summary["ranks"]}, details


def compile_state():
    import torch._dynamo
    return "disabled (TORCH_COMPILE_DISABLE=1)" if torch._dynamo.config.disable else "enabled"


def trace_for(s, deepspeed, body=None, unsupported=None, error=None):
    trace = {"format": TRACE_FORMAT,
             "implementation": {"name": "deepspeed", "version": deepspeed.__version__,
                                "details": {"torch": torch.__version__,
                                            "device": torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu",
                                            "gpus": torch.cuda.device_count() if DEVICE == "cuda" else 0,
                                            "nccl": ranks.nccl_version() if DEVICE == "cuda" else None,
                                            "adapter": "adapters/deepspeed/run_deepspeed.py",
                                            "torch_compile": compile_state()}},
             "scenario": {"name": s.name, "json": s.raw}}
    if unsupported:
        trace["unsupported"] = unsupported
    if error:
        trace["error"] = error
    if body:
        trace.update(body[0])
        trace["implementation"]["details"].update(body[1])
    return trace


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--out", required=True, help="folder the traces go to (<scenario>.trace.json)")
    ap.add_argument("--repeat", action="store_true",
                    help="run each scenario a second time as well: <scenario>.repeat1.trace.json, \"repeat\": 1 "
                         "(the run muoncheck's deterministic invariant compares against)")
    ap.add_argument("--checkpoint-phase", choices=("save", "resume"),
                    help="a checkpoint scenario resuming at another dp: this launch's half (save at dp, resume at "
                         "resume.dp); the trace is written by the resume launch")
    args = ap.parse_args(argv)
    ds_coverage.start()   # before deepspeed is imported (MUONCHECK_COVERAGE=DIR, else nothing)
    try:
        return run_all(args)
    finally:
        ds_coverage.stop()
        # every rank saved its coverage before any exits: torchrun ends the others when one fails
        if torch.distributed.is_initialized():
            torch.distributed.barrier()


def run_all(args):
    import deepspeed
    if DEVICE == "cuda":
        torch.cuda.set_device(ranks.local_rank())
    deepspeed.init_distributed(dist_backend="nccl" if DEVICE == "cuda" else "gloo")
    os.makedirs(args.out, exist_ok=True)
    failures = 0
    runs = [(path, repeat) for path in args.scenarios for repeat in ((0, 1) if args.repeat else (0,))]
    for path, repeat in runs:
        s = muoncheck_scenario.load(path)
        start = time.time()
        try:
            body = run_scenario(s, deepspeed, extra_config_for(path), args.checkpoint_phase)
            trace, status = (trace_for(s, deepspeed, body=body) if body else None), "ran"
        except PhaseDone as e:
            trace, status = None, str(e)
            if ranks.rank() == 0:
                print(f"{s.name}: {status}", flush=True)
        except Unsupported as e:
            trace, status = trace_for(s, deepspeed, unsupported=str(e)), "UNSUPPORTED: " + str(e)
        except Exception as e:   # one scenario's crash must not lose the others' traces
            import traceback
            traceback.print_exc()
            trace, status = trace_for(s, deepspeed, error=f"{type(e).__name__}: {e}"), f"ERROR: {e}"
            failures += 1
        if ranks.rank() == 0 and trace is not None:
            trace["implementation"]["details"]["wall_seconds"] = round(time.time() - start, 2)
            if repeat:
                trace["repeat"] = repeat
            out = os.path.join(args.out, f"{s.name}{'.repeat1' if repeat else ''}.trace.json")
            trace_io.write(trace, out)
            print(f"{s.name}: {status} in {time.time() - start:.1f} s -> {out}", flush=True)
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
