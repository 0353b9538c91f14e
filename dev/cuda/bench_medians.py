#!/usr/bin/env python3
"""Each benchmark's median per program over Google Benchmark JSON files named PROGRAM-ROUND.json
(scripts/gpu-run.sh alternate writes them): one line per benchmark and program, the median and
every run's time, the programs of one benchmark side by side. Aggregates (repetitions' medians,
means) are left out; a file that is not whole JSON (a process killed while writing) is named and
skipped."""
import json
import os
import re
import statistics
import sys


def benchmark_name(name):
    """The name without Google Benchmark's suffixes (/min_time:…, /iterations:…, /repeats:…, /manual_time)."""
    return re.sub(r"/(min_time|iterations|repeats):[^/]*|/manual_time", "", name)


def main(paths):
    times = {}   # (benchmark, program) -> [ms]
    for path in paths:
        program = os.path.basename(path).rsplit("-", 1)[0]
        try:
            with open(path) as f:
                runs = json.load(f)["benchmarks"]
        except (OSError, ValueError, KeyError) as e:
            print(f"bench_medians: {path}: skipped ({type(e).__name__}: {e})", file=sys.stderr)
            continue
        for run in runs:
            if run.get("run_type") == "aggregate" or "real_time" not in run:
                continue
            times.setdefault((benchmark_name(run["name"]), program), []).append(run["real_time"])
    if not times:
        print("bench_medians: no benchmark runs in " + (" ".join(paths) or "no files"), file=sys.stderr)
        return 1
    width = max(len(b) for b, _ in times)
    pwidth = max(len(p) for _, p in times)
    for (bench, program), v in sorted(times.items()):
        runs = ", ".join(f"{x:.4f}" for x in v)
        print(f"{bench:{width}s}  {program:{pwidth}s}  median {statistics.median(v):.4f} ms  ({runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
