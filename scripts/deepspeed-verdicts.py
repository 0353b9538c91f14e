#!/usr/bin/env python3
"""Builds the DeepSpeed verdict table (version x scenario x invariant) from `muoncheck verify` reports.

    scripts/deepspeed-verdicts.py OUT.json REPORT.json...

Each REPORT is the --report of one `muoncheck verify` over one DeepSpeed version's traces
(scripts/deepspeed-run.sh). Writes OUT.json (schema "muoncheck-deepspeed-verdicts/1") and prints
the Markdown table that reports/deepspeed-verdicts.md carries.
"""
import json
import re
import sys

COLUMNS = ["trajectory-conforms", "ns-once-per-matrix-per-step", "tagging-matches", "gas-invariant",
           "stage-invariant", "overflow-skip-clean"]
SHORT = {"PASS": "PASS", "FAIL": "**FAIL**", "UNSUPPORTED": "UNSUP", "SKIPPED": "–"}


def main():
    out_path, reports = sys.argv[1], sys.argv[2:]
    rows = []
    for path in reports:
        report = json.load(open(path))
        for s in report["scenarios"]:
            m = re.match(r"(.*) \[(\S+) (\S+)\]$", s["scenario"])
            rows.append({"implementation": m.group(2), "version": m.group(3), "scenario": m.group(1),
                         "trace": s["source"], "scenario_hash": s["scenario_hash"],
                         "invariants": {v["id"]: {"status": v["status"], "metric": v["metric"],
                                                  "threshold": v["threshold"], "message": v["message"]}
                                        for v in s["invariants"]},
                         "repro": s["repro"]})
    json.dump({"schema": "muoncheck-deepspeed-verdicts/1", "rows": rows}, open(out_path, "w"), indent=1)
    print("| version | scenario | " + " | ".join(COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    for r in rows:
        cells = [SHORT[r["invariants"][c]["status"]] if c in r["invariants"] else "–" for c in COLUMNS]
        print(f"| {r['version']} | {r['scenario']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
