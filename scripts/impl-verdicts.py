#!/usr/bin/env python3
"""The verdict rows of one third-party plugin (reports/NAME/verdicts.json), from the reports of
`muoncheck verify --impl NAME --installed SCENARIO... --report FILE` (the generic resident worker runs
each scenario at its dp, with its re-split partners), and the implementation's curated defects
(reports/NAME/upstream/defects.json). Its sweeps are read by the matrix from reports/NAME/sweeps/.

    scripts/impl-verdicts.py NAME [--out FILE] --verify FILE [--verify FILE ...] [--fixes ID,...] [--label TEXT]

Every row keeps what the matrix shows: each invariant's status, metric, threshold, message and
sensitivity, the repro lines, the scenario's dp and the configuration that expressed it (the plugin's
from_scenario, asked here as the worker asks it). A scenario the plugin declines is counted under the
knob its reason names (`knob K: reason`).
"""
import argparse
import collections
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def plugin_facts(name):
    from adapters import plugins
    p = plugins.load(name)
    module = sys.modules[type(p).__module__].__file__
    facts = {"module": os.path.relpath(module, ROOT), "lines": sum(1 for _ in open(module))}
    registry = os.path.join(ROOT, "adapters", name, "known_defects.json")
    if os.path.exists(registry):
        facts["registry"] = os.path.relpath(registry, ROOT)
    return p, facts


def config_of(plugin, source):
    """The config the worker's from_scenario gives for the scenario file (None where declined)."""
    from adapters import worker
    from adapters.common import scenario
    try:
        answer = worker.answer(plugin, {"from_scenario": scenario.resolve(os.path.join(ROOT, source))["scenario"]})
    except Exception:   # a scenario muoncheck cannot resolve here: no config recorded
        return None
    return answer.get("config")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name")
    ap.add_argument("--out", help="default reports/NAME/verdicts.json (with --label: verdicts-LABEL.json)")
    ap.add_argument("--verify", action="append", default=[], required=True)
    ap.add_argument("--fixes", default="", help="the registry fixes the verify run applied (--fix), comma-separated")
    ap.add_argument("--label", default="", help="a run with registry fixes (e.g. fixed): appended to the version and the file name")
    a = ap.parse_args(argv)
    plugin, facts = plugin_facts(a.name)
    fixes = [f for f in a.fixes.split(",") if f]
    rows, declines = {}, collections.Counter()   # a later --verify report's row replaces an earlier one (a rerun)
    for path in a.verify:
        for sc in json.load(open(path))["scenarios"]:
            name, source = sc["scenario"].split(" [")[0], sc.get("source", "")
            dp = json.load(open(os.path.join(ROOT, source)))["engine"].get("dp", 1) if source else 1
            invariants = {v["id"]: {k: v.get(k) for k in ("status", "metric", "threshold", "message", "sensitivity")}
                          for v in sc.get("invariants", [])}
            why = None
            if invariants and all(v["status"] == "UNSUPPORTED" for v in invariants.values()):
                why = (invariants.get("trajectory-conforms") or next(iter(invariants.values())))["message"]
            rows[name] = ({"scenario": name, "dp": int(dp), "device": "cpu", "config": config_of(plugin, source) if source else None,
                           "fixes": fixes, "executed": sc.get("executed"), "error": None, "invariants": invariants,
                           "repro": [r + "".join(f" --fix {f}" for f in fixes) for r in (sc.get("repro") or [])]}, why)
    for _, why in rows.values():
        if why:
            m = re.match(r"knob (\S+): (.*)", why)
            declines[(m.group(1) if m else None, (m.group(2) if m else why).split(";")[0][:160])] += 1
    up = os.path.join(ROOT, "reports", a.name, "upstream", "defects.json")
    defects = json.load(open(up))["defects"] if os.path.exists(up) else []
    doc = {"schema": "muoncheck-impl-verdicts/1", "implementation": plugin.name, "title": plugin.title,
           "version": plugin.version() + (f" + {a.label}" if a.label else ""), "plugin": facts,
           "rows": [row for row, _ in rows.values()],
           "declines": [{"knob": k, "reason": r, "count": n} for (k, r), n in sorted(declines.items(), key=lambda x: -x[1])],
           "defects": [] if a.label else defects, "upstream": f"{a.name}/upstream/" if defects else None}
    out = a.out or os.path.join(ROOT, "reports", a.name, f"verdicts-{a.label}.json" if a.label else "verdicts.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{plugin.name} {plugin.version()}: {len(rows)} rows, {sum(declines.values())} declined -> {out}")


if __name__ == "__main__":
    sys.exit(main())
