"""A long-lived DeepSpeed adapter: one torchrun job that runs scenario after scenario on request.

    python3 -m torch.distributed.run --standalone --nproc-per-node DP \
        adapters/deepspeed/resident_worker.py --socket PATH

Python, DeepSpeed and the process group start once; each request then costs one step loop
(run_deepspeed.run_scenario). Protocol (harness/external/ is the other end; docs/trace-format.md
for the trace): rank 0 connects to the Unix socket PATH and writes one line
`{"hello": "muoncheck-resident/1", "implementation": "deepspeed", "version": V, "world_size": N}`;
then, per request line `{"scenario": {...}, "extra_config": {...} | null}`, every rank runs the
scenario and rank 0 answers one line: the trace (JSON, with `unsupported` or `error` when the
scenario was declined or raised). A request `{"quit": true}` or the socket's end stops the job.
A case that hangs or kills a rank is the other end's to time out: it kills this job and starts
another; nothing here tries to recover a broken process group.
"""
import argparse
import json
import os
import socket
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_deepspeed as rd  # noqa: E402  (sets the environment DeepSpeed reads at import)
from adapters.common import ranks  # noqa: E402  (run_deepspeed put the checkout on sys.path)
from adapters.common import scenario as muoncheck_scenario  # noqa: E402
from adapters.common import trace as trace_io  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

PROTOCOL = "muoncheck-resident/1"


def broadcast_line(line):
    """Rank 0's request line on every rank (collective)."""
    if ranks.world_size() == 1:
        return line
    box = [line]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def run_request(request, deepspeed):
    """The trace of one request (rank 0; None elsewhere). Never raises for a scenario's fault."""
    s = muoncheck_scenario.Scenario(request["scenario"], "<resident request>")
    start = time.time()
    extra = request.get("extra_config")
    try:
        if s.param_dtype == "fp16" and not _accelerator_has_fp16():
            raise rd.Unsupported(f"param_dtype fp16: DeepSpeed's {rd.DEVICE} accelerator has no fp16")
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
    conn = reader = None
    if ranks.rank() == 0:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(args.socket)
        reader = conn.makefile("r", encoding="utf-8", newline="\n")
        hello = {"hello": PROTOCOL, "implementation": "deepspeed", "version": deepspeed.__version__,
                 "world_size": ranks.world_size(), "torch": torch.__version__, "device": rd.DEVICE}
        conn.sendall((json.dumps(hello) + "\n").encode())
    while True:
        line = broadcast_line(reader.readline() if reader else None)
        if not line:
            return 0
        request = json.loads(line)
        if request.get("quit"):
            return 0
        trace = run_request(request, deepspeed)
        if conn is not None:
            conn.sendall((trace_io.dumps(trace) + "\n").encode())


if __name__ == "__main__":
    sys.exit(main())
