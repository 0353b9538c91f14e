#!/usr/bin/env python3
"""The conformance matrix: every judged Muon implementation × version × invariant, from the published
verdict tables, as JSON (reports/conformance-matrix.json, schema schemas/conformance-matrix.schema.json)
and as one self-contained page (reports/conformance-matrix.html): summary first, failures first,
every cell linked to its report and repro line, each verdict's sensitivity shown.

    python3 scripts/conformance-matrix.py [--reports DIR] [--out-json FILE] [--out-html FILE]

Inputs (all under --reports, default reports/), one folder per implementation: deepspeed/verdicts.json.gz
and deepspeed/causes.json, torch/verdicts.json, and NAME/verdicts*.json of each third-party plugin
(schema muoncheck-impl-verdicts/1: rows in the same shape, declines and defects; verdicts-LABEL.json:
a run with registry fixes), and every implementation's sweep records NAME/sweeps/*.json.gz (`muoncheck
sweep --impl NAME --json`, published gzip-compressed; a plain NAME.json is read too: cases per dp, cases per minute, executed share, declines per knob, and
each failing case's attribution: explained by a registry fix, or new), and the plugins' registries
(--registries, default adapters/: NAME/known_defects.json), for the title and thread of each entry
that explained a sweep's cases (a defect found by sweeping). Nothing else is read; the output is a
function of those files.
"""
import argparse
import collections
import glob
import gzip
import html
import json
import os
import re
import sys

STATUSES = ["FAIL", "ERROR", "NOTE", "PASS", "INCONCLUSIVE", "SKIPPED", "UNSUPPORTED"]
EXECUTED = ("PASS", "FAIL", "NOTE")   # NOTE: a FAIL kept apart as replicated work (the verdict tables)
SCHEMA = "muoncheck-conformance-matrix/1"


def _load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def _row(impl, title, version, device, r, source):
    return {"implementation": impl, "title": title, "version": version, "device": device, "dp": int(r.get("dp", 1)),
            "scenario": r["scenario"], "invariants": r.get("invariants", {}), "repro": r.get("repro") or [],
            "config": r.get("config"), "fixes": r.get("fixes", []), "source": source}


def rows_from(reports):
    """Every verdict row, normalised: (rows, column metadata by (impl, version))."""
    rows, meta = [], {}
    ds = os.path.join(reports, "deepspeed", "verdicts.json.gz")
    if not os.path.exists(ds):
        ds = os.path.join(reports, "deepspeed", "verdicts.json")
    if os.path.exists(ds):
        for r in _load(ds)["rows"]:
            rows.append(_row("deepspeed", "DeepSpeed Muon", r["version"], r.get("device", "?"), r, "deepspeed/verdicts.md"))
            meta.setdefault(("deepspeed", r["version"]), {"plugin": {"module": "adapters/deepspeed/", "lines": None},
                                                          "upstream": "deepspeed/upstream/README.md"})
    tv = os.path.join(reports, "torch", "verdicts.json")
    if os.path.exists(tv):
        for r in _load(tv)["rows"]:
            rows.append(_row("torch", "torch.optim.Muon", r["torch"], r.get("device", "?"), r, "torch/verdicts.md"))
            meta.setdefault(("torch", r["torch"]), {"plugin": {"module": "adapters/torch/", "lines": None},
                                                    "upstream": "torch/upstream/"})
    for path in sorted(glob.glob(os.path.join(reports, "*", "verdicts*.json"))):
        d = _load(path)
        if d.get("schema") != "muoncheck-impl-verdicts/1":   # deepspeed's and torch's tables, read above
            continue
        rel = os.path.relpath(path, reports)
        for r in d["rows"]:
            rows.append(_row(d["implementation"], d["title"], d["version"], r.get("device", "cpu"), r, rel))
        meta[(d["implementation"], d["version"])] = {"plugin": d.get("plugin"), "declines": d.get("declines", []),
                                                     "defects": d.get("defects", []), "upstream": d.get("upstream"), "source": rel}
    for (impl, version), m in meta.items():
        m["sweeps"] = sweeps_of(reports, impl, version)
    return rows, meta


