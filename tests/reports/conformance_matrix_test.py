"""scripts/conformance-matrix.py: the matrix regenerated from the committed reports validates against
schemas/conformance-matrix.schema.json, and matches the committed reports/conformance-matrix.json;
the schema rejects a malformed matrix; a failing verdict sorts its column and its defect first and
its cell carries the repro line and the band."""
import copy
import gzip
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import importlib.util  # noqa: E402

spec = importlib.util.spec_from_file_location("matrix", os.path.join(ROOT, "scripts", "conformance-matrix.py"))
matrix = importlib.util.module_from_spec(spec)
spec.loader.exec_module(matrix)
schema = json.load(open(os.path.join(ROOT, "schemas", "conformance-matrix.schema.json")))

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


m = matrix.matrix(os.path.join(ROOT, "reports"))
jsonschema.validate(m, schema)
check(True, "the matrix of the committed reports validates")
committed = json.load(open(os.path.join(ROOT, "reports", "conformance-matrix.json")))
check(committed == json.loads(json.dumps(m)), "reports/conformance-matrix.json is what the script writes (regenerate it)")
check(m["summary"]["implementations"] >= 6, f"six implementations or more: {m['summary']['implementations']}")

bad = copy.deepcopy(m)
bad["columns"][0]["cells"][m["invariants"][0]]["status"] = "MAYBE"
try:
    jsonschema.validate(bad, schema)
    check(False, "a cell with an unknown status is rejected")
except jsonschema.ValidationError:
    check(True, "a cell with an unknown status is rejected")
bad = copy.deepcopy(m)
del bad["summary"]["executed_share"]
try:
    jsonschema.validate(bad, schema)
    check(False, "a summary without its executed share is rejected")
except jsonschema.ValidationError:
    check(True, "a summary without its executed share is rejected")

