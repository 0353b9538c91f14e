"""Compares two muoncheck JSON reports (ranks as threads, ranks as processes): every
scenario's verdicts (id, status, metric, threshold, and the message of an executed one) and
error must be equal; with --traces, two implementation traces must hold bit-identical
trajectories (the JSON with the wall-clock fields dropped); with --mutants, two `mutants
--json` reports the same kill table (per fault: status, the scenarios it ran on, what killed
it, the verdicts executed). Exit 1 on the first difference, naming it."""
import json
import sys

TIMING = {"seconds", "wall_seconds", "step_seconds", "collective_seconds", "timing", "time"}


def verdicts(path):
    report = json.load(open(path))
    out = {}
    for s in report["scenarios"]:
        out[s["scenario"]] = {
            "error": s.get("error"),
            # A SKIPPED/UNSUPPORTED verdict's message says why, which may name the route
            # ("needs 2 GPUs" beside "needs 2 rank processes"); an executed one's is compared.
            "verdicts": [(v["id"], v["status"], v.get("metric"), v.get("threshold"),
                          v.get("message") if v["status"] in ("PASS", "FAIL") else None)
                         for v in s.get("invariants", [])],
        }
    return out


def without_timing(x):
    if isinstance(x, dict):
        return {k: without_timing(v) for k, v in x.items() if k not in TIMING}
    if isinstance(x, list):
        return [without_timing(v) for v in x]
    return x


def kill_table(path):
    m = json.load(open(path))["mutants"]
    return m["control_clean"], {f["fault"]: (f["status"], f["scenarios"], f["kills"], f["executed"], f["verdicts"])
                                for f in m["faults"]}


def main(argv):
    if len(argv) == 4 and argv[1] == "--mutants":
        (clean_a, a), (clean_b, b) = kill_table(argv[2]), kill_table(argv[3])
        if clean_a != clean_b or not a or sorted(a) != sorted(b):
            print(f"FAIL: control clean {clean_a} vs {clean_b}, faults {sorted(a)} vs {sorted(b)}")
            return 1
        for fault in sorted(a):
            if a[fault] != b[fault]:
                print(f"FAIL: {fault}: threads {a[fault]} vs processes {b[fault]}")
                return 1
        print(f"{len(a)} faults: kill tables equal with ranks as threads and as processes")
        return 0
    if len(argv) == 4 and argv[1] == "--traces":
        a, b = (without_timing(json.load(open(p))) for p in argv[2:])
        if a != b:
            print(f"FAIL: traces differ: {argv[2]} vs {argv[3]}")
            return 1
        print(f"traces bit-identical: {argv[2]} = {argv[3]}")
        return 0
    threads, processes = verdicts(argv[1]), verdicts(argv[2])
    if sorted(threads) != sorted(processes):
        print(f"FAIL: scenarios differ: {sorted(threads)} vs {sorted(processes)}")
        return 1
    count = 0
    for name in sorted(threads):
        if threads[name] != processes[name]:
            for t, p in zip(threads[name]["verdicts"], processes[name]["verdicts"]):
                if t != p:
                    print(f"FAIL: {name}: threads {t} vs processes {p}")
                    return 1
            print(f"FAIL: {name}: threads {threads[name]} vs processes {processes[name]}")
            return 1
        count += len(threads[name]["verdicts"])
    if count == 0:
        print("FAIL: no verdicts to compare")
        return 1
    print(f"{len(threads)} scenarios, {count} verdicts: equal with ranks as threads and as processes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
