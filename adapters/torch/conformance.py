"""Conformance in a maintainer's own test suite: run named scenarios through an optimizer factory
under the torch adapter and assert muoncheck's verdict.

    from adapters.torch.conformance import assert_conforms        # or muoncheck_adapters.torch...

    def test_my_muon():
        assert_conforms(["torch-thin-z0-dp1-fp32"], "mypkg.optim:make_optimizers")

The factory is `module:attribute` (importable in the child processes: its folder is put on
PYTHONPATH when `factory_path` is given), called as `factory(muon_groups, adam_groups, scenario)`
(adapters/torch/optimizers.py). Scenarios are names in scenarios/torch/ or scenarios/ of this
checkout, or paths. The run is `torchrun --nproc-per-node dp` of adapters/torch/run.py, then
`muoncheck verify` over its traces; an AssertionError names every failing invariant with its
message and the line that reproduces it. The pytest fixture `muon_conformance`
(pytest_plugin.py) is this function with pytest's tmp_path.

At dp > 1 every rank calls NS for every matrix (DDP replicas, FSDP2 DTensor shards): an
`ns-once-per-matrix-per-step` FAIL counts as replicated work, not a failure, when the trace's
per-rank counts show exactly one call per Muon matrix on each rank in every step.
"""
import json
import os
import socket
import subprocess
import sys

from ..common import scenario as scenario_file

_PACKAGE = __package__                       # "adapters.torch" in a checkout, else the installed name
_TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # holds the top package
_SCENARIO_DIRS = [os.path.join(_TOP, "scenarios", "torch"), os.path.join(_TOP, "scenarios")]


def scenario_path(name):
    if os.path.exists(name):
        return name
    for d in _SCENARIO_DIRS:
        path = os.path.join(d, name + ".json")
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"scenario {name!r}: neither a file nor a name in {', '.join(_SCENARIO_DIRS)}")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _replicated_only(trace):
    """Every good step: exactly one NS call per Muon matrix (and none per other param) on each rank."""
    muon = [t["use_muon"] for t in trace["tags"]]
    by_rank = trace["implementation"]["details"].get("ns_calls_by_rank") or []
    return bool(by_rank) and all(r == [int(m) for m in muon] for step in by_rank for r in step) \
        and all(st["ns_unattributed"] == 0 for st in trace["steps"])


def run_conformance(scenarios, factory, out_dir, dp=1, factory_path=None, timeout=900, env=None):
    """Runs the scenarios, judges them; returns (failures, report). failures: one line each."""
    paths = [scenario_path(s) for s in scenarios]
    traces_dir = os.path.join(out_dir, "traces")
    child_env = dict(os.environ, **(env or {}))
    child_env["PYTHONPATH"] = os.pathsep.join(p for p in (factory_path, _TOP, child_env.get("PYTHONPATH")) if p)
    child_env.setdefault("MUONCHECK", scenario_file.muoncheck_binary())
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(dp), "--master-port",
           str(_free_port()), "-m", _PACKAGE + ".run", "--out", traces_dir, "--optimizer-factory", factory, *paths]
    run = subprocess.run(cmd, env=child_env, capture_output=True, text=True, timeout=timeout)
    traces = [os.path.join(traces_dir, f) for f in sorted(os.listdir(traces_dir))] if os.path.isdir(traces_dir) else []
    if not traces:
        return [f"the adapter wrote no trace (exit {run.returncode}): {run.stderr.strip()[-2000:]}"], None
    report_path = os.path.join(out_dir, "verify.json")
    verify = [child_env["MUONCHECK"], "verify", *paths, *[a for t in traces for a in ("--trace", t)],
              "--report", report_path]
    done = subprocess.run(verify, capture_output=True, text=True, timeout=timeout)
    if not os.path.exists(report_path):
        return [f"muoncheck verify wrote no report (exit {done.returncode}): {done.stderr.strip()}"], None
    report = json.load(open(report_path))
    failures = []
    for s in report["scenarios"]:
        trace = json.load(open(s["source"]))
        if "unsupported" in trace:
            failures.append(f"{s['scenario']}: UNSUPPORTED: {trace['unsupported']}")
        for v in s["invariants"]:
            if v["status"] != "FAIL":
                continue
            if v["id"] == "ns-once-per-matrix-per-step" and "steps" in trace and _replicated_only(trace):
                continue
            repro = next((x for x in s["repro"] if x.endswith("--invariant " + v["id"])), " ".join(verify))
            failures.append(f"{s['scenario']} {v['id']}: {v['message']}\n    repro: {repro}")
    return failures, report


def assert_conforms(scenarios, factory, out_dir=None, **kwargs):
    """run_conformance, raising AssertionError with every failure and its repro line."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="muoncheck-") as tmp:
        failures, _ = run_conformance(scenarios, factory, out_dir or tmp, **kwargs)
    if failures:
        raise AssertionError(f"{factory} does not conform on {', '.join(scenarios)}:\n" + "\n".join(failures))
