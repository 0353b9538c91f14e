"""A worker speaking the resident protocol (harness/external/worker_process.hpp) for its tests:
hello, then per request line one answer line. {"echo": X} answers {"echo": X}; {"hang": true}
never answers (with "dump_after_s": S, it first arms faulthandler to write its stack to the log
after S seconds, as adapters/common/resident.py does from a request's deadline_s; with "raised": M,
it first logs "muoncheck: rank 1 raised M", as a rank that raised alone does); {"crash": N} exits with status N; {"spawn": true} starts a `sleep` in its own
session (as torchrun starts each rank) and answers {"child": PID}; {"quit": true} ends it.
FAKE_WORKER_FAIL_STARTS=FILE:N: the first N starts (counted in FILE) print 20 numbered lines and exit 1
before connecting. FAKE_WORKER_BIND=1: listen on 127.0.0.1:$MASTER_PORT first, as a rendezvous store
does, and name the port bound in the hello line."""
import faulthandler
import json
import os
import socket
import subprocess
import sys
import time

if os.environ.get("FAKE_WORKER_FAIL_STARTS"):
    counter, failing = os.environ["FAKE_WORKER_FAIL_STARTS"].rsplit(":", 1)
    failed = int(open(counter).read()) if os.path.exists(counter) else 0
    if failed < int(failing):
        open(counter, "w").write(str(failed + 1))
        for k in range(1, 21):
            print(f"fake start failure {failed + 1} line {k}", file=sys.stderr)
        sys.exit(1)
store = None
if os.environ.get("FAKE_WORKER_BIND"):
    store = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    store.bind(("127.0.0.1", int(os.environ["MASTER_PORT"])))   # EADDRINUSE ends the start, as torch's store
    store.listen()
    time.sleep(0.5)   # the others start meanwhile


def hang_in_the_implementation():
    time.sleep(3600)


conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(sys.argv[sys.argv.index("--socket") + 1])
conn.sendall((json.dumps({"hello": "muoncheck-resident/1", "pid": os.getpid(),
                          "env": os.environ.get("FAKE_WORKER_TAG", ""),
                          "port": store.getsockname()[1] if store else None}) + "\n").encode())
for line in conn.makefile("r"):
    request = json.loads(line)
    if request.get("quit"):
        break
    if request.get("hang"):
        if request.get("raised"):
            print(f"muoncheck: rank 1 raised {request['raised']}", file=sys.stderr, flush=True)
        if request.get("dump_after_s"):
            faulthandler.dump_traceback_later(request["dump_after_s"])
        hang_in_the_implementation()
    if "crash" in request:
        os._exit(int(request["crash"]))
    if request.get("spawn"):
        child = subprocess.Popen(["sleep", "600"], start_new_session=True)
        conn.sendall((json.dumps({"child": child.pid}) + "\n").encode())
        continue
    conn.sendall((json.dumps({"echo": request.get("echo")}) + "\n").encode())