def sweep_summary(path, reports):
    """One sweep record (`muoncheck sweep --impl --json`) as the matrix shows it."""
    d = _load(path)
    dp = d.get("dp") or int((re.search(r"dp(\d+)", os.path.basename(path)) or re.search(r"(\d+)", "1")).group(1))
    cases, failing, errors, declined = (int(d.get(k) or 0) for k in ("cases_run", "failing_cases", "errors", "declined"))
    failing = failing or len(d.get("failures", []))
    draws = int(d.get("draws") or cases)
    by_knob = {k[len("knob "):]: n for k, n in (d.get("declines_by_feature") or {}).items() if k.startswith("knob ")}
    verdicts = collections.Counter((f.get("attribution") or {}).get("verdict", "unattributed") for f in d.get("failures", []))
    return {"dp": int(dp), "seed": d.get("seed"), "file": os.path.relpath(path, reports), "cases": cases,
            "pass": max(0, cases - failing - errors - declined), "fail": failing, "error": errors, "declined": declined,
            "minutes": round(float(d.get("seconds") or 0) / 60, 2), "cases_per_minute": round(float(d.get("cases_per_minute") or 0), 3),
            "budget_exhausted": bool(d.get("budget_exhausted")), "executed_share": round(float(d.get("executed_share") or 0), 4),
            "draws": draws, "declined_draws": int(d.get("declined_draws") or 0),
            "declined_by_knob": by_knob, "declined_share_by_knob": {k: round(n / draws, 4) for k, n in by_knob.items()} if draws else {},
            "declines_by_feature": {k: n for k, n in (d.get("declines_by_feature") or {}).items() if not k.startswith("knob ")},
            "explained": int(d.get("explained") or verdicts.get("explained", 0)), "new": int(d.get("new") or 0),
            "attribution": dict(verdicts),
            "explained_by": dict(collections.Counter(fix for f in d.get("failures", [])
                                                     if (f.get("attribution") or {}).get("verdict") == "explained"
                                                     for fix in f["attribution"].get("fixes", []))),
            "defects": [{"invariants": x.get("invariants", []), "message": (x.get("message") or "")[:300],
                         "occurrences": x.get("occurrences"), "repro": x.get("repro", ""),
                         "attribution": (x.get("attribution") or {}).get("verdict", "unattributed"),
                         "fixes": (x.get("attribution") or {}).get("fixes", [])} for x in d.get("defects", [])]}


def sweeps_of(reports, impl, version):
    """The sweep records of NAME/sweeps/ whose implementation is this version (a record names
    "TITLE VERSION"), by dp."""
    out = []
    folder = os.path.join(reports, impl, "sweeps")
    for path in sorted(glob.glob(os.path.join(folder, "*.json")) + glob.glob(os.path.join(folder, "*.json.gz"))):
        d = _load(path)
        if not isinstance(d, dict) or "cases_run" not in d:
            continue
        recorded = str(d.get("implementation", "")).split(" ")[-1]   # torch's carries its local tag: 2.15.0+cu132
        if " + " in version or recorded.split("+")[0] != version.split(" ")[0] or " " in version.strip():
            continue
        out.append(sweep_summary(path, reports))
    return sorted(out, key=lambda x: (x["dp"], x["file"]))


def _band(v):
    s = v.get("sensitivity") or {}
    b = s.get("band_over_update")
    return b if isinstance(b, (int, float)) else None


def _causes(reports):
    p = os.path.join(reports, "deepspeed", "causes.json")
    return _load(p)["causes"] if os.path.exists(p) else []


def _status(upstream):
    """A DeepSpeed cause's upstream state, from the words its table uses."""
    u = upstream.lower()
    if "(new" in u or "not filed" in u or "no upstream thread" in u:
        return "new"
    if "fixed in" in u:
        return "fixed upstream"
    return "known"