# A planted failure: one implementation, two versions, the newer failing one invariant; one folder
# per implementation (planted/verdicts*.json) and its sweep records (planted/sweeps/).
with tempfile.TemporaryDirectory() as d:
    os.makedirs(os.path.join(d, "planted", "sweeps"))
    row = lambda status, band: {"scenario": "s1", "dp": 2, "device": "cpu", "repro": [f"muoncheck verify s1.json --trace t --invariant trajectory-conforms"],
                                "invariants": {"trajectory-conforms": {"status": status, "metric": 3.0 if status == "FAIL" else 0.2,
                                                                       "threshold": 1.0, "message": "worst at step 1",
                                                                       "sensitivity": {"band_over_update": band, "where": "w"}},
                                               "ranks-agree": {"status": "PASS", "metric": 0, "threshold": 0, "message": ""}}}
    for version, status, file in (("1.0", "PASS", "verdicts-1.0.json"), ("2.0", "FAIL", "verdicts.json")):
        doc = {"schema": "muoncheck-impl-verdicts/1", "implementation": "planted", "title": "Planted Muon", "version": version,
               "plugin": {"module": "x.py", "lines": 10}, "rows": [row(status, 0.4)],
               "declines": [{"knob": "k", "reason": "r", "count": 3}],
               "defects": ([{"title": "planted defect", "invariants": ["trajectory-conforms"], "report": "planted/upstream/x.md",
                             "repro": "x_repro.py", "upstream": "drafted", "status": "new"}] if status == "FAIL" else [])}
        json.dump(doc, open(os.path.join(d, "planted", file), "w"))
    failure = lambda verdict, fixes=(): {"case": 1, "invariants": ["trajectory-conforms"], "message": "m",
                                         "attribution": {"verdict": verdict, "fixes": list(fixes)}}
    sweep = {"command": "sweep", "impl": "planted", "implementation": "Planted Muon 2.0", "seed": 1, "cases_run": 10, "draws": 20,
             "declined_draws": 10, "declined": 0, "errors": 0, "failing_cases": 3, "explained": 2, "new": 1, "seconds": 120.0,
             "cases_per_minute": 5.0, "executed_share": 0.5, "declines_by_feature": {"knob k": 8, "engine.stage 1": 2},
             "failures": [failure("explained", ["planted-swept"]), failure("explained", ["planted-threaded"]), failure("new")],
             "defects": []}
    json.dump(sweep, open(os.path.join(d, "planted", "sweeps", "cpu-dp2-seed1.json"), "w"))
    # A published record is gzip-compressed (NAME.json.gz): read like the plain one the sweep writes.
    with gzip.open(os.path.join(d, "planted", "sweeps", "cpu-dp4-seed1.json.gz"), "wt") as f:
        json.dump(dict(sweep, dp=4, cases_run=7), f)
    # The plugin's registry: one entry found only by sweeping, one whose thread the listed defect names.
    registries = os.path.join(d, "adapters")
    os.makedirs(os.path.join(registries, "planted"))
    entry = lambda id, report: {"id": id, "title": f"{id} title", "report": report, "versions": ["2.0"],
                                "invariants": ["trajectory-conforms"], "witness": "witnesses/w.json"}
    json.dump({"format": 1, "implementation": "planted", "defects": [entry("planted-swept", "https://github.com/o/r/issues/7"),
                                                                     entry("planted-threaded", "planted/upstream/x.md")]},
              open(os.path.join(registries, "planted", "known_defects.json"), "w"))
    pm = matrix.matrix(d, registries)
    jsonschema.validate(pm, schema)
    swept = [x for x in pm["defects"] if x.get("fix") == "planted-swept"]
    check(len(swept) == 1 and swept[0]["sweep_cases"] == 2 and swept[0]["status"] == "known"
          and swept[0]["upstream"] == "https://github.com/o/r/issues/7" and swept[0]["versions"] == ["2.0"],
          "a registry fix that explained sweep cases (one per record, two records) is a defect found by sweeping, with its thread")
    threaded = [x for x in pm["defects"] if x.get("fix") == "planted-threaded"]
    check(len(threaded) == 1 and threaded[0]["title"] == "planted defect" and threaded[0]["sweep_cases"] == 2,
          "an entry whose thread a listed defect already names adds its cases to that defect, not a second row")
    check([c["version"] for c in pm["columns"]] == ["2.0", "1.0"], "the failing version's column comes first")
    cell = pm["columns"][0]["cells"]["trajectory-conforms"]
    check(cell["status"] == "FAIL" and "--invariant trajectory-conforms" in cell["worst"]["repro"], "the failing cell carries its repro line")
    check(cell["band_over_update_max"] == 0.4, "the cell shows the band over one update")
    check(pm["summary"]["new_defects"] == 1 and pm["summary"]["defects"] == 2 and pm["summary"]["declines"] == 6,
          "defects and declines are counted")
    sw = pm["columns"][0]["sweeps"]
    check(pm["columns"][0]["sweep_cases_by_dp"] == {"2": 10, "4": 7} and not pm["columns"][1]["sweeps"], "the sweep record counts for its own version, by dp")
    check(sw and sw[0]["declined_share_by_knob"] == {"k": 0.4} and sw[0]["explained"] == 2 and sw[0]["new"] == 1,
          "declines per knob (share of draws) and failures explained / new come from the sweep record")
    check("planted/sweeps/cpu-dp2-seed1.json" in pm["inputs"] and "planted/sweeps/cpu-dp4-seed1.json.gz" in pm["inputs"],
          "the sweep records, plain and compressed, are inputs")
    summary = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "sweep-summary.py"), os.path.join(d, "planted", "sweeps")],
                             capture_output=True, text=True)
    table = open(os.path.join(d, "planted", "sweeps", "README.md")).read() if summary.returncode == 0 else summary.stderr
    check("[cpu-dp4-seed1.json.gz](cpu-dp4-seed1.json.gz) | CPU (2-core machine) | 4 | 7 |" in table and "cpu-dp2-seed1.json" in table,
          "sweep-summary.py reads a compressed record beside a plain one")
    page = matrix.page(pm)
    check(page.index("planted defect") < page.index("Invariants ×"), "the defects come before the grid")
    check("x_repro.py" in page and "band 0.40" in page, "the page links the repro script and shows the band")
    check("k 40%" in page, "the page shows the declines per knob")

print(f"{len(failures)} failed" if failures else "all checks passed")
sys.exit(1 if failures else 0)
