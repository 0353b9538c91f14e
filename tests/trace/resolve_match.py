"""`muoncheck resolve` and the adapters' scenario reader (adapters/common/scenario.py) agree with the
C++ loader.

    python3 tests/trace/resolve_match.py MUONCHECK SCENARIO.json...

For each scenario: the resolved document's canonical scenario, written back as a file, resolves to
the same hash and parameter list (every default is explicit, nothing is lost); `--out FILE` writes
what stdout prints; the reader gives the same Scenario from the scenario file (resolving it through
MUONCHECK) and from the resolved file; and a resolved document missing a field the reader needs
is an error, never a default filled in by Python (the fields written beside the canonical
scenario, engine_path / lr_schedule / checkpoint / ns_coefficients, included).
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from adapters.common import scenario as reader  # noqa: E402


def resolve(tool, path, *extra):
    return subprocess.run([tool, "resolve", path, *extra], check=True, capture_output=True, text=True).stdout


def fields(s):
    return {k: v for k, v in vars(s).items() if k not in ("resolved", "source", "params", "optimizer")} | \
        {"params": [vars(p) for p in s.params]}


def check(tool, path, tmp):
    bad = []
    doc = json.loads(resolve(tool, path))
    again_path = os.path.join(tmp, doc["scenario"]["name"] + ".json")
    with open(again_path, "w") as f:
        json.dump(doc["scenario"], f)
    again = json.loads(resolve(tool, again_path))
    if again["hash"] != doc["hash"] or again["params"] != doc["params"]:
        bad.append("the canonical scenario does not resolve to itself")
    out = os.path.join(tmp, "resolved.json")
    resolve(tool, path, "--out", out)
    if json.load(open(out)) != doc:
        bad.append("--out differs from stdout")
    if fields(reader.load(path)) != fields(reader.load(out)):
        bad.append("reader: scenario file and resolved file give different scenarios")
    s = reader.load(out)
    if len(s.params) != len(doc["params"]) or s.global_batch != doc["global_batch"]:
        bad.append("reader: params or global batch differ from the resolved document")
    broken = json.loads(json.dumps(doc))
    del broken["scenario"]["optimizer"]["momentum"]
    try:
        reader.Scenario(broken, "broken")
        bad.append("reader accepted a resolved document without optimizer.momentum")
    except KeyError:
        pass
    for field in ("engine_path", "lr_schedule", "checkpoint", "ns_coefficients"):   # written always, beside the scenario
        broken = json.loads(json.dumps(doc))
        del broken[field]
        try:
            reader.Scenario(broken, "broken")
            bad.append(f"reader accepted a resolved document without {field}")
        except KeyError:
            pass
    raw = doc["scenario"]
    if s.compile != raw["engine"].get("compile", False) or \
            s.offload_optimizer != raw["engine"].get("offload_optimizer", "none"):
        bad.append("reader: engine_path differs from the scenario's engine")
    if s.checkpoint and s.resumed().global_batch != s.global_batch:
        bad.append("reader: the resumed engine changes the global batch")
    if bool(s.checkpoint) != ("checkpoint" in raw):
        bad.append("reader: checkpoint present in one of the scenario and the resolved document only")
    if len(s.ns_iterations) != s.ns_steps:
        bad.append("reader: ns_coefficients is not one triple per NS iteration")
    muon = sum(p["use_muon"] for p in doc["params"])
    print(f"{doc['scenario']['name']}: {len(doc['params'])} params ({muon} Muon), hash {doc['hash']}:",
          "match" if not bad else "MISMATCH " + "; ".join(bad))
    return not bad


def main():
    tool, paths = sys.argv[1], sys.argv[2:]
    os.environ["MUONCHECK"] = tool
    with tempfile.TemporaryDirectory() as tmp:
        results = [check(tool, p, tmp) for p in paths]
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
