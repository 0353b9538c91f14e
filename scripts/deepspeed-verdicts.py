#!/usr/bin/env python3
"""Builds the DeepSpeed verdict table (version x dp x scenario x invariant) from `muoncheck verify` reports.

    scripts/deepspeed-verdicts.py [--into MD] [--sweep SWEEP_DEFECTS.json] [--keep OLD.json] OUT.json CAUSES.json TRACE_ROOT REPORT.json...
    scripts/deepspeed-verdicts.py --by-defect VERDICTS.json [SWEEP_DEFECTS.json]   (the grouped sections only)

reports/deepspeed/verdicts.md's generated part, re-rendered from the committed tables alone:

    scripts/deepspeed-verdicts.py --into reports/deepspeed/verdicts.md --sweep reports/deepspeed/sweep-defects.json \
        --keep reports/deepspeed/verdicts.json.gz reports/deepspeed/verdicts.json.gz reports/deepspeed/causes.json .traces

OUT.json and OLD.json may be NAME.json.gz (gzip-compressed, as reports/ publishes the table).

Each REPORT is the --report of one `muoncheck verify` over one DeepSpeed version's traces
(scripts/deepspeed-run.sh); a later report's row replaces an earlier one for the same version and
scenario. TRACE_ROOT holds the traces (TRACE_ROOT/ds-VERSION/NAME.trace.json) where they came
back; CAUSES.json maps FAILs to their analysed cause (one line each, with the upstream report).

A verdict is the judge's as the report gives it. Wasted Newton-Schulz work on a correct state is
the judge's to accept, and it does (properties/event_invariants.cpp): NS calls are counted per rank
(a matrix straddling two partitions is orthogonalised once on each), and one call on a skipped step
whose state stays bit-identical is a discarded update. Rows kept from renderings made before the
judge counted that way carry status NOTE with the note they were given; the "Notes" section lists
those as stored.

Each row carries the device its trace ran on (`H200`, or `cpu` for DeepSpeed's CPU accelerator,
scripts/deepspeed-run-cpu.sh), read from the trace; rows are keyed by version, scenario and device.
With --keep, the rows of OLD.json stay unless a report replaces them (e.g. the H200 rows while
CPU rows of new scenarios are added); their FAILs take their cause from CAUSES.json where one
matches (else they keep the cause they carry), so
`--keep OUT.json OUT.json CAUSES.json TRACES` with no report re-renders the table with the causes
analysed since. A row whose device is unknown (`?`: an earlier rendering whose traces all stayed
on the GPU machine) gives way to a GPU row of the same version and scenario.

With --sweep, the analysed counterexamples of `muoncheck sweep --impl deepspeed`
(reports/deepspeed/sweep-defects.json: per defect its cause, upstream report and the sweeps that
found it, with the minimal case, repro script and that script's exit and figures per version; the
file keeps one counterexample per sweep and defect plus every analysed one, and counts the rest)
join the FAILs by defect and get a section of their own. They are read from that file, never
copied into OUT.json. With --into MD the Markdown replaces the part of MD between its
`<!-- generated -->` and `<!-- end generated -->` lines instead of going to stdout.

Writes OUT.json (schema "muoncheck-deepspeed-verdicts/3": the rows) and prints the Markdown that
reports/deepspeed/verdicts.md carries: the table (one column per invariant the reports hold, in
their order, which is muoncheck's invariant table's, and the executed share per scenario: PASS,
FAIL and NOTE verdicts out of all), then every FAIL and every NOTE in one line each.
"""
import contextlib
import gzip
import io
import json
import os
import re
import sys

