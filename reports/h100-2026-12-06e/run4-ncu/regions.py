"""Where the triangle kernel's warps were sampled, from ncu's source page (ncu/sass-K.csv.gz):
the main loop (instructions executed once a k-step a multiplying warp), the turn barrier, the
epilogue (instructions after the main loop, bar the final cluster barrier and the copier's loop),
the final cluster barrier, the copier's loop and the waits' out-of-line retry loops; and the epilogue's stall reasons."""
import collections, csv, gzip, sys

for k in sys.argv[1:] or ["4096", "14336"]:
    table = list(csv.reader(gzip.open(f"ncu/sass-{k}.csv.gz", "rt")))
    header = table[1]
    rows = [dict(zip(header, r)) for r in table[2:] if len(r) == len(header)]
    samples = lambda r: int(r["Warp Stall Sampling (All Samples)"] or 0)
    executed = lambda r: int(r["Instructions Executed"] or 0)
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    total = sum(map(samples, rows))
    loop = max(set(map(executed, rows)), key=lambda n: sum(samples(r) for r in rows if executed(r) == n and "HGMMA" in r["Source"]))
    copier = 132 * 4 * int(k) // 64   # blocks × pairs a block × k-steps (one thread a block)
    last_loop = max(int(r["Address"], 16) for r in rows if executed(r) == loop)
    region = collections.Counter()
    epilogue_stalls = collections.Counter()
    for r in rows:
        if "UCGABAR_WAIT" in r["Source"]:
            key = "final cluster barrier"
        elif executed(r) == loop:
            key = "main loop"
        elif executed(r) == copier:
            key = "copier loop"
        elif "BRA" in r["Source"] and stalls and int(r["stall_barrier"] or 0) > 0.5 * samples(r) > 0 and int(r["Address"], 16) < last_loop:
            key = "turn barrier"
        elif executed(r) > loop:
            key = "barrier retry loops"   # the waits' out-of-line spins
        elif int(r["Address"], 16) > last_loop:
            key = "epilogue"
            for s in stalls:
                epilogue_stalls[s] += int(r[s] or 0)
        else:
            key = "other"
        region[key] += samples(r)
    print(f"K = {k}: {total} samples")
    for key, n in region.most_common():
        print(f"  {key:24s} {100 * n / total:5.1f} %")
    e = sum(epilogue_stalls.values()) or 1
    print("  epilogue stalls: " + ", ".join(f"{s[6:]} {100 * n / e:.0f} %" for s, n in epilogue_stalls.most_common(6)))
