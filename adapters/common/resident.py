"""The resident-worker protocol's adapter side (harness/external/ is the other end): one torchrun
job that runs scenario after scenario on request, so Python, the implementation and the process
group start once.

Rank 0 connects to the Unix socket PATH and writes one hello line
`{"hello": "muoncheck-resident/1", "implementation": ..., "version": V, "world_size": N, ...}`;
then, per request line `{"scenario": {...}, "extra_config": {...} | null}` (the scenario as
`muoncheck resolve` writes it), every rank runs the scenario and rank 0 answers one line: the
trace (JSON, with `unsupported` or `error` when the scenario was declined or raised). A request
`{"quit": true}` or the socket's end stops the job. A case that hangs or kills a rank is the other
end's to time out: it kills this job and starts another; nothing here tries to recover a broken
process group. A request's `deadline_s` (how long the other end waits) arms faulthandler on every
rank to write its stack to stderr (the worker's log) STACK_DUMP_LEAD_S before it, so the hang's
ERROR can say where each rank was stuck (harness/external/stack_dump.hpp).
"""
import faulthandler
import json
import socket

import torch.distributed as dist

from . import ranks
from . import trace as trace_io

PROTOCOL = "muoncheck-resident/1"
STACK_DUMP_LEAD_S = 3.0


def broadcast_line(line):
    """Rank 0's request line on every rank (collective)."""
    if ranks.world_size() == 1:
        return line
    box = [line]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def serve(socket_path, hello, answer, protocol=PROTOCOL):
    """Runs the request loop: `hello` (a dict, sent by rank 0 with the protocol name), then for each
    request `answer(request)` on every rank — the answer (a trace, or a /2 map answer) on rank 0,
    ignored elsewhere. Returns 0."""
    conn = reader = None
    if ranks.rank() == 0:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(socket_path)
        reader = conn.makefile("r", encoding="utf-8", newline="\n")
        conn.sendall((json.dumps({"hello": protocol, **hello}) + "\n").encode())
    while True:
        line = broadcast_line(reader.readline() if reader else None)
        if not line:
            return 0
        request = json.loads(line)
        if request.get("quit"):
            return 0
        if request.get("deadline_s"):   # a hang leaves every rank's stack in the log for the case's ERROR
            # staggered by rank, so that the ranks' dumps do not interleave in the one log
            faulthandler.dump_traceback_later(max(1.0, float(request["deadline_s"]) - STACK_DUMP_LEAD_S - 0.1 * ranks.rank()))
        try:
            trace = answer(request)
        finally:
            faulthandler.cancel_dump_traceback_later()
        if conn is not None:
            conn.sendall((trace_io.dumps(trace) + "\n").encode())
