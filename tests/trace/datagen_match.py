"""The adapters' numpy data generator equals muoncheck's C++ generator bit for bit.

    python3 tests/trace/datagen_match.py DUMP_TOOL SCENARIO.json...

For each scenario, DUMP_TOOL (tests/trace/datagen_dump.cpp) prints the C++ values; this
script recomputes them with adapters/common/datagen.py (on the parameter list the adapters read
from `muoncheck resolve`, MUONCHECK) and compares exactly (the values are dyadic rationals, so
equality is the only right test). Exit 0 when all
match, 1 on a mismatch, 77 (ctest SKIP) when numpy is missing.
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed for", sys.executable)
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from adapters.common import datagen as data  # noqa: E402
from adapters.common import scenario as muoncheck_scenario  # noqa: E402


def check(tool, path):
    dump = json.loads(subprocess.run([tool, path], check=True, capture_output=True, text=True).stdout)
    s = muoncheck_scenario.load(path)
    bad = []
    for hx in dump["hashes"]:
        words = [int(w) for w in hx["words"]]
        if int(data.hash6(*words)) != int(hx["h"]):
            bad.append(f"h{tuple(words)}")
    if [p.name for p in s.params] != [p["name"] for p in dump["params"]]:
        bad.append("parameter list (llama preset expansion) differs")
    for p, want in zip(s.params, dump["params"]):
        if not np.array_equal(data.initial_weight(s.seed, p).reshape(-1), np.array(want["initial"])):
            bad.append(f"{p.name}: initial weights")
        for smp in want["samples"]:
            x = data.inputs(s.seed, p, smp["step"], [smp["sample"]])[0]
            y = data.targets(s.seed, p, smp["step"], [smp["sample"]])[0]
            if not np.array_equal(x, np.array(smp["x"])) or not np.array_equal(y, np.array(smp["y"])):
                bad.append(f"{p.name}: step {smp['step']} sample {smp['sample']}")
    n = sum(len(p["initial"]) + sum(len(x["x"]) + len(x["y"]) for x in p["samples"]) for p in dump["params"])
    print(f"{s.name}: {len(dump['params'])} params, {n} values, {len(dump['hashes'])} raw hashes:",
          "match" if not bad else "MISMATCH " + "; ".join(bad[:5]))
    return not bad


def main():
    tool, paths = sys.argv[1], sys.argv[2:]
    results = [check(tool, p) for p in paths]
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
