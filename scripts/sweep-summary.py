#!/usr/bin/env python3
"""The table of an implementation's published sweep records, read from the records alone.

    scripts/sweep-summary.py reports/deepspeed/sweeps          (writes reports/deepspeed/sweeps/README.md)

One row per record (`muoncheck sweep --impl ... --json FILE`; published gzip-compressed as
NAME.json.gz, `gzip -9n FILE`, read plain or compressed): where it ran, dp, cases, cases per
minute, the share of the drawn configurations declined and by which knobs, the harness's overhead
share, failing cases and how attribution by counterfactual explained them (explained by registry
fixes / NEW / other), the lead symptoms of the failures, and the command that reproduces it.
"""
import collections
import gzip
import json
import os
import sys


def read_record(path):
    """A sweep record, plain (NAME.json, as the sweep writes it) or as published (NAME.json.gz)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def load(folder):
    out = []
    for name in sorted(os.listdir(folder)):
        if name.endswith((".json", ".json.gz")):
            record = read_record(os.path.join(folder, name))
            if record.get("command") == "sweep" and record.get("impl"):
                out.append((name, record))
    return out


def declines(r):
    draws = r.get("draws") or r.get("cases_run") or 0
    by = sorted(r.get("declines_by_feature", {}).items(), key=lambda kv: -kv[1])
    parts = [f"{k.replace('knob ', '')} {100.0 * n / draws:.0f}%" for k, n in by if draws and 100.0 * n / draws >= 1]
    share = 100.0 * r.get("declined_draws", 0) / draws if draws else 0.0
    return f"{share:.0f}% ({', '.join(parts)})" if parts else f"{share:.0f}%"


def attribution(r):
    verdicts = collections.Counter(f.get("attribution", {}).get("verdict", "not asked") for f in r.get("failures", []))
    entries = (r.get("known_defects") or {}).get("entries")
    by = f" (registry of {entries} entries)" if entries is not None else ""
    return (", ".join(f"{n} {v}" for v, n in verdicts.most_common()) or "none") + by


def symptoms(r, top=4):
    lead = collections.Counter((f.get("symptoms") or ["?"])[0] for f in r.get("failures", []))
    return "; ".join(f"{n}× {s}" for s, n in lead.most_common(top))


def where(name, r):
    """The backend the implementation ran on (the record's command line), and the machine where the
    record's name says (`h100host`: the 16 CPU cores beside an H100; otherwise 2 CPU cores)."""
    gpu = "--backend cuda" in r.get("command_line", "")
    machine = "H100" if gpu else ("16-core host" if "h100host" in name else "2-core machine")
    return ("GPU" if gpu else "CPU") + f" ({machine})"


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    folder = argv[1]
    records = load(folder)
    if not records:
        sys.exit(f"{folder}: no sweep records (muoncheck sweep --impl ... --json FILE)")
    lines = ["# Sweep records", "",
             "Each row is one record in this folder, regenerated with the command beside it; this page with",
             f"`python3 scripts/sweep-summary.py {folder}`. Declines are configurations the plugin could not",
             "express, counted per knob and drawn again; overhead is the workers' time outside the implementation's",
             "own steps and engine set-up. Attribution: each failing case re-run under the registry's fixes",
             "(`explained` by a minimal set of them; `new` when it fails with every fix).", "",
             "| record | where | dp | cases | cases/min | declined draws | overhead | failing | attribution | lead symptoms |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in records:
        dp = r.get("dp", "?")
        lines.append(f"| [{name}]({name}) | {where(name, r)} | {dp} | {r.get('cases_run', 0)}{' (partial: the sweep was stopped)' if r.get('partial') else ''} | "
                     f"{r.get('cases_per_minute', 0):.1f} | {declines(r)} | {100 * r.get('overhead_share', 0):.0f}% | "
                     f"{len(r.get('failures', []))} | {attribution(r)} | {symptoms(r)} |")
    lines += ["", "Commands:", ""]
    for name, r in records:
        lines.append(f"- `{name}`: `{r.get('command_line', '?')}`")
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(os.path.join(folder, "README.md"))


if __name__ == "__main__":
    main(sys.argv)
