#!/usr/bin/env python3
"""Builds the torch.optim.Muon verdict table (torch version x device x parallelism x dp x dtype) from
`muoncheck verify` reports of scripts/torch-run.sh.

    scripts/torch-verdicts.py OUT.json OUT.md CAUSES.json [--keep OLD.json] REPORT.json...

Each REPORT is OUT_DIR/torch-VERSION-DEVICE.verify.json; its traces lie beside it in
OUT_DIR/torch-VERSION-DEVICE/ (the trace path a row names). A later report's row replaces an
earlier one for the same version, device and scenario; with --keep, the rows of an earlier table
(OLD.json) that no report replaces stay, with the trace format they were judged from (a row of
format /1 executed fewer invariants and is marked to be re-run). CAUSES.json maps FAILs to their
analysed cause (one line each, with the upstream report where there is one). Every SKIPPED
verdict's reason is listed once per invariant under "Not applicable".

A FAIL stays a FAIL, with the one exception scripts/deepspeed-verdicts.py keeps apart as a NOTE: an
`ns-once-per-matrix-per-step` failure where every matrix had exactly one NS call on each rank
(DDP's replicas; FSDP2, where every rank calls NS on its DTensor shard) — replicated work on a correct state, stated
with its cost. The `ranks agree` column is the adapter's own check: every rank's sha256 of its full
state (weights, momentum, Adam moments) after every step, from `implementation.details` (a trace of
format 1 cannot carry it for `verify`).
"""
import importlib.util
import json
import os
import re
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("deepspeed_verdicts", os.path.join(_here, "deepspeed-verdicts.py"))
ds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ds)


def replicated_note(inv_id, inv, trace):
    if inv["status"] != "FAIL" or inv_id != "ns-once-per-matrix-per-step":
        return None
    wasted = ds.wasted_ns(trace)
    if wasted is None or wasted[0]["skipped"]:
        return None
    extra, total = wasted
    if not extra["replicated"]:
        return None
    mode = trace["implementation"]["details"].get("parallelism")
    how = "each DDP replica orthogonalizes every matrix" if mode == "ddp" else \
        "every rank enters the NS of every matrix on its FSDP2 DTensor shard; the collectives DTensor issues inside it are the trace's ns_internal collectives"
    return f"one NS call per matrix on each rank ({how}): {extra['replicated']} of {total} NS calls are repeated work"


def row_for(s, trace, causes, version, device):
    name = re.match(r"(.*) \[", s["scenario"]).group(1)
    details = trace["implementation"]["details"] if trace else {}
    sj = trace["scenario"]["json"] if trace else {}
    e = sj.get("engine", {})
    invariants = {}
    for v in s["invariants"]:
        entry = {"status": v["status"], "metric": v["metric"], "threshold": v["threshold"], "message": v["message"]}
        note = replicated_note(v["id"], v, trace)
        if note:
            entry.update(status="NOTE", verify_status="FAIL", note=note)
        elif v["status"] == "FAIL":
            c = ds.cause_for(causes, version, name, v["id"])
            entry["cause"] = c["cause"] if c else "not analysed"
            entry["upstream_report"] = c.get("report") if c else None
            entry["tensor"] = ds.where(v["message"])
        invariants[v["id"]] = entry
    agree = details.get("ranks_agree")
    return {"torch": version, "device": device, "scenario": name, "trace_format": trace.get("format") if trace else None, "parallelism": details.get("parallelism", "–"),
            "stage": e.get("stage"), "dp": e.get("dp"), "dtype": e.get("param_dtype"), "trace": s["source"],
            "scenario_hash": s["scenario_hash"], "invariants": invariants, "repro": s["repro"],
            "ranks_agree": None if agree is None else bool(agree),
            "collectives_last_step_rank0": (details.get("collectives_by_rank") or [[None]])[-1][0]}