def read_json(path):
    """A JSON file, plain or gzip-compressed (NAME.json.gz: how the table is published)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def write_json(doc, path):
    """JSON with indent 1; gzip-compressed, byte for byte reproducible (no name, no time), for NAME.json.gz."""
    text = json.dumps(doc, indent=1)
    if not path.endswith(".gz"):
        open(path, "w").write(text)
        return
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as g:
        g.write(text.encode())


SHORT = {"PASS": "PASS", "FAIL": "**FAIL**", "NOTE": "note", "UNSUPPORTED": "UNSUP", "SKIPPED": "–"}


def load_trace(root, version, scenario):
    path = os.path.join(root, f"ds-{version}", f"{scenario}.trace.json")
    return json.load(open(path)) if os.path.exists(path) else None


def cause_for(causes, version, scenario, inv_id):
    for c in causes:
        if (c["version"] in ("*", version) and re.fullmatch(c["scenario"], scenario)
                and inv_id in c["invariants"]):
            return c
    return None


def attach_cause(entry, causes, version, scenario, inv_id):
    """A FAIL's analysed cause, its upstream report and the failing tensor. Without a matching cause
    the entry keeps the cause it carries (a kept row's, analysed before CAUSES.json held it), else
    "not analysed"."""
    c = cause_for(causes, version, scenario, inv_id)
    if c or "cause" not in entry:
        entry["cause"] = c["cause"] if c else "not analysed"
        entry["upstream_report"] = c.get("report") if c else None
    entry["tensor"] = where(entry["message"])


def drop_superseded(rows):
    """Rows of unknown device (`?`) that a GPU row of the same version and scenario replaces."""
    gpu = {(v, s) for (v, s, d) in rows if d not in ("?", "cpu")}
    for key in [k for k in rows if k[2] == "?" and k[:2] in gpu]:
        del rows[key]


def where(message):
    """The failing tensor, and the weights' own worst ratio when another tensor kind is the worst."""
    m = re.search(r"(?:worst|first divergence) at (step \d+ param \S+ \w+)", message)
    if not m:
        return None
    w = re.search(r"per tensor:.*?\bweight ([0-9.e+-]+|inf|nan) \(([^)]*)\)", message)
    if w and not m.group(1).endswith(" weight"):
        return f"{m.group(1)}; weights alone {w.group(1)} of the band ({w.group(2)})"
    return m.group(1)


def executed(invariants):
    """(executed, all): PASS, FAIL and NOTE verdicts count as executed."""
    return sum(1 for e in invariants.values() if e["status"] in ("PASS", "FAIL", "NOTE")), len(invariants)


def linked(report):
    return re.sub(r"([\w-]+\.md)", r"[\1](upstream/\1)", report) if report else "–"


def sweep_cell(x):
    """One sweep counterexample: where it came from, how often its defect fired, its minimal case."""
    return (f"sweep {x['device']} #{x['defect']} ({x['occurrences']} of {x['failing_cases']} failing cases): "
            f"[{os.path.basename(x['case'])}]({os.path.relpath(x['case'], 'reports/deepspeed')})")


def not_kept(d):
    """The counterexamples of a defect that sweep-defects.json counts but does not list."""
    n = d.get("counterexamples_not_kept", 0)
    return f"{n} more counterexample{'s' if n != 1 else ''} of the same sweeps" if n else ""


def print_by_defect(ordered, sweep=()):
    """The FAILs grouped by defect (their analysed cause): which versions and scenarios show it,
    through which invariants, and its upstream report; beside them the sweep counterexamples of the
    same defect (`--sweep`, reports/deepspeed/sweep-defects.json), each with its minimal case."""
    groups = {}
    for r in ordered:
        for inv_id, e in r["invariants"].items():
            if e["status"] != "FAIL":
                continue
            g = groups.setdefault(e.get("cause", "not analysed"), {"report": e.get("upstream_report"), "rows": {}})
            g["rows"].setdefault((r["version"], r["dp"], r["device"], r["scenario"]), []).append(inv_id)
    for d in sweep:
        g = groups.setdefault(d["cause"], {"report": d.get("report"), "rows": {}})
        g.setdefault("sweep", []).extend(d["counterexamples"])
        g["not_kept"] = g.get("not_kept", 0) + d.get("counterexamples_not_kept", 0)
    print("\n### FAILs by defect\n")
    print("Scenario rows, and the counterexamples of `muoncheck sweep --impl deepspeed` (a minimal case each; its "
          "repro script and numbers under \"Sweep counterexamples\" below).\n")
    print("| defect | report | 0.19.6 | 0.19.8 |")
    print("|---|---|---|---|")
    for cause, g in sorted(groups.items(), key=lambda kv: -len(kv[1]["rows"]) - len(kv[1].get("sweep", []))):
        cells = []
        for version in ("0.19.6", "0.19.8"):
            hits = [f"{name} (dp {dp} {device}: {', '.join(invs)})"
                    for (v, dp, device, name), invs in sorted(g["rows"].items()) if v == version]
            hits += [sweep_cell(x) for x in g.get("sweep", []) if x["version"] == version]
            cells.append("; ".join(hits) if hits else "–")
        more = f" ({not_kept({'counterexamples_not_kept': g['not_kept']})})" if g.get("not_kept") else ""
        print(f"| {cause}{more} | {linked(g['report'])} | {cells[0]} | {cells[1]} |")


def print_sweep(sweep):
    """Every sweep counterexample: its minimal case, its repro script and what that printed per version."""
    if not sweep:
        return
    print("\n### Sweep counterexamples\n")
    for d in sweep:
        more = f"; {not_kept(d)}" if not_kept(d) else ""
        print(f"- **{d['cause']}** ({d['verdict']}; {linked(d.get('report'))}{more})")
        for x in d["counterexamples"]:
            runs = "; ".join(f"{v}: exit {r['exit']}, {r['prints']}" for v, r in sorted(x.get("repro_runs", {}).items()))
            print(f"  - {x['version']} sweep on {x['device']} (`{x['sweep']}`, defect {x['defect']}, "
                  f"{x['occurrences']} of {x['failing_cases']} failing cases), lead symptom `{x['symptom']}`, needs "
                  f"{', '.join(x['needs'])}: `{x['case']}`; repro `{x['repro']}`" + (f" ({runs})" if runs else ""))


def device_of(trace):
    name = (trace or {}).get("implementation", {}).get("details", {}).get("device") or "?"
    return "cpu" if name == "cpu" else ("H200" if "H200" in name else name)


def main():
    if sys.argv[1] == "--by-defect":   # re-render the grouped sections from a verdicts JSON
        doc = read_json(sys.argv[2])
        sweep = json.load(open(sys.argv[3]))["defects"] if len(sys.argv) > 3 else []
        print_by_defect(doc["rows"], sweep)
        print_sweep(sweep)
        return
    args = sys.argv[1:]
    into = None
    if args[0] == "--into":
        into, args = args[1], args[2:]
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            render(args)
        splice(into, buffer.getvalue())
        return
    render(args)


def splice(path, generated):
    """Replaces the lines between MD's generated markers by the rendered Markdown."""
    text = open(path).read()
    begin, end = "<!-- generated -->\n", "<!-- end generated -->\n"
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        sys.exit(f"{path}: needs one '{begin.strip()}' line and one '{end.strip()}' line after it")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    open(path, "w").write(head + begin + generated + end + tail)


def render(args):
    rows, columns, sweep = {}, [], []
    if args[0] == "--sweep":
        sweep = json.load(open(args[1]))["defects"]
        args = args[2:]
    kept = []
    if args[0] == "--keep":
        kept = read_json(args[1])["rows"]
        args = args[2:]
    out_path, causes_path, trace_root, reports = args[0], args[1], args[2], args[3:]
    causes = json.load(open(causes_path))["causes"]
    for r in kept:
        r.setdefault("device", "H200")
        r.setdefault("executed", dict(zip(("executed", "of"), executed(r["invariants"]))))
        for inv_id, e in r["invariants"].items():
            if e["status"] == "FAIL":
                attach_cause(e, causes, r["version"], r["scenario"], inv_id)
        rows[(r["version"], r["scenario"], r["device"])] = r
        columns += [c for c in r["invariants"] if c not in columns]
    for path in reports:
        scenarios = json.load(open(path))["scenarios"]
        # One report's traces come from one machine: a trace too large to bring back takes the
        # device of the report's other traces.
        named = {s["scenario"]: re.match(r"(.*) \[(\S+) (\S+)\]$", s["scenario"]) for s in scenarios}
        traces = {k: load_trace(trace_root, m.group(3), m.group(1)) for k, m in named.items()}
        seen = sorted({device_of(t) for t in traces.values() if t})
        report_device = seen[0] if len(seen) == 1 else "?"
        for s in scenarios:
            columns += [v["id"] for v in s["invariants"] if v["id"] not in columns]
            m = named[s["scenario"]]
            name, version = m.group(1), m.group(3)
            trace = traces[s["scenario"]]
            dp = json.load(open(f"scenarios/deepspeed/{name}.json")).get("engine", {}).get("dp", 1)
            invariants = {}
            for v in s["invariants"]:
                entry = {"status": v["status"], "metric": v["metric"], "threshold": v["threshold"],
                         "message": v["message"]}
                if v["status"] == "FAIL":
                    attach_cause(entry, causes, version, name, v["id"])
                invariants[v["id"]] = entry
            device = device_of(trace) if trace else report_device
            rows[(version, name, device)] = {"implementation": m.group(2), "version": version, "scenario": name,
                                             "dp": dp, "device": device, "trace": s["source"],
                                             "scenario_hash": s["scenario_hash"], "invariants": invariants,
                                             "repro": s["repro"],
                                             "executed": dict(zip(("executed", "of"), executed(invariants)))}
    drop_superseded(rows)
    ordered = [rows[k] for k in sorted(rows, key=lambda k: (k[0], rows[k]["dp"], k[2] == "cpu", k[1]))]
    write_json({"schema": "muoncheck-deepspeed-verdicts/3", "rows": ordered}, out_path)

    print("| version | dp | device | scenario | executed | " + " | ".join(f"`{c}`" for c in columns) + " |")
    print("|---|---|---|---|---|" + "---|" * len(columns))
    for r in ordered:
        cells = [SHORT[r["invariants"][c]["status"]] if c in r["invariants"] else "–" for c in columns]
        n, m = executed(r["invariants"])
        share = f"{n}/{m} ({100.0 * n / m:.0f}%)" if m else "0/0"
        print(f"| {r['version']} | {r['dp']} | {r['device']} | {r['scenario']} | {share} | " + " | ".join(cells) + " |")
    for version in sorted({r["version"] for r in ordered}):
        n = sum(executed(r["invariants"])[0] for r in ordered if r["version"] == version)
        m = sum(executed(r["invariants"])[1] for r in ordered if r["version"] == version)
        print(f"\n{version}: executed {n} of {m} verdicts ({100.0 * n / max(m, 1):.1f}%)")
    print_by_defect(ordered, sweep)
    print_sweep(sweep)
    print("\n### Every FAIL: cause, tensor, repro\n")
    for r in ordered:
        for inv_id, e in r["invariants"].items():
            if e["status"] != "FAIL":
                continue
            repro = next((x for x in r["repro"] if x.endswith("--invariant " + inv_id)), "")
            repro = re.sub(r"/tmp/(\S*/)?muoncheck-traces/", ".traces/", repro)   # traces judged on the GPU machine (TMP_ROOT)
            tensor = f" — {e['tensor']}" if e.get("tensor") else ""
            print(f"- {r['version']} dp {r['dp']} {r['device']} `{r['scenario']}` {inv_id}{tensor}: {e['cause']}. "
                  f"`{repro}`")
    print("\n### Notes (not conformance failures)\n")
    for r in ordered:
        for inv_id, e in r["invariants"].items():
            if e["status"] == "NOTE":
                print(f"- {r['version']} dp {r['dp']} {r['device']} `{r['scenario']}` {inv_id}: {e['note']}")


if __name__ == "__main__":
    main()
