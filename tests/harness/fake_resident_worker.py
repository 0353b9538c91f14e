"""A worker speaking the resident protocol (harness/external/worker_process.hpp) for its tests:
hello, then per request line one answer line. {"echo": X} answers {"echo": X}; {"hang": true}
never answers; {"crash": N} exits with status N; {"spawn": true} starts a `sleep` in its own
session (as torchrun starts each rank) and answers {"child": PID}; {"quit": true} ends it."""
import json
import os
import socket
import subprocess
import sys
import time

conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(sys.argv[sys.argv.index("--socket") + 1])
conn.sendall((json.dumps({"hello": "muoncheck-resident/1", "pid": os.getpid(),
                          "env": os.environ.get("FAKE_WORKER_TAG", "")}) + "\n").encode())
for line in conn.makefile("r"):
    request = json.loads(line)
    if request.get("quit"):
        break
    if request.get("hang"):
        time.sleep(3600)
    if "crash" in request:
        os._exit(int(request["crash"]))
    if request.get("spawn"):
        child = subprocess.Popen(["sleep", "600"], start_new_session=True)
        conn.sendall((json.dumps({"child": child.pid}) + "\n").encode())
        continue
    conn.sendall((json.dumps({"echo": request.get("echo")}) + "\n").encode())
