#!/usr/bin/env python3
"""The verdict rows of one third-party plugin (reports/impl-verdicts/NAME-VERSION.json), from the
`muoncheck verify` reports scripts/impl-run.sh writes, the sweep records of scripts/impl-sweep.py,
and the implementation's curated defects (reports/NAME-upstream/defects.json).

    scripts/impl-verdicts.py NAME OUT.json --verify FILE [--verify FILE ...] [--sweep FILE ...]

Every row keeps what the matrix shows: each invariant's status, metric, threshold, message and
sensitivity (the band over one update), and the repro lines. Declines are counted by knob from the
traces' `unsupported` lines (`knob K: reason`) and the sweeps' records.
"""
import argparse
import collections
import glob
import importlib.util
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
_spec = importlib.util.spec_from_file_location("deepspeed_verdicts", os.path.join(ROOT, "scripts", "deepspeed-verdicts.py"))
ds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ds)


def replicated_note(inv_id, inv, trace):
    """The one FAIL kept apart as a NOTE (as scripts/torch-verdicts.py does): ns-once-per-matrix-per-step
    where every matrix had exactly one NS call on each rank — a replicated optimizer's repeated work."""
    if inv["status"] != "FAIL" or inv_id != "ns-once-per-matrix-per-step" or not trace:
        return None
    wasted = ds.wasted_ns(trace)
    if wasted is None or wasted[0]["skipped"] or not wasted[0]["replicated"]:
        return None
    return f"one NS call per matrix on each rank (replicated): {wasted[0]['replicated']} of {wasted[1]} NS calls are repeated work"


def plugin_facts(name):
    from adapters import plugins
    p = plugins.load(name)
    module = sys.modules[type(p).__module__].__file__
    lines = sum(1 for _ in open(module))
    reg = module.replace(".py", "_fixes.py")
    return p, {"module": os.path.relpath(module, ROOT), "lines": lines,
               **({"registry": os.path.relpath(reg, ROOT)} if os.path.exists(reg) else {})}


def _entry(v, trace):
    e = {k: v.get(k) for k in ("status", "metric", "threshold", "message", "sensitivity")}
    note = replicated_note(v["id"], v, trace)
    if note:
        e.update(status="NOTE", verify_status="FAIL", note=note)
    return e


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name")
    ap.add_argument("out")
    ap.add_argument("--verify", action="append", default=[])
    ap.add_argument("--sweep", action="append", default=[])
    ap.add_argument("--label", default="", help="appended to the version (e.g. \"+ fixes\" for a run with registry fixes)")
    a = ap.parse_args(argv)
    plugin, facts = plugin_facts(a.name)
    rows, declines = {}, collections.Counter()   # a later --verify report's row replaces an earlier one (a rerun)
    for path in a.verify:
        rep = json.load(open(path))
        folder = os.path.dirname(path)
        for sc in rep["scenarios"]:
            name = sc["scenario"].split(" [")[0]
            trace = os.path.join(folder, f"{name}.trace.json")
            t = json.load(open(trace)) if os.path.exists(trace) else {}
            impl = t.get("implementation", {})
            why = t.get("unsupported")
            details = impl.get("details", {}) if isinstance(impl, dict) else {}
            dp = details.get("world_size") or t.get("scenario", {}).get("engine", {}).get("dp", 1)
            rows[name] = ({"scenario": name, "dp": int(dp), "device": "cpu",
                         "config": (details.get("plugin") or {}).get("config"), "fixes": (details.get("plugin") or {}).get("fixes", []),
                         "executed": sc.get("executed"), "error": (sc.get("error") or {}).get("message"),
                         "invariants": {v["id"]: _entry(v, t) for v in sc.get("invariants", [])},
                         "repro": sc.get("repro") or []}, why)
    for _, why in rows.values():
        if why:
            m = re.match(r"knob (\S+): (.*)", why)
            declines[(m.group(1) if m else None, (m.group(2) if m else why).split(";")[0][:160])] += 1
    rows = [row for row, _ in rows.values()]
    sweeps = []
    for path in a.sweep:
        s = json.load(open(path))
        sweeps.append(s["summary"])
        for c in s["cases"]:
            if c["status"] == "DECLINED":
                m = re.match(r"knob (\S+): (.*)", c["why"])
                declines[(m.group(1) if m else None, (m.group(2) if m else c["why"]).split(";")[0][:160])] += 1
    up = os.path.join(ROOT, "reports", f"{a.name}-upstream", "defects.json")
    defects = json.load(open(up))["defects"] if os.path.exists(up) else []
    doc = {"schema": "muoncheck-impl-verdicts/1", "implementation": plugin.name, "title": plugin.title,
           "version": plugin.version() + (f" {a.label}" if a.label else ""), "plugin": facts, "rows": rows, "sweeps": sweeps,
           "declines": [{"knob": k, "reason": r, "count": n} for (k, r), n in sorted(declines.items(), key=lambda x: -x[1])],
           "defects": [] if a.label else defects, "upstream": f"{a.name}-upstream/" if defects else None}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{plugin.name} {plugin.version()}: {len(rows)} rows, {len(sweeps)} sweeps, {sum(declines.values())} declines -> {a.out}")


if __name__ == "__main__":
    sys.exit(main())
