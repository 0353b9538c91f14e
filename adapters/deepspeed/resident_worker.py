"""A long-lived DeepSpeed adapter: one torchrun job that runs scenario after scenario on request.

    python3 -m torch.distributed.run --standalone --nproc-per-node DP \
        adapters/deepspeed/resident_worker.py --socket PATH

Python, DeepSpeed and the process group start once; each request then costs one step loop
(run_deepspeed.run_scenario). The protocol is adapters/common/resident.py's (the hello line names
implementation "deepspeed"); docs/trace-format.md for the trace.
"""
import argparse
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_deepspeed as rd  # noqa: E402  (sets the environment DeepSpeed reads at import)
from adapters.common import fixes, ranks, resident  # noqa: E402  (run_deepspeed put the checkout on sys.path)
from adapters.common import scenario as muoncheck_scenario  # noqa: E402
import torch  # noqa: E402


REGISTRY = fixes.registry_for("deepspeed")


def run_request(request, deepspeed):
    """The trace of one request (rank 0; None elsewhere). Never raises for a scenario's fault. The
    request's known-defect fixes are applied around the case (a fix that does not apply is the
    case's error, FixDoesNotApply: ..., adapters/common/fixes.py)."""
    s = muoncheck_scenario.Scenario(request["scenario"], "<resident request>")
    start = time.time()
    extra = request.get("extra_config")
    try:
        if s.param_dtype == "fp16" and not _accelerator_has_fp16():
            raise rd.Unsupported(f"param_dtype fp16: DeepSpeed's {rd.DEVICE} accelerator has no fp16")
        with fixes.applied(REGISTRY, request.get("fixes")):
            body = rd.run_scenario(s, deepspeed, extra)
        trace = rd.trace_for(s, deepspeed, body=body) if body else None
    except rd.Unsupported as e:
        trace = rd.trace_for(s, deepspeed, unsupported=str(e))
    except Exception as e:   # the case's verdict, not the worker's end
        traceback.print_exc()
        trace = rd.trace_for(s, deepspeed, error=f"{type(e).__name__}: {e}")
    if rd.DEVICE == "cuda":
        torch.cuda.empty_cache()
    if ranks.rank() != 0:
        return None
    if trace is None:
        trace = rd.trace_for(s, deepspeed, error="rank 0 produced no trace")
    trace["implementation"]["details"]["wall_seconds"] = round(time.time() - start, 3)
    details = trace["implementation"]["details"]
    details["adapter"] = "adapters/deepspeed/resident_worker.py"
    details["deepspeed_config"] = rd.merged(rd.ds_config(s), extra)   # what `muoncheck repro` writes out
    if s.per_head and not trace.get("unsupported"):
        details["head_config"] = vars(rd.head_config(s))
    return trace


def _accelerator_has_fp16():
    from deepspeed.accelerator import get_accelerator
    return bool(get_accelerator().is_fp16_supported())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", required=True, help="Unix socket the harness listens on")
    args = ap.parse_args(argv)
    import deepspeed
    if rd.DEVICE == "cuda":
        torch.cuda.set_device(ranks.local_rank())
    deepspeed.init_distributed(dist_backend="nccl" if rd.DEVICE == "cuda" else "gloo")
    hello = {"implementation": "deepspeed", "version": deepspeed.__version__, "world_size": ranks.world_size(),
             "torch": torch.__version__, "device": rd.DEVICE, "fixes": sorted(REGISTRY["defects"])}
    return resident.serve(args.socket, hello, lambda request: run_request(request, deepspeed))


if __name__ == "__main__":
    sys.exit(main())