def defects_of(rows, meta, reports):
    out, seen = [], {}
    for c in _causes(reports):
        if c["cause"].startswith(("not a Muon verdict", "this trace conforms")):   # a partner's attribution, no defect
            continue
        key = (c["cause"], c.get("report", ""))
        if key in seen:   # one cause listed per version: one defect, its versions
            if c["version"] not in seen[key]["versions"]:
                seen[key]["versions"].append(c["version"])
            continue
        first = re.split(r"(?<=[a-z0-9)])[:;(]\s", c["cause"], maxsplit=1)[0]
        first = first if len(first) >= 16 else c["cause"]
        d = {"implementation": "deepspeed", "versions": [c["version"]], "title": first[:120],
             "detail": c["cause"], "invariants": c["invariants"], "scenarios": c["scenario"],
             "report": "deepspeed/verdicts.md", "upstream": c.get("report", ""), "status": _status(c.get("report", "")),
             "repro": ""}
        seen[key] = d
        out.append(d)
    for (impl, version), m in sorted(meta.items()):
        for d in m.get("defects", []):
            out.append({"implementation": impl, "versions": [version], **d})
    return out


def _thread_keys(report):
    """What names an entry's thread in another table's words: "#8439" for a GitHub issue or pull
    request, the file name of a report of ours."""
    m = re.search(r"github\.com/[^/]+/[^/]+/(?:issues|pull)/(\d+)", report)
    return {f"#{m.group(1)}"} if m else ({os.path.basename(report)} if report.endswith(".md") else set())


def sweep_defects(columns, registries, listed):
    """The registry entries that explained failing cases of a column's sweeps: a defect already
    listed for that version (the same fix, its thread named in its upstream text, or its report
    file its own) gains the fix
    and the cases; any other is a defect found by sweeping."""
    out = {}
    for c in columns:
        counts = collections.Counter()
        for s in c["sweeps"]:
            counts.update(s.get("explained_by", {}))
        path = os.path.join(registries, c["implementation"], "known_defects.json")
        entries = {e["id"]: e for e in (_load(path).get("defects", []) if os.path.exists(path) else [])}
        for fix, n in sorted(counts.items()):
            e = entries.get(fix)
            if e is None:
                continue
            keys = _thread_keys(e.get("report", ""))
            same = [d for d in listed if d["implementation"] == c["implementation"]
                    and (c["version"] in d["versions"] or "*" in d["versions"])
                    and (d.get("fix") == fix or any(k in d.get("upstream", "") or k == os.path.basename(d.get("report", ""))
                                                    for k in keys))]
            if same:   # the first such row, as a row per version and cause lists a thread once
                same[0].setdefault("fix", fix)
                same[0]["sweep_cases"] = same[0].get("sweep_cases", 0) + n
                continue
            d = out.setdefault((c["implementation"], fix), {
                "implementation": c["implementation"], "versions": [], "title": e["title"][:160],
                "invariants": e.get("invariants", []), "report": f"{c['implementation']}/sweeps/README.md"
                if c["implementation"] == "deepspeed" else "", "upstream": e.get("report", ""),
                "status": "known" if e.get("report", "").startswith("http") else "new",
                "repro": f"muoncheck verify --impl {c['implementation']} adapters/{c['implementation']}/{e['witness']}",
                "fix": fix, "sweep_cases": 0})
            d["versions"].append(c["version"])
            d["sweep_cases"] += n
    return list(out.values())


