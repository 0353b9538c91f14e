"""A request's deadline_s arms every rank to write its Python stack to the worker's log shortly
before muoncheck gives up on the answer (adapters/common/resident.py), so a hang's ERROR can say
where it was stuck; a request without one dumps nothing, and an answer in time cancels the dump."""
import json
import os
import socket
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKER = textwrap.dedent("""
    import sys, time
    from adapters.common import resident

    def slow_answer(request):
        time.sleep(request["sleep"])
        return {"slept": request["sleep"]}

    sys.exit(resident.serve(sys.argv[1], {"implementation": "demo"}, slow_answer))
""")


def serve_requests(tmp_path, requests):
    path = str(tmp_path / "sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    worker = subprocess.Popen([sys.executable, "-c", WORKER, path], env=env, stderr=subprocess.PIPE, text=True)
    conn, _ = listener.accept()
    lines = conn.makefile("r")
    assert json.loads(lines.readline())["implementation"] == "demo"
    answers = []
    for r in requests:
        conn.sendall((json.dumps(r) + "\n").encode())
        answers.append(json.loads(lines.readline()))
    conn.sendall(b'{"quit": true}\n')
    _, err = worker.communicate(timeout=60)
    return answers, err


def test_a_deadline_dumps_the_stack_before_it_and_no_deadline_dumps_nothing(tmp_path):
    answers, err = serve_requests(tmp_path, [{"sleep": 0.2}, {"sleep": 4.5, "deadline_s": 4.0}])
    assert answers == [{"slept": 0.2}, {"slept": 4.5}]
    assert err.count("Timeout (") == 1, err   # the second request only, 1 s into it (4.0 - 3.0)
    assert "in slow_answer" in err, err


def test_an_answer_within_the_deadline_cancels_the_dump(tmp_path):
    answers, err = serve_requests(tmp_path, [{"sleep": 0.2, "deadline_s": 3.5}, {"sleep": 1.0}])
    assert answers == [{"slept": 0.2}, {"slept": 1.0}]
    assert "Timeout (" not in err, err


def test_a_rank_that_raises_says_so_in_the_log_before_anything_else_runs(capfd):
    import pytest
    from adapters.common import ranks
    with pytest.raises(ValueError):
        with ranks.raised_noted():
            raise ValueError("shape mismatch\nsecond line")
    assert capfd.readouterr().err == "muoncheck: rank 0 raised ValueError: shape mismatch\n"
