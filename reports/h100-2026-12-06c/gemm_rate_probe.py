#!/usr/bin/env python3
"""How the dense GEMM rate behind the side by side's roofline depends on how long the GEMMs run.

`ns_side_by_side.py` takes the roofline's rate from torch.matmul at size³, issued back to back for
--chain-ms (2.5 ms) and timed as one, the median of 20 such chains with a synchronization between
them. bench_ns_cuda times our NS for at least 0.2 s without a pause. If the card cannot hold the
clock of a 2.5 ms burst for 0.2 s (power or temperature), the two are measured under different
conditions. This probe measures the same chain three ways, in one process:

  burst       the side by side's own measurement (its function, its arguments);
  sustained   the chain repeated with no idle time for --seconds, each chain timed: the rate per
              chain against the time since the first, summarized over windows;
  burst again after --rest seconds idle, to show the burst figure is not a one-off.

Each phase prints its wall-clock start and end (time.time(), seconds) so that a clock log taken
beside it (`nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,... -lms 20`) can be matched to
the phases. The JSON (--out-json) holds every chain's time.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import ns_side_by_side as sbs  # noqa: E402  (the roofline's own measurement, not a copy of it)

WINDOWS_MS = [(0, 10), (10, 50), (50, 200), (200, 1000), (1000, 2000), (2000, 5000)]


def sustained(torch, device, dtype, size, count, seconds):
    """The chain of `count` GEMMs repeated without idle time for `seconds`; (t_start_ms, ms) per chain."""
    a, b = sbs.square_operands(torch, device, dtype, size, 4097)
    c = torch.empty((size, size), device=device, dtype=dtype)
    events = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(count):
            torch.matmul(a, b, out=c)
        stop.record()
        events.append((start, stop))
        if len(events) % 64 == 0:   # keep the queue short enough that the host time stays meaningful
            events[-32][1].synchronize()
    torch.cuda.synchronize()
    first = events[0][0]
    return [(first.elapsed_time(s), s.elapsed_time(e)) for s, e in events]


def windows(chains, flop):
    out = []
    for lo, hi in WINDOWS_MS:
        ms = [d for t, d in chains if lo <= t < hi]
        if ms:
            med = statistics.median(ms)
            out.append({"from_ms": lo, "to_ms": hi, "chains": len(ms), "median_ms": med,
                        "tflops": flop / (med * 1e-3) / 1e12})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    ap.add_argument("--chain-ms", type=float, default=2.5)
    ap.add_argument("--seconds", type=float, default=3.0, help="how long the sustained phase runs")
    ap.add_argument("--rest", type=float, default=3.0, help="idle seconds before the second burst")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out-json")
    args = ap.parse_args(argv)
    import torch

    dtype, device = getattr(torch, args.dtype), "cuda"
    clock = sbs.Clock(torch, device)
    flop1 = 2 * args.size ** 3
    report = {"gpu": torch.cuda.get_device_name(0), "size": args.size, "dtype": args.dtype, "phases": []}

    def phase(name, fn):
        t0 = time.time()
        value = fn()
        t1 = time.time()
        print(f"phase {name}: wall {t0:.3f} .. {t1:.3f}", flush=True)
        report["phases"].append({"name": name, "wall_start": t0, "wall_end": t1, **value})

    one = sbs.gemm_tflops(clock, torch, device, dtype, args.size, args)
    phase("burst", lambda: {"tflops": sbs.gemm_tflops_back_to_back(clock, torch, device, dtype, args.size, one,
                                                                   args.chain_ms, args)})
    count = max(1, round(args.chain_ms * 1e-3 * one * 1e12 / flop1))

    def run_sustained():
        chains = sustained(torch, device, dtype, args.size, count, args.seconds)
        return {"gemms_per_chain": count, "windows": windows(chains, count * flop1), "chains": chains}

    phase("sustained", run_sustained)
    time.sleep(args.rest)
    phase("burst_again", lambda: {"tflops": sbs.gemm_tflops_back_to_back(clock, torch, device, dtype, args.size, one,
                                                                         args.chain_ms, args)})
    for p in report["phases"]:
        if "windows" in p:
            for w in p["windows"]:
                print(f"  {p['name']} {w['from_ms']:5d}-{w['to_ms']:5d} ms: {w['tflops']:6.1f} TFLOP/s "
                      f"({w['chains']} chains)")
        else:
            print(f"  {p['name']}: {p['tflops']:6.1f} TFLOP/s")
    if args.out_json:
        Path(args.out_json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
