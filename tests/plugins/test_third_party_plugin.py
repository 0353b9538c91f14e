"""A Muon implementation muoncheck does not know, as a throwaway pip-installable package with an
entry point: judged by `verify --impl` and by `sweep --impl` with no change to muoncheck, its
planted defect found; plugins that raise, hang, die or declare a malformed space are an ERROR of
the case with their message, never a hang or a crash of muoncheck."""
import json
import subprocess
import time

from conftest import ROOT, muoncheck, muoncheck_command

import mymuon_package

SCENARIO = "scenarios/torch/torch-thin-z0-dp1-fp32.json"


def test_the_plugin_fits_in_sixty_lines(tmp_path):
    source = mymuon_package.write(str(tmp_path))
    assert len(source.splitlines()) <= 60


def test_verify_impl_judges_a_plugin_muoncheck_does_not_know(plugin_site, tmp_path):
    report = tmp_path / "verify.json"
    r = muoncheck("verify", "--impl", "mymuon", SCENARIO, "--report", str(report), "--min-executed", "0.4",
                  site=plugin_site)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(report.read_text())
    (row,) = doc["scenarios"]
    assert "My Muon 0.1" in row["scenario"]
    verdicts = {v["id"]: v["status"] for v in row["invariants"]}
    assert verdicts["trajectory-conforms"] == "PASS", r.stdout
    assert verdicts["ns-once-per-matrix-per-step"] == "PASS", r.stdout   # its own NS function was counted
    assert verdicts["gas-invariant"] == "PASS", r.stdout                  # its re-splits ran too


def test_sweep_impl_draws_its_knobs_and_judges_it(plugin_site, tmp_path):
    r, doc = _sweep("mymuon", 3, plugin_site, tmp_path, "--min-executed", "0.2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["cases_run"] == 3 and not doc["failures"], doc
    assert "partial" not in doc, doc                                      # the finished sweep's record
    assert [k["name"] for k in doc["space"]] == ["nesterov", "momentum", "mymuon"]


def test_a_killed_sweep_keeps_the_record_of_the_cases_it_judged(plugin_site, tmp_path):
    """A CI time limit that kills the sweep (SIGKILL: no handler runs) leaves the record written
    as it went, marked partial, with every case recorded until then."""
    record = tmp_path / "sweep.json"
    argv, env = muoncheck_command("sweep", "--impl", "mymuon", "--cases", "500", "--seed", "2", "--json", str(record),
                                  "--cases-dir", str(tmp_path / "cases"), site=plugin_site)
    p = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while not record.exists() and time.monotonic() < deadline and p.poll() is None:
            time.sleep(1)
    finally:
        p.kill()
        p.wait()
    doc = json.loads(record.read_text())
    assert doc["partial"] is True, doc
    assert doc["cases_run"] >= 1 and doc["cases_requested"] == 500, doc
    assert doc["seconds"] >= 20, doc                                      # written once the sweep had run a while


def test_sweep_impl_draws_again_what_the_plugin_declines(plugin_site, tmp_path):
    r, doc = _sweep("mymuon-picky", 6, plugin_site, tmp_path, "--min-executed", "0.2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert doc["cases_run"] == 6 and doc["declined"] == 0, doc           # every case the plugin ran
    assert doc["declined_draws"] >= 1 and doc["draws"] == 6 + doc["declined_draws"], doc
    assert doc["declines_by_feature"] == {"knob momentum": doc["declined_draws"]}, doc
    assert not any(f.startswith("knob momentum=0.5") for f in doc["features_drawn"]), doc["features_drawn"]


def test_sweep_impl_finds_the_planted_defect(plugin_site, tmp_path):
    r, doc = _sweep("mymuon-broken", 2, plugin_site, tmp_path, "--max-defects", "1", "--shrink-seconds", "20")
    assert r.returncode == 1, r.stdout + r.stderr
    assert doc["failures"], doc


def _sweep(name, cases, plugin_site, tmp_path, *extra):
    """`sweep --impl NAME --seed 2` of `cases` cases: the run and its JSON record."""
    record = tmp_path / "sweep.json"
    r = muoncheck("sweep", "--impl", name, "--cases", str(cases), "--seed", "2", "--json", str(record),
                  "--cases-dir", str(tmp_path / "cases"), *extra, site=plugin_site)
    return r, json.loads(record.read_text()) if record.exists() else {}


def _verify_bad(name, plugin_site, *extra):
    r = muoncheck("verify", "--impl", name, SCENARIO, "--case-timeout-s", "40", *extra, site=plugin_site, timeout=400)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out            # judged and not OK: never 0, never a crash (3) or a hang
    return out


def test_a_plugin_that_raises_is_an_error_of_the_case_with_its_message(plugin_site):
    assert "planted: optimizer() raises" in _verify_bad("bad-raise", plugin_site)


def test_a_plugin_that_hangs_is_an_error_of_the_case(plugin_site):
    out = _verify_bad("bad-hang", plugin_site)
    assert "worker lost" in out and "deadline" in out, out


def test_a_plugin_whose_worker_dies_without_a_trace_is_an_error_of_the_case(plugin_site):
    out = _verify_bad("bad-notrace", plugin_site)
    assert "worker lost" in out and "exited with status 3" in out, out


def test_a_plugin_with_a_malformed_space_is_an_error_naming_the_field(plugin_site):
    out = _verify_bad("bad-space", plugin_site)
    assert "plugin 'bad-space'" in out and "knob momentum: values" in out, out


def test_a_plugin_naming_an_ns_function_that_does_not_exist_fails_loudly(plugin_site):
    out = _verify_bad("bad-ns", plugin_site)
    assert "ns_functions: none of them exists" in out and "mymuon.newton_schultz" in out, out


def test_a_failing_case_of_verify_impl_reproduces_with_the_site_and_the_fixes_it_ran_with(plugin_site):
    r = muoncheck("verify", "--impl", "mymuon-broken", SCENARIO, "--impl-site", plugin_site, "--min-executed", "0.1",
                  timeout=400)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("muoncheck verify --impl mymuon-broken")]
    assert lines, out
    for line in lines:
        assert f"--impl-site {plugin_site}" in line, line