def matrix(reports, registries=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adapters")):
    rows, meta = rows_from(reports)
    invariants = []
    for r in rows:
        for k in r["invariants"]:
            if k not in invariants:
                invariants.append(k)
    columns = []
    for key in sorted({(r["implementation"], r["version"]) for r in rows}):
        mine = [r for r in rows if (r["implementation"], r["version"]) == key]
        m = meta.get(key, {})
        cells = {}
        for inv in invariants:
            counts = collections.Counter()
            worst, bands = None, []
            for r in mine:
                v = r["invariants"].get(inv)
                if not v:
                    continue
                st = v.get("status", "SKIPPED")
                counts[st] += 1
                if _band(v) is not None:
                    bands.append(_band(v))
                rank = (STATUSES.index(st) if st in STATUSES else 9, -(v.get("metric") or 0) / (v.get("threshold") or 1))
                if worst is None or rank < worst[0]:
                    repro = next((x for x in r["repro"] if x.endswith(" " + inv) or inv in x), r["repro"][0] if r["repro"] else "")
                    worst = (rank, {"scenario": r["scenario"], "dp": r["dp"], "device": r["device"], "status": st,
                                    "metric": v.get("metric"), "threshold": v.get("threshold"),
                                    "message": v.get("message", ""), "cause": v.get("cause", ""),
                                    "report": v.get("upstream_report") or v.get("report") or r["source"],
                                    "repro": repro, "band_over_update": _band(v)})
            status = next((s for s in STATUSES if counts[s]), "NONE")
            cells[inv] = {"status": status, "counts": {s: counts[s] for s in STATUSES if counts[s]},
                          "worst": worst[1] if worst else None,
                          "band_over_update_max": max(bands) if bands else None}
        verdicts = sum(sum(c["counts"].values()) for c in cells.values())
        executed = sum(c["counts"].get(s, 0) for c in cells.values() for s in EXECUTED)
        by_dp = collections.Counter(r["dp"] for r in mine)
        sweeps = m.get("sweeps", [])
        columns.append({
            "implementation": key[0], "title": mine[0]["title"], "version": key[1],
            "devices": sorted({r["device"] for r in mine}),
            "plugin": m.get("plugin"), "scenarios_by_dp": {str(k): v for k, v in sorted(by_dp.items())},
            "sweep_cases_by_dp": {str(dp): sum(s["cases"] for s in sweeps if s["dp"] == dp) for dp in sorted({s["dp"] for s in sweeps})},
            "sweeps": sweeps, "verdicts": verdicts, "executed": executed,
            "executed_share": round(executed / verdicts, 4) if verdicts else 0.0,
            "failing_invariants": sorted(k for k, c in cells.items() if c["status"] in ("FAIL", "ERROR")),
            "status": "FAIL" if any(c["status"] in ("FAIL", "ERROR") for c in cells.values()) else "PASS",
            "declines": m.get("declines", []), "source": m.get("source") or mine[0]["source"], "cells": cells})
    columns.sort(key=lambda c: (c["status"] != "FAIL", c["implementation"], c["version"]))
    defects = defects_of(rows, meta, reports)
    defects += sweep_defects(columns, registries, defects)
    verdicts = sum(c["verdicts"] for c in columns)
    executed = sum(c["executed"] for c in columns)
    return {
        "schema": SCHEMA,
        "inputs": sorted({r["source"] for r in rows} | {"deepspeed-causes.json"} & set(os.listdir(reports)) |
                         {s["file"] for c in columns for s in c["sweeps"]}),
        "summary": {"implementations": len({c["implementation"] for c in columns}), "columns": len(columns),
                    "failing_columns": sum(c["status"] == "FAIL" for c in columns),
                    "verdicts": verdicts, "executed": executed,
                    "executed_share": round(executed / verdicts, 4) if verdicts else 0.0,
                    "defects": len(defects), "new_defects": sum(d.get("status") == "new" for d in defects),
                    "declines": sum(d.get("count", 0) for c in columns for d in c["declines"])},
        "invariants": invariants, "columns": columns, "defects": defects}


def _a(href, text):
    return f'<a href="{html.escape(href)}">{html.escape(text)}</a>' if href else html.escape(text)


def _link(target):
    """A report reference as a relative link when it names a file of reports/, else plain text."""
    return target if re.match(r"^[\w./-]+\.(md|json|json\.gz|py)$", target or "") else ""


def page(m):
    s = m["summary"]
    css = ("body{font:14px system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0 20px}"
           "td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}th{background:#f4f4f4}"
           ".FAIL,.ERROR{background:#f8d0d0}.PASS{background:#d6f0d6}.SKIPPED,.UNSUPPORTED,.NONE{background:#eee;color:#777}"
           ".INCONCLUSIVE,.NOTE{background:#fff2c4}.big{font-size:20px;font-weight:600}small{color:#555}code{font-size:12px}")
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>Muon conformance matrix</title><style>{css}</style></head><body>",
           "<h1>Muon conformance matrix</h1>",
           f"<p class='big'>{s['implementations']} implementations, {s['columns']} versions: {s['failing_columns']} with a failing "
           f"invariant; {s['defects']} defects ({s['new_defects']} new); {s['executed']} of {s['verdicts']} verdicts executed "
           f"({100 * s['executed_share']:.0f}%); {s['declines']} declined cases.</p>",
           "<table><tr><th>implementation</th><th>version</th><th>status</th><th>failing invariants</th><th>executed</th>"
           "<th>scenarios by dp</th><th>sweep cases by dp</th><th>plugin lines</th></tr>"]
    for c in m["columns"]:
        plugin = c.get("plugin") or {}
        out.append(f"<tr><td>{html.escape(c['title'])}</td><td>{html.escape(c['version'])}</td><td class='{c['status']}'>{c['status']}</td>"
                   f"<td>{html.escape(', '.join(c['failing_invariants']) or '—')}</td>"
                   f"<td>{c['executed']}/{c['verdicts']} ({100 * c['executed_share']:.0f}%)</td>"
                   f"<td>{html.escape(json.dumps(c['scenarios_by_dp']))}</td><td>{html.escape(json.dumps(c['sweep_cases_by_dp']) if c['sweep_cases_by_dp'] else '—')}</td>"
                   f"<td>{plugin.get('lines') if plugin.get('lines') is not None else '—'}</td></tr>")
    out.append("</table><h2>Sweeps</h2><p><small>Each implementation's own configuration space drawn with the "
               "base scenario (`muoncheck sweep --impl NAME --installed --dp N`); a drawn configuration the plugin "
               "declines is drawn again and counted under its knob (share of the draws). A failing case is explained "
               "when a fix of the implementation's known-defect registry makes it conform, else new.</small></p>"
               "<table><tr><th>implementation</th><th>version</th><th>dp</th><th>cases</th><th>cases/min</th><th>executed</th>"
               "<th>declined draws by knob</th><th>failing: explained / new</th><th>record</th></tr>")
    for c in m["columns"]:
        for sw in c["sweeps"]:
            knobs = ", ".join(f"{k} {100 * v:.0f}%" for k, v in sorted(sw.get("declined_share_by_knob", {}).items(), key=lambda x: -x[1])) or "—"
            out.append(f"<tr><td>{html.escape(c['title'])}</td><td>{html.escape(c['version'])}</td><td>{sw['dp']}</td><td>{sw['cases']}</td>"
                       f"<td>{sw['cases_per_minute']:.2f}</td><td>{100 * sw.get('executed_share', 0):.0f}%</td><td>{html.escape(knobs)}</td>"
                       f"<td>{sw['fail']}: {sw.get('explained', 0)} / {sw.get('new', 0)}</td><td>{_a(_link(sw['file']), sw['file'])}</td></tr>")
    out.append("</table><h2>Defects</h2><table><tr><th>implementation</th><th>versions</th><th>defect</th><th>invariants</th>"
               "<th>report</th><th>repro</th><th>upstream</th><th>status</th><th>registry fix: sweep cases it explains</th></tr>")
    for d in sorted(m["defects"], key=lambda d: (d.get("status") != "new", d["implementation"])):
        out.append(f"<tr><td>{html.escape(d['implementation'])}</td><td>{html.escape(', '.join(d['versions']))}</td>"
                   f"<td>{html.escape(d['title'])}</td><td>{html.escape(', '.join(d.get('invariants', [])))}</td>"
                   f"<td>{_a(_link(d.get('report', '')), d.get('report', ''))}</td><td>{_a(_link(d.get('repro', '')), d.get('repro', ''))}</td>"
                   f"<td>{html.escape(d.get('upstream', ''))}</td><td>{html.escape(d.get('status', ''))}</td>"
                   f"<td>{html.escape(d['fix'] + ': ' + str(d.get('sweep_cases', 0))) if d.get('fix') else '—'}</td></tr>")
    out.append("</table><h2>Invariants × implementations</h2><p><small>Each cell: the worst verdict, its counts, and the "
               "largest band over one update (how large a change of one update the band could hide; — where the table "
               "does not record it). Hover for the worst case's message and repro line.</small></p><table><tr><th>invariant</th>")
    out += [f"<th>{html.escape(c['title'])}<br>{html.escape(c['version'])}</th>" for c in m["columns"]]
    out.append("</tr>")
    order = sorted(m["invariants"], key=lambda i: min((STATUSES.index(c["cells"][i]["status"]) if c["cells"][i]["status"] in STATUSES else 9)
                                                      for c in m["columns"]))
    for inv in order:
        out.append(f"<tr><th>{html.escape(inv)}</th>")
        for c in m["columns"]:
            cell = c["cells"][inv]
            w = cell["worst"] or {}
            counts = " ".join(f"{k} {v}" for k, v in cell["counts"].items()) or "—"
            band = cell["band_over_update_max"]
            tip = f"{w.get('scenario', '')} dp {w.get('dp', '')}: {w.get('message', '')}\n{w.get('cause', '')}\n{w.get('repro', '')}"
            href = _link(w.get("report", "")) or _link(c.get("source", ""))
            out.append(f"<td class='{cell['status']}' title='{html.escape(tip, quote=True)}'>{_a(href, cell['status'])}<br><small>{html.escape(counts)}"
                       f"<br>band {('%.2f' % band) if band is not None else '—'}</small></td>")
        out.append("</tr>")
    out.append("</table><h2>Declines</h2><table><tr><th>implementation</th><th>knob</th><th>reason</th><th>cases</th></tr>")
    for c in m["columns"]:
        for d in c["declines"]:
            out.append(f"<tr><td>{html.escape(c['title'])} {html.escape(c['version'])}</td><td>{html.escape(str(d.get('knob')))}</td>"
                       f"<td>{html.escape(d.get('reason', ''))}</td><td>{d.get('count', 0)}</td></tr>")
    out.append("</table><h2>Failing cells: repro lines</h2><ul>")
    for c in m["columns"]:
        for inv, cell in c["cells"].items():
            if cell["status"] in ("FAIL", "ERROR") and cell["worst"]:
                w = cell["worst"]
                out.append(f"<li>{html.escape(c['title'])} {html.escape(c['version'])} · {html.escape(inv)} · {html.escape(w['scenario'])} "
                           f"dp {w['dp']}: <code>{html.escape(w['repro'])}</code></li>")
    out.append(f"</ul><p><small>Generated by scripts/conformance-matrix.py from {html.escape(', '.join(m['inputs']))}.</small></p></body></html>")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reports", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reports"))
    ap.add_argument("--registries", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adapters"),
                    help="the folder of the plugins' known-defect registries (NAME/known_defects.json)")
    ap.add_argument("--out-json")
    ap.add_argument("--out-html")
    a = ap.parse_args(argv)
    m = matrix(a.reports, a.registries)
    out_json = a.out_json or os.path.join(a.reports, "conformance-matrix.json")
    out_html = a.out_html or os.path.join(a.reports, "conformance-matrix.html")
    with open(out_json, "w") as f:
        json.dump(m, f, indent=1, sort_keys=False)
        f.write("\n")
    with open(out_html, "w") as f:
        f.write(page(m))
    s = m["summary"]
    print(f"{s['columns']} columns, {s['defects']} defects, {s['executed']}/{s['verdicts']} verdicts executed -> {out_json}, {out_html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
