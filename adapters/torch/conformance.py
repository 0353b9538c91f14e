"""Conformance in a maintainer's own test suite: run scenarios through an optimizer factory under the
torch adapter and assert muoncheck's verdict.

    import torch
    from muoncheck_adapters.torch.conformance import conformance_tests   # adapters.torch... in a checkout
    from muoncheck_adapters.torch.optimizers import adamw_kwargs, muon_kwargs

    def make(muon_groups, adam_groups, s):   # a factory in one line
        return [torch.optim.Muon(muon_groups, **muon_kwargs(s)), torch.optim.AdamW(adam_groups, **adamw_kwargs(s))]

    test_my_muon = conformance_tests(make)   # one test per torch scenario, dp from each

The factory is a callable `factory(muon_groups, adam_groups, scenario)` defined at module level
(the ranks are child processes that import it by its module and name; the folder that holds its
top package is put on PYTHONPATH), or a `module:attribute` string. Scenarios are names in
scenarios/torch/ or scenarios/ of the data folder, or paths; each runs at its own `engine.dp` (one
`torchrun --nproc-per-node dp` of adapters/torch/run.py per dp), then `muoncheck verify` judges the
traces. Before judging, the optimizers the factory built are compared with the scenario: every
setting that differs fails, named with both values ("momentum: factory 0.95, scenario 0.5"). A
FAIL names the invariant, its message and the line that reproduces it. An adapter that crashes, a
launch that fails, or a muoncheck that writes no report is not a verdict: it raises
ConformanceRunError, which `conformance_tests` raises in the test's setup, so pytest reports an
ERROR, not a failure.

At dp > 1 every rank calls NS for every matrix (DDP replicas, FSDP2 DTensor shards): an
`ns-once-per-matrix-per-step` FAIL counts as replicated work, not a failure, when the trace's
per-rank counts show exactly one call per Muon matrix on each rank in every step.
"""
import json
import math
import os
import socket
import subprocess
import sys

from ..common import scenario as scenario_file

_PACKAGE = __package__                       # "adapters.torch" in a checkout, else the installed name
_TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # holds the top package
_SCENARIO_DIRS = [os.path.join(_TOP, "scenarios", "torch"), os.path.join(_TOP, "scenarios")]


class ConformanceRunError(RuntimeError):
    """The run could not be judged (the adapter or its launch failed, muoncheck wrote no report):
    an error of the test, not a verdict about the optimizer."""


def scenario_path(name):
    if os.path.exists(name):
        return name
    for d in _SCENARIO_DIRS:
        path = os.path.join(d, name + ".json")
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"scenario {name!r}: neither a file nor a name in {', '.join(_SCENARIO_DIRS)}")


def torch_scenarios():
    """The names of the shipped torch scenarios (scenarios/torch/ of the data folder)."""
    d = _SCENARIO_DIRS[0]
    return sorted(f[:-5] for f in os.listdir(d) if f.endswith(".json")) if os.path.isdir(d) else []


def factory_spec(factory):
    """(`module:attribute`, the folder to put on PYTHONPATH or None) of a factory: a string as given,
    a callable by its module and qualified name (it must be importable there: defined at module level)."""
    if isinstance(factory, str):
        return factory, None
    if not callable(factory):
        raise TypeError(f"factory: expected a callable or 'module:attribute', got {type(factory).__name__}")
    module, name = getattr(factory, "__module__", None), getattr(factory, "__qualname__", "")
    if not module or "<" in name or module == "__main__":
        raise TypeError(f"factory {name or factory!r}: the ranks import it by module and name, so it must be "
                        f"defined at module level of an importable module (not a lambda, a local or __main__)")
    folder = None
    mod = sys.modules.get(module)
    if mod is not None and getattr(mod, "__file__", None):
        folder = os.path.dirname(os.path.abspath(mod.__file__))
        for _ in range(module.count(".")):   # up to the folder holding the top package
            folder = os.path.dirname(folder)
    return f"{module}:{name}", folder


def _same(a, b):
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=0.0)
    return a == b


def _text(v):
    return json.dumps(list(v) if isinstance(v, tuple) else v)


def hyperparameter_differences(trace, s):
    """Each setting of the optimizers the factory built (the trace's implementation.details.optimizers)
    that differs from what scenario `s` says, as "NAME: factory X, scenario Y" (Muon and AdamW)."""
    from .optimizers import EXPECTED_KWARGS
    built = trace.get("implementation", {}).get("details", {}).get("optimizers") or []
    out = []
    for opt in built:
        expected = EXPECTED_KWARGS.get(opt.get("class"))
        if expected is None:
            continue
        defaults = opt.get("defaults", {})
        for key, want in expected(s).items():
            if key in defaults and not _same(defaults[key], want):
                out.append(f"{opt['class']} {key}: factory {_text(defaults[key])}, scenario {_text(want)}")
    return out


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _replicated_only(trace):
    """Every good step: exactly one NS call per Muon matrix (and none per other param) on each rank."""
    muon = [t["use_muon"] for t in trace["tags"]]
    by_rank = trace["implementation"]["details"].get("ns_calls_by_rank") or []
    return bool(by_rank) and all(r == [int(m) for m in muon] for step in by_rank for r in step) \
        and all(st["ns_unattributed"] == 0 for st in trace["steps"])