def main():
    out_json, out_md, causes_path, reports = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    causes = json.load(open(causes_path))["causes"]
    rows = {}
    if reports[:1] == ["--keep"]:
        for r in json.load(open(reports[1]))["rows"]:
            r.setdefault("trace_format", "muoncheck-trace/1")
            rows[(r["torch"], r["device"], r["scenario"])] = r
        reports = reports[2:]
    for path in reports:
        m = re.match(r"torch-(\S+)-(cpu|cuda)\.verify\.json$", os.path.basename(path))
        version, device = m.group(1), m.group(2)
        for s in json.load(open(path))["scenarios"]:
            trace = json.load(open(s["source"])) if os.path.exists(s["source"]) else None
            r = row_for(s, trace, causes, version, device)
            rows[(version, device, r["scenario"])] = r
    ordered = sorted(rows.values(), key=lambda r: (r["torch"], r["device"], r["dp"], r["stage"], r["dtype"]))
    for r in ordered:
        r["trace"] = os.path.relpath(r["trace"]) if not r["trace"].startswith("/tmp") else r["trace"]
    json.dump({"schema": "muoncheck-torch-verdicts/1", "rows": ordered}, open(out_json, "w"), indent=1)
    # One column per invariant the reports hold, in their order (muoncheck's invariant table's).
    columns = []
    for r in ordered:
        columns += [c for c in r["invariants"] if c not in columns]
    lines = ["| torch | device | parallelism | stage | dp | dtype | trace | executed | " + " | ".join(f"`{c}`" for c in columns)
             + " | ranks agree |",
             "|---|---|---|---|---|---|---|---|" + "---|" * (len(columns) + 1)]
    for r in ordered:
        cells = [ds.SHORT[r["invariants"][c]["status"]] if c in r["invariants"] else "–" for c in columns]
        agree = {True: "PASS", False: "**FAIL**", None: "–"}[r["ranks_agree"]]
        n, m = ds.executed(r["invariants"])
        share = f"{n}/{m} ({100.0 * n / m:.0f}%)" if m else "0/0"
        fmt = (r.get("trace_format") or "?").replace("muoncheck-trace", "")
        fmt += " (re-run)" if fmt == "/1" else ""
        lines.append(f"| {r['torch']} | {r['device']} | {r['parallelism']} | {r['stage']} | {r['dp']} | {r['dtype']} | {fmt} | {share} | "
                     + " | ".join(cells) + f" | {agree} |")
    lines += ["", "### Every FAIL: cause, tensor, repro", ""]
    fails = 0
    for r in ordered:
        for inv_id, e in r["invariants"].items():
            if e["status"] == "FAIL":
                fails += 1
                repro = next((x for x in r["repro"] if x.endswith("--invariant " + inv_id)), "")
                tensor = f" — {e['tensor']}" if e.get("tensor") else ""
                lines.append(f"- torch {r['torch']} {r['device']} `{r['scenario']}` {inv_id}{tensor}: {e['cause']}. `{repro}`")
        if r["ranks_agree"] is False:
            fails += 1
            lines.append(f"- torch {r['torch']} {r['device']} `{r['scenario']}` ranks agree: the ranks' state digests differ "
                         f"(implementation.details.digests_by_rank of {r['trace']})")
    if not fails:
        lines.append("None.")
    lines += ["", "### Notes (not conformance failures)", ""]
    for r in ordered:
        for inv_id, e in r["invariants"].items():
            if e["status"] == "NOTE":
                lines.append(f"- torch {r['torch']} {r['device']} `{r['scenario']}` {inv_id}: {e['note']}")
    lines += ["", "### Not applicable (SKIPPED), with the reason", ""]
    reasons = {}
    for r in ordered:
        for inv_id, e in r["invariants"].items():
            if e["status"] == "SKIPPED":
                reasons.setdefault(inv_id, {}).setdefault(e["message"], []).append(f"{r['torch']} {r['device']} {r['scenario']}")
    for inv_id, by_reason in reasons.items():
        for reason, where in by_reason.items():
            lines.append(f"- `{inv_id}`: {reason} ({len(where)} rows)")
    open(out_md, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
