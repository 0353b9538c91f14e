"""State held on one rank only is read on the rank that holds it (adapters/optimizer_loop.py
read_state): with every Muon param's momentum on its owner rank between steps, the trace still
shows each param's momentum after every step, and it is the owner's."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def test_momentum_held_on_one_rank_is_read_where_it_lives():
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                           os.path.join(HERE, "owner_rank_run.py"), "scenarios/torch/torch-thin-z0-dp2-fp32.json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    line = next((x for x in done.stdout.splitlines() if x.startswith("TRACE ")), None)
    assert line, done.stdout[-3000:] + done.stderr[-3000:]
    trace = json.loads(line[len("TRACE "):])
    assert "error" not in trace and "unsupported" not in trace, trace.get("error") or trace.get("unsupported")
    muon = [i for i, t in enumerate(trace["tags"]) if t["use_muon"]]
    assert len(muon) >= 2   # at least one param owned by rank 1
    for step in trace["steps"]:
        for i in muon:
            assert "momentum" in step["params"][i], f"step {step['step']}: no momentum for {trace['tags'][i]['name']}"