def _launch(paths, dp, spec, traces_dir, child_env, timeout):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(dp), "--master-port",
           str(_free_port()), "-m", _PACKAGE + ".run", "--out", traces_dir, "--optimizer-factory", spec, *paths]
    try:
        return subprocess.run(cmd, env=child_env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise ConformanceRunError(f"the adapter did not finish within {timeout} s: {' '.join(cmd)}") from e


def run_conformance(scenarios, factory, out_dir, dp=None, factory_path=None, timeout=900, env=None):
    """Runs the scenarios (each at its own dp), compares the factory's settings with each scenario,
    then judges them; returns (failures, report). failures: one line each. Raises
    ConformanceRunError when the run cannot be judged, ValueError when `dp` contradicts a scenario."""
    spec, folder = factory_spec(factory)
    paths = [scenario_path(s) for s in scenarios]
    child_env = dict(os.environ, **(env or {}))
    child_env["PYTHONPATH"] = os.pathsep.join(p for p in (factory_path or folder, _TOP, child_env.get("PYTHONPATH")) if p)
    child_env.setdefault("MUONCHECK", scenario_file.muoncheck_binary())
    os.environ.setdefault("MUONCHECK", child_env["MUONCHECK"])   # scenario_file.load resolves with it
    loaded = {p: scenario_file.load(p) for p in paths}
    by_dp = {}
    for p in paths:
        if dp is not None and loaded[p].dp != dp:
            raise ValueError(f"dp={dp}, but scenario {loaded[p].name} runs at dp {loaded[p].dp} (leave dp out: "
                             f"each scenario runs at its own)")
        by_dp.setdefault(loaded[p].dp, []).append(p)
    traces_dir = os.path.join(out_dir, "traces")
    for group_dp, group in sorted(by_dp.items()):
        run = _launch(group, group_dp, spec, traces_dir, child_env, timeout)
        written = [os.path.join(traces_dir, f"{loaded[p].name}.trace.json") for p in group]
        missing = [t for t in written if not os.path.exists(t)]
        if missing:
            raise ConformanceRunError(f"the adapter wrote no trace for {', '.join(os.path.basename(t) for t in missing)} "
                                      f"(exit {run.returncode}): {run.stderr.strip()[-2000:]}")
    traces = {p: json.load(open(os.path.join(traces_dir, f"{loaded[p].name}.trace.json"))) for p in paths}
    for p, t in traces.items():
        if "error" in t:
            raise ConformanceRunError(f"{loaded[p].name}: the adapter failed: {t['error']}")
    # The factory's settings first: a wrong hyper-parameter is named as such, not as its symptoms.
    failures = [f"{loaded[p].name}: {d}" for p in paths for d in hyperparameter_differences(traces[p], loaded[p])]
    if failures:
        return failures, None
    report_path = os.path.join(out_dir, "verify.json")
    trace_files = [os.path.join(traces_dir, f"{loaded[p].name}.trace.json") for p in paths]
    verify = [child_env["MUONCHECK"], "verify", *paths, *[a for t in trace_files for a in ("--trace", t)],
              "--report", report_path]
    done = subprocess.run(verify, capture_output=True, text=True, timeout=timeout)
    if not os.path.exists(report_path):
        raise ConformanceRunError(f"muoncheck verify wrote no report (exit {done.returncode}): {done.stderr.strip()}")
    report = json.load(open(report_path))
    for s in report["scenarios"]:
        trace = json.load(open(s["source"])) if os.path.exists(s.get("source", "")) else {}
        if "unsupported" in trace:
            failures.append(f"{s['scenario']}: UNSUPPORTED: {trace['unsupported']}")
        if s.get("error"):
            raise ConformanceRunError(f"{s['scenario']}: {s['error'].get('message', s['error'])}")
        for v in s["invariants"]:
            if v["status"] != "FAIL":
                continue
            if v["id"] == "ns-once-per-matrix-per-step" and "steps" in trace and _replicated_only(trace):
                continue
            repro = next((x for x in s["repro"] if x.endswith("--invariant " + v["id"])), " ".join(verify))
            failures.append(f"{s['scenario']} {v['id']}: {v['message']}\n    repro: {repro}")
    return failures, report


def assert_conforms(scenarios, factory, out_dir=None, **kwargs):
    """run_conformance, raising AssertionError with every failure (a differing setting, or a FAIL
    and its repro line)."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="muoncheck-") as tmp:
        failures, _ = run_conformance(scenarios, factory, out_dir or tmp, **kwargs)
    if failures:
        name = factory if isinstance(factory, str) else factory_spec(factory)[0]
        raise AssertionError(f"{name} does not conform on {', '.join(scenarios)}:\n" + "\n".join(failures))


def conformance_tests(factory, scenarios=None):
    """A pytest test function parametrized over `scenarios` (default: every torch scenario), one test
    each: the scenario runs in the test's setup (fixture `muoncheck_run`: an adapter or launch error
    is a pytest ERROR), and the test asserts that the factory conforms on it."""
    import pytest
    names = list(scenarios) if scenarios is not None else torch_scenarios()

    @pytest.mark.parametrize("muoncheck_run", [(factory, n) for n in names], ids=names, indirect=True)
    def test_conforms(muoncheck_run):
        muoncheck_run.assert_conforms()

    return test_conforms
