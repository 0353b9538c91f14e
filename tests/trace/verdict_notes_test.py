"""scripts/deepspeed-verdicts.py renders the judge's verdicts as the reports give them.

No re-labelling of NS verdicts (the judge counts per rank); a report's row keeps its status. A
sweep counterexample (--sweep) is listed beside the scenario rows of the same defect, with the
counterexamples the sweep file counts but does not list. A kept row (--keep) takes causes analysed
since; a row of unknown device gives way to a GPU row. --into replaces only the generated part of
a page.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("verdicts", os.path.join(HERE, "..", "..", "scripts", "deepspeed-verdicts.py"))
verdicts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verdicts)

failures = []

# Wasted NS work is the judge's to accept (per-rank counts, a discarded call on a skipped step):
# the table keeps the verdict the report gives and never re-labels it.
if hasattr(verdicts, "note_for") or hasattr(verdicts, "wasted_ns"):
    failures.append("the table second-guesses the judge's NS verdicts (note_for / wasted_ns)")

# A sweep counterexample joins the scenario rows of its defect (the same cause), in its version's column.
import contextlib
import io
rows = [{"version": "0.19.8", "dp": 1, "device": "H200", "scenario": "clip-z2-dp1",
         "invariants": {"trajectory-conforms": {"status": "FAIL", "cause": "clipping", "upstream_report": "x.md"}}}]
sweep = [{"cause": "clipping", "report": "x.md", "verdict": "DeepSpeed defect", "counterexamples": [
    {"version": "0.19.6", "device": "cpu", "sweep": "s.json", "defect": 2, "occurrences": 10, "failing_cases": 94,
     "symptom": "trajectory-conforms: momentum of a Muon matrix", "needs": ["stage 1"],
     "case": "reports/deepspeed/upstream/cases/c2.json", "repro": "c2_repro.py"}], "counterexamples_not_kept": 3}]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    verdicts.print_by_defect(rows, sweep)
line = next((x for x in out.getvalue().splitlines() if x.startswith("| clipping")), "")
cells = line.split(" | ")
if len(cells) != 4 or "sweep cpu #2 (10 of 94" not in cells[2] or "clip-z2-dp1" not in cells[3]:
    failures.append(f"sweep counterexample not beside its defect's rows: {line!r}")
if "(3 more counterexamples of the same sweeps)" not in cells[0]:
    failures.append(f"the counterexamples not listed are not counted: {line!r}")

# A report's verdict stands: a FAIL of ns-once-per-matrix-per-step stays a FAIL with its cause.
import json
import subprocess
import tempfile
with tempfile.TemporaryDirectory() as d:
    report = {"scenarios": [{"scenario": "clip-z2-dp1 [deepspeed 0.19.8]", "source": "t.json", "scenario_hash": "h",
                             "repro": ["muoncheck verify x --invariant ns-once-per-matrix-per-step"],
                             "invariants": [{"id": "ns-once-per-matrix-per-step", "status": "FAIL", "metric": 1, "threshold": 0,
                                             "message": "step 1 param a: 2 NS calls, expected 1"},
                                            {"id": "overflow-skip-clean", "status": "PASS", "metric": 0, "threshold": 0, "message": "ok"}]}]}
    json.dump(report, open(os.path.join(d, "r.json"), "w"))
    json.dump({"causes": []}, open(os.path.join(d, "c.json"), "w"))
    page = os.path.join(d, "v.md")
    open(page, "w").write("prose before\n<!-- generated -->\nold\n<!-- end generated -->\nprose after\n")
    script = os.path.join(HERE, "..", "..", "scripts", "deepspeed-verdicts.py")
    run = subprocess.run([sys.executable, script, "--into", page, os.path.join(d, "v.json"), os.path.join(d, "c.json"), d,
                          os.path.join(d, "r.json")], capture_output=True, text=True, cwd=os.path.join(HERE, "..", ".."))
    if run.returncode != 0:
        failures.append(f"rendering a report failed: {run.stderr[-400:]}")
    else:
        row = json.load(open(os.path.join(d, "v.json")))["rows"][0]
        if row["invariants"]["ns-once-per-matrix-per-step"]["status"] != "FAIL":
            failures.append(f"the judge's FAIL was re-labelled: {row['invariants']}")
        text = open(page).read()
        if not (text.startswith("prose before\n<!-- generated -->\n| version |") and text.endswith("<!-- end generated -->\nprose after\n")
                and "old" not in text):
            failures.append(f"--into did not replace only the generated part: {text[:200]!r}")

# A kept row's FAIL takes a cause analysed since (CAUSES.json), keeps its own where none matches;
# a row of unknown device gives way to the GPU row of the same version and scenario.
causes = [{"version": "0.19.6", "scenario": "a-z3-dp1", "invariants": ["bucket-invariant"], "cause": "bucket path", "report": "r"}]
fresh = {"status": "FAIL", "message": "m", "cause": "not analysed", "upstream_report": None}
stored = {"status": "FAIL", "message": "m", "cause": "analysed before", "upstream_report": "u"}
verdicts.attach_cause(fresh, causes, "0.19.6", "a-z3-dp1", "bucket-invariant")
verdicts.attach_cause(stored, causes, "0.19.6", "a-z3-dp1", "gas-invariant")
if fresh["cause"] != "bucket path" or stored["cause"] != "analysed before":
    failures.append(f"kept causes: {fresh['cause']!r}, {stored['cause']!r}")
kept = {("0.19.6", "a", "?"): 1, ("0.19.6", "a", "H200"): 2, ("0.19.6", "b", "?"): 3, ("0.19.6", "b", "cpu"): 4}
verdicts.drop_superseded(kept)
if sorted(kept) != [("0.19.6", "a", "H200"), ("0.19.6", "b", "?"), ("0.19.6", "b", "cpu")]:
    failures.append(f"superseded rows: {sorted(kept)}")

for f in failures:
    print("FAIL", f)
print("all cases as expected" if not failures else f"{len(failures)} case(s) wrong")
sys.exit(1 if failures else 0)
