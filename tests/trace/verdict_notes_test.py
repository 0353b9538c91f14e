"""scripts/deepspeed-verdicts.py keeps a NOTE apart from a FAIL only for wasted Newton-Schulz work.

Synthetic traces: NS calls on a skipped step whose state is bit-identical, and a straddling matrix
orthogonalised once on each rank, are notes; the same counts with the state moved, two calls on one
rank (Muon per micro-batch), an unattributed call or a missing call stay FAILs. A sweep
counterexample (--sweep) is listed beside the scenario rows of the same defect. A kept row (--keep)
takes causes analysed since; a row of unknown device gives way to a GPU row.
"""
import copy
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("verdicts", os.path.join(HERE, "..", "..", "scripts", "deepspeed-verdicts.py"))
verdicts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verdicts)

W0, W1, W2 = [{"weight": [1.0]}, {"weight": [2.0]}], [{"weight": [1.5]}, {"weight": [2.5]}], [{"weight": [1.7]}, {"weight": [2.7]}]


def trace(steps, by_rank=None):
    t = {"tags": [{"name": "a", "use_muon": True}, {"name": "v", "use_muon": False}], "initial": W0, "steps": steps,
         "implementation": {"details": {}}}
    if by_rank is not None:
        t["implementation"]["details"]["ns_calls_by_rank"] = by_rank
    return t


def step(calls, params, skipped=False):
    return {"ns_calls": calls, "ns_unattributed": 0, "skipped": skipped, "params": params}


NS_FAIL = {"status": "FAIL", "metric": 1.0, "message": "step 1 a: 1 NS calls, expected 0 (skipped step)"}
SKIP_FAIL = {"status": "FAIL", "metric": 1.0, "message": "step 1: 1 NS calls on a skipped step"}
failures = []


def expect(name, got, want_note):
    if (got is not None) != want_note:
        failures.append(f"{name}: expected {'a NOTE' if want_note else 'a FAIL'}, got {got!r}")


skipped_clean = trace([step([1, 0], W1), step([1, 0], W1, skipped=True), step([1, 0], W2)])
expect("NS on a clean skipped step", verdicts.note_for("ns-once-per-matrix-per-step", NS_FAIL, skipped_clean), True)
expect("skip-clean, NS only", verdicts.note_for("overflow-skip-clean", SKIP_FAIL, skipped_clean), True)

moved = copy.deepcopy(skipped_clean)
moved["steps"][1]["params"] = W2
expect("state moved on the skipped step", verdicts.note_for("ns-once-per-matrix-per-step", NS_FAIL, moved), False)
expect("skip-clean with moved state", verdicts.note_for("overflow-skip-clean", SKIP_FAIL, moved), False)
expect("skip-clean, another violation", verdicts.note_for("overflow-skip-clean", dict(SKIP_FAIL, metric=2.0), skipped_clean), False)
expect("skip-clean, a scale message",
       verdicts.note_for("overflow-skip-clean", dict(SKIP_FAIL, message="step 1: loss scale 128, expected 256"), skipped_clean), False)

replicated = trace([step([2, 0], W1), step([2, 0], W2)], by_rank=[[[1, 0], [1, 0]], [[1, 0], [1, 0]]])
expect("straddling copy on each rank", verdicts.note_for("ns-once-per-matrix-per-step", NS_FAIL, replicated), True)
per_micro = trace([step([2, 0], W1), step([2, 0], W2)], by_rank=[[[2, 0], [0, 0]], [[2, 0], [0, 0]]])
expect("two calls on one rank (per micro-batch)", verdicts.note_for("ns-once-per-matrix-per-step", NS_FAIL, per_micro), False)
no_ranks = trace([step([2, 0], W1), step([2, 0], W2)])
expect("extra calls without per-rank counts", verdicts.note_for("ns-once-per-matrix-per-step", NS_FAIL, no_ranks), False)
missing = trace([step([0, 0], W1), step([1, 0], W2)], by_rank=[[[0, 0], [0, 0]], [[1, 0], [0, 0]]])
expect("a missing call", verdicts.note_for("ns-once-per-matrix-per-step", NS_FAIL, missing), False)
unattributed = copy.deepcopy(replicated)
unattributed["steps"][0]["ns_unattributed"] = 1
expect("an unattributed call", verdicts.note_for("ns-once-per-matrix-per-step", NS_FAIL, unattributed), False)
adam_ns = trace([step([1, 1], W1), step([1, 0], W2)], by_rank=[[[1, 1], [0, 0]], [[1, 0], [0, 0]]])
expect("NS on an AdamW param", verdicts.note_for("ns-once-per-matrix-per-step", NS_FAIL, adam_ns), False)
expect("a PASS is never a note", verdicts.note_for("ns-once-per-matrix-per-step", dict(NS_FAIL, status="PASS"), replicated), False)
expect("trajectory never a note", verdicts.note_for("trajectory-conforms", NS_FAIL, replicated), False)
expect("no trace, no note", verdicts.note_for("ns-once-per-matrix-per-step", NS_FAIL, None), False)

# A sweep counterexample joins the scenario rows of its defect (the same cause), in its version's column.
import contextlib
import io
rows = [{"version": "0.19.8", "dp": 1, "device": "H200", "scenario": "clip-z2-dp1",
         "invariants": {"trajectory-conforms": {"status": "FAIL", "cause": "clipping", "upstream_report": "x.md"}}}]
sweep = [{"cause": "clipping", "report": "x.md", "verdict": "DeepSpeed defect", "counterexamples": [
    {"version": "0.19.6", "device": "cpu", "sweep": "s.json", "defect": 2, "occurrences": 10, "failing_cases": 94,
     "symptom": "trajectory-conforms: momentum of a Muon matrix", "needs": ["stage 1"],
     "case": "reports/deepspeed/upstream/cases/c2.json", "repro": "c2_repro.py"}]}]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    verdicts.print_by_defect(rows, sweep)
line = next((x for x in out.getvalue().splitlines() if x.startswith("| clipping")), "")
cells = line.split(" | ")
if len(cells) != 4 or "sweep cpu #2 (10 of 94" not in cells[2] or "clip-z2-dp1" not in cells[3]:
    failures.append(f"sweep counterexample not beside its defect's rows: {line!r}")

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
print(f"{18 - len(failures)} of 18 cases as expected" if not failures else f"{len(failures)} case(s) wrong")
sys.exit(1 if failures else 0)
