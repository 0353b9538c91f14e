"""`muoncheck sweep --impl torch --known-defects FILE` with a deliberately broken optimizer factory:
the failures its registry's fix explains are reported as a known defect and the run exits 0; a
broken factory the registry does not cover is NEW and exits 1; the JUnit and Markdown views say
what the exit code says."""
import json
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REGISTRY = os.path.join(ROOT, "tests", "torch", "known_defects_no_nesterov.json")


def sweep(tmp_path, factory, seed, registry=REGISTRY, cwd=ROOT):
    muoncheck = os.environ.get("MUONCHECK")
    if not muoncheck:
        pytest.skip("MUONCHECK (the muoncheck binary) is not set")
    env = dict(os.environ, MUONCHECK_TORCH_FACTORY="adapters.torch.optimizers:" + factory,
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = {k: str(tmp_path / (factory + "." + k)) for k in ("json", "xml", "md")}
    run = subprocess.run([muoncheck, "sweep", "--impl", "torch", "--cases", "3", "--seed", str(seed), "--min-executed", "0", "--max-defects", "1",
                          "--shrink-seconds", "30", "--cases-dir", str(tmp_path / "cases")]
                         + (["--known-defects", registry] if registry else [])
                         + ["--json", out["json"], "--junit", out["xml"], "--summary-md", out["md"]],
                         cwd=cwd, env=env, capture_output=True, text=True, timeout=800)
    assert os.path.exists(out["json"]), f"exit {run.returncode}: {run.stdout[-3000:]}{run.stderr[-3000:]}"
    with open(out["json"]) as f:
        record = json.load(f)
    with open(out["xml"]) as f:
        xml = f.read()
    with open(out["md"]) as f:
        md = f.read()
    return run, record, xml, md


def junit_failures(xml):
    return int(re.search(r'<testsuites [^>]*failures="(\d+)"', xml).group(1))


def test_failures_a_known_fix_explains_do_not_fail_the_run(tmp_path):
    run, record, xml, md = sweep(tmp_path, "no_nesterov", 3)   # seed 3 draws a case with Nesterov on
    assert record["failing_cases"] > 0, run.stdout[-3000:]
    assert record["explained"] == record["failing_cases"], run.stdout[-3000:]
    assert all(f["attribution"]["fixes"] == ["no-nesterov"] for f in record["failures"]), record["failures"]
    assert record["known_defects"]["checked"] == ["no-nesterov"], run.stdout[-3000:]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert record["ok"] is True
    assert junit_failures(xml) == 0, xml
    assert "only known defects" in md, md


def test_a_defect_no_fix_explains_fails_the_run(tmp_path):
    run, record, xml, md = sweep(tmp_path, "momentum_ignores_beta", 2)
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    assert record["new"] > 0, run.stdout[-3000:]
    assert record["ok"] is False
    assert junit_failures(xml) >= 1, xml
    assert "NEW: still fails with every applicable fix (no-nesterov)" in md, md


def test_the_plugins_own_registry_attributes_from_any_folder(tmp_path):
    """No --known-defects: the torch plugin's registry (adapters/torch/known_defects.json in the data
    folder) attributes the failures, also when the sweep starts outside the checkout."""
    run, record, _, _ = sweep(tmp_path, "no_nesterov", 3, registry=None, cwd=str(tmp_path))
    assert record["failing_cases"] > 0, run.stdout[-3000:]
    assert record["known_defects"]["file"].endswith(os.path.join("adapters", "torch", "known_defects.json")), record["known_defects"]
    assert {f["attribution"]["verdict"] for f in record["failures"]} == {"new"}, record["failures"]
    assert run.returncode == 1
