#!/usr/bin/env python3
"""Newton–Schulz side by side: muoncheck's bench_ns_cuda against DeepSpeed's and torch.optim.Muon's NS.

For each shape of bench_ns_cuda (1024², 4096², 4096×14336, per-head 64×(128×4096)) this times
DeepSpeed's `zeropower_via_newtonschulz5` (standard, bf16) and, for the non-square shapes,
`zeropower_via_gram_newtonschulz` (gram, fp16), and torch.optim.Muon's
`torch.optim._muon._zeropower_via_newtonschulz` (standard, bf16; the one NS torch has, so it
stands beside the gram rows too), each eager and under torch.compile, in this process on the
same GPU, and prints ms per call beside ours with the ratios best(eager, compiled) / ours.
Ours come from bench_ns_cuda's JSON output (--bench-json, the median of its repetitions) or
from running it (--bench-bin).

The roofline, per row, from numbers of this run: the flop count of our algorithm with every
symmetric product (X·Xᵀ, A·A; in gram every m×m product, all polynomials in R) counted as its
lower triangle with the diagonal, m(m+1)·k, and every other product in full, 2·m·n·k
(`ns_flops`; bench_ns_cuda reports its own count as the counter "roofline GFLOP" and a
disagreement is printed and recorded); the dense GEMM rate cuBLAS reaches at 4096³ in the row's
dtype, timed by bench_ns_cuda beside our NS and the same way (`gemm_square_*/4096`); and the
share of that rate our time reaches. The rate depends on how long the card has been busy: an H100
at its 700 W limit holds about 1450–1600 MHz, against 1980 MHz for the first tens of
milliseconds after idle, so a rate and a time are compared only when
they were timed the same way: sustained (calls back to back, as our table times the NS) and
cold (after idle, the median of the calls in the first 30 ms), both from the bench. The roofline
target asks both.
torch.matmul's rate here (the higher of the median of single calls and the same GEMM back to
back for --chain-ms, after idle: "torch burst", a burst at the top clock)
is kept beside them for comparison. Per-head
rows add the memory-traffic floor (`traffic_passes`): the bytes our launches must move between
memory and the chip (X-sized and m×m-sized passes, each read or write once) and the floor of a
fused kernel that keeps A and B on chip and takes aX from the operand tile, and, where our resident
kernel can run (`resident_passes`: the standard method, m ≤ 128, n ≤ 4096; whether the default
takes it is bench_ns_cuda's counter "resident"), its own floor: X read once
and NS(X) written once, the iterations on chip; all in ms at the device-to-device copy bandwidth
measured here.

Each ratio to a peer is split in two (`ds_flop_ratio` · `ds_per_flop`, the same for torch): the
peer's flops over ours (its algorithm computes every product in full: `ns_flops(...,
symmetric=False)`), and how much faster per flop our run is. At 4096² the standard flop ratio is
3m/(2m + 1) ≈ 1.5, so a 1.5× target there asks our GEMMs to be as fast per flop as DeepSpeed's.

torch.optim.Muon's function takes 2-D matrices only (ValueError otherwise): a per-head shape is
timed as torch.optim.Muon users would have to run it, one call per head. Its input is already
bf16 (as ours and DeepSpeed's are in the NS dtype); torch 2.11's `grad.bfloat16()` then returns
the input itself and normalizes it in place, which leaves its timing unchanged.

On a machine without a GPU (--device cpu; tests/bench/ns_side_by_side_test.py) the same code
runs on tiny shapes (--shapes), timed with perf_counter, so that the GPU run cannot fail on a
typo; its numbers mean nothing.

How DeepSpeed calls them, and how this script does (deepspeed/runtime/zero/muon/original_muon.py):
  - The functions are taken from DeepSpeed's own file, read out of the sdist or wheel
    (--deepspeed: .tar.gz, .whl or an unpacked tree); nothing of it is re-typed here. The
    module's three imports are stubbed so that `deepspeed` need not be installed (hjson,
    pydantic, ...): `deepspeed.comm` (unused by the NS functions), `deepspeed.runtime.compiler`
    whose `compile()` returns `torch.compile` exactly as DeepSpeed's does when torch has it,
    and `get_accelerator()` answering is_fp16_supported / is_bf16_supported as CUDA does.
  - Decorated `@compiler.compile()`, i.e. `@torch.compile` with default arguments: that is
    "compiled". "Eager" is the undecorated function (`_torchdynamo_orig_callable`).
  - dtype: `ns_compute_dtype` — bf16 for standard, fp16 for gram on a GPU with both; the
    coefficients (3.4445, -4.7750, 2.0315) are the functions' own; steps=5 as `muon_update`
    passes by default. Per-head: `_per_head_orthogonalize` passes a (heads, head_dim, n) view,
    so the batched 3-D call is timed.
  - Input: seeded uniform values in [-1, 1) already in the NS dtype, as bench_ns_cuda feeds
    ours (DeepSpeed's gram still normalizes an fp16 input in fp32, as its code does).
  - Each (function, shape) is compiled fresh (torch._dynamo.reset()), so compiled code is
    specialized to static shapes — DeepSpeed's best case; the first call (compilation) is
    reported separately and not timed.
Timing: CUDA events around each call, each call waited for, as bench_ns_cuda times ours, under
its two protocols, so that every ratio pairs figures timed the same way:
  - sustained: calls back to back, the first --sustained-warm-s seconds not counted (the card
    reaches its power limit under them), then the median of the calls in --sustained-s seconds;
    against our sustained time (the bench's headline);
  - cold: after --cold-idle-s idle seconds, one call, then the median of the calls in the first
    --cold-window-ms; against our cold time, for the shapes the bench times cold.
  - burst, kept beside them: --warmup calls, then the median of --iters. It is not timed the
    way ours is, so no ratio pairs it with our sustained time as a like-for-like figure.

Run on the GPU machine (scripts/gpu-run.sh ns does all of it):
  python3 bench/ns_side_by_side.py --bench-json bench-ns.json \
      --deepspeed .whl/ds-0.19.8/deepspeed-0.19.8-py3-none-any.whl --out-json side.json --out-md side.md
The JSON (--out-json) is the report; the Markdown table and the console lines are views of its rows.
"""
import argparse
import datetime
import functools
import importlib.util
import inspect
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import types
import zipfile

SHAPES = [  # bench_ns_cuda's name, batch, m, n
    ("1024x1024", 1, 1024, 1024),
    ("4096x4096", 1, 4096, 4096),
    ("4096x14336", 1, 4096, 14336),
    ("per_head_64x128x4096", 64, 128, 4096),
]
# bench_ns_cuda's benchmark prefix, our method, DeepSpeed's function, dtype name, square shapes too
CONFIGS = [
    ("ns_standard_bf16", "standard", "zeropower_via_newtonschulz5", "bfloat16", True),
    ("ns_gram_fp16", "gram", "zeropower_via_gram_newtonschulz", "float16", False),
]
MODULE = "deepspeed/runtime/zero/muon/original_muon.py"
STEPS = 5
TORCH_COEFFICIENTS = (3.4445, -4.7750, 2.0315)   # torch.optim.Muon's defaults (its DEFAULT_A/B/C)
TORCH_EPS = 1e-7


def shape_name(batch, m, n):
    return f"{m}x{n}" if batch == 1 else f"per_head_{batch}x{m}x{n}"


def parse_shapes(text):
    """"MxN" or "BATCHxMxN" (a per-head batch), comma-separated; m ≤ n, as bench_ns_cuda's shapes."""
    out = []
    for item in text.split(","):
        dims = [int(d) for d in item.strip().split("x")]
        batch, m, n = dims if len(dims) == 3 else (1, *dims)
        if len(dims) not in (2, 3) or min(batch, m, n) < 1 or m > n:
            raise SystemExit(f"ns_side_by_side: --shapes: {item!r} is not MxN or BATCHxMxN with m <= n")
        out.append((shape_name(batch, m, n), batch, m, n))
    return out


def triangle(m, k):
    """A symmetric m×m product over inner dimension k, lower triangle with the diagonal."""
    return m * (m + 1) * k


def full(m, n, k):
    return 2 * m * n * k


def ns_flops(method, batch, m, n, steps=STEPS, symmetric=True):
    """The NS algorithm's flops, m ≤ n: ours with symmetry counted (NsDevice::flops's `symmetric`);
    with symmetric=False every product in full, as DeepSpeed's functions and torch.optim.Muon's
    compute them (the same products in the same order; gram on a square matrix is the standard
    loop in DeepSpeed's function as in ours)."""
    sym = triangle if symmetric else (lambda rows, k: full(rows, rows, k))
    if method == "standard" or m == n:
        return batch * steps * (sym(m, n) + sym(m, m) + full(m, n, m))
    f, have_q = sym(m, n), False                      # R = XXᵀ
    for i in range(steps):
        if i == 2:                                    # restart: X = QX, R = XXᵀ
            f += (full(m, n, m) if have_q else 0) + sym(m, n)
            have_q = False
        f += sym(m, m) + (sym(m, m) if have_q else 0)   # Z = bR + cR²; Q = aQ + ZQ
        have_q = True
        if i < steps - 1 and i + 1 != 2:
            f += 2 * sym(m, m)                        # T = aR + ZR; R = aT + ZT
    return batch * (f + (full(m, n, m) if have_q else 0))   # QX


def per_flop(speed_ratio, flop_ratio):
    """How much faster per flop our run is than a peer's: a speed ratio is the peer's extra flops
    (the algorithm) times this (the kernels)."""
    return speed_ratio / flop_ratio


def traffic_passes(method, m, n, steps=STEPS):
    """(X-sized passes, m×m-sized passes) between memory and the chip for one matrix, m ≤ n: as our
    launches run (ns_cuda.cu: each operand read once per GEMM, C read, D written; the normalization
    reads X twice and writes it once), and for a fused kernel (A, B and every m×m matrix on chip, aX
    taken from the operand tile, the scaling folded into the first read: X read for the norm, then
    each product over X reads it once and each X-sized result is written once)."""
    if method == "standard" or m == n:
        launched = (3 + 4 * steps, 6 * steps)          # XXᵀ: X, A; B = cA² + bA: 3 reads + 1 write; BX + aX: B, X, X, X'
        fused = (1 + 3 * steps, 0)
        return launched, fused
    x, mm, have_q = 3 + 1, 1, False                   # normalize; R = XXᵀ
    for i in range(steps):
        if i == 2:
            x, mm = x + (3 if have_q else 0) + 1, mm + (1 if have_q else 0) + 1
            have_q = False
        mm += 4 + (4 if have_q else 1)                # Z (square: A, B, C read, D written); Q = aQ + ZQ or Z + aI
        have_q = True
        if i < steps - 1 and i + 1 != 2:
            mm += 8
    x, mm = x + (3 if have_q else 0), mm + (1 if have_q else 0)   # QX: X read, output written (+ C = output slot)
    fused = (1 + 1 + (2 + 1 if steps > 2 else 0) + 2, 0)
    return (x, mm), fused


def resident_passes(method, m, n):
    """X-sized passes of our resident kernel (impl/math/cuda/ns_resident.hpp: one read, one write),
    None where it cannot run (it takes the standard method, or gram of a square matrix)."""
    standard = method == "standard" or m == n
    return 2 if standard and m <= 128 and m <= n <= 4096 else None


def read_module_source(path):
    """DeepSpeed's original_muon.py and the version, from an sdist, a wheel or a tree."""
    base = os.path.basename(path.rstrip("/"))
    version = base.replace("deepspeed-", "").split("-")[0].replace(".tar.gz", "")
    if os.path.isdir(path):
        for root in (path, *[os.path.join(path, d) for d in sorted(os.listdir(path))]):
            f = os.path.join(root, MODULE)
            if os.path.isfile(f):
                with open(f, encoding="utf-8") as fh:
                    return fh.read(), version
    elif path.endswith(".whl"):
        with zipfile.ZipFile(path) as z:
            return z.read(MODULE).decode("utf-8"), version
    else:
        with tarfile.open(path) as t:
            for member in t.getmembers():
                if member.name.endswith("/" + MODULE):
                    return t.extractfile(member).read().decode("utf-8"), version
    sys.exit(f"ns_side_by_side: {MODULE} not found in {path}")


def load_deepspeed_ns(source, device="cuda", backend="inductor"):
    """Executes DeepSpeed's module with its three imports stubbed (see the header)."""
    import torch

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__path__ = []  # a package, so submodule imports resolve through sys.modules
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    class CudaAccelerator:  # what deepspeed.accelerator's CUDA accelerator answers on a GPU (a CPU: both)
        def is_fp16_supported(self):
            return True

        def is_bf16_supported(self):
            return device != "cuda" or torch.cuda.is_bf16_supported()

    accelerator = CudaAccelerator()
    ds = module("deepspeed")
    ds.comm = module("deepspeed.comm")
    ds.runtime = module("deepspeed.runtime")
    # deepspeed/runtime/compiler.py: `def compile(): return torch.compile if hasattr(torch, "compile") ...`
    # (another --compile-backend, for the CPU test only, is passed to that torch.compile)
    compile_fn = torch.compile if backend == "inductor" else functools.partial(torch.compile, backend=backend)
    ds.runtime.compiler = module("deepspeed.runtime.compiler", compile=lambda: compile_fn)
    ds.accelerator = module("deepspeed.accelerator", get_accelerator=lambda: accelerator)
    # From a real file, so that tracebacks and torch.compile see DeepSpeed's own lines.
    path = os.path.join(tempfile.mkdtemp(prefix="ds-ns-"), MODULE)
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location("deepspeed.runtime.zero.muon.original_muon", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def eager_of(fn):
    return getattr(fn, "_torchdynamo_orig_callable", None) or inspect.unwrap(fn)


class Clock:
    """Milliseconds per call on the device: CUDA events, or perf_counter on the CPU. Each call is
    timed alone and waited for, as bench_ns_cuda times ours (`time_ms`)."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device == "cuda"

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def call_ms(self, call):
        if self.cuda:
            start, stop = self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop)
        t0 = time.perf_counter()
        call()
        return (time.perf_counter() - t0) * 1e3

    def check_finite(self, call):
        y = call()
        self.sync()
        if y is not None and not self.torch.isfinite(y).all():
            raise RuntimeError("non-finite output")

    def median_ms(self, call, warmup, iters):
        """`warmup` calls, then the median of `iters`: a burst of a few tens of milliseconds."""
        for _ in range(warmup - 1):
            call()
        self.check_finite(call)
        return statistics.median(self.call_ms(call) for _ in range(iters))

    def sustained_ms(self, call, warm_s, time_s):
        """bench_ns_cuda's sustained protocol: calls back to back, each timed; the first warm_s
        seconds bring the card to the state it holds under load (its power limit) and are not
        counted; the median of the calls in the next time_s seconds (at least 3)."""
        self.check_finite(call)
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < warm_s:
            self.call_ms(call)
        ms, t0 = [], time.perf_counter()
        while len(ms) < 3 or time.perf_counter() - t0 < time_s:
            ms.append(self.call_ms(call))
        return statistics.median(ms)

    def cold_ms(self, call, idle_s, window_ms):
        """bench_ns_cuda's cold protocol: after idle_s idle seconds, one call to raise the clocks,
        then calls timed until window_ms of them (at least 3), their median."""
        self.sync()
        time.sleep(idle_s)
        call()
        ms = []
        while len(ms) < 3 or sum(ms) < window_ms:
            ms.append(self.call_ms(call))
        return statistics.median(ms)


PEER_PROTOCOLS = ("sustained", "cold", "burst")


def peer_times(clock, call, args, cold):
    """{protocol: ms} of one peer call: sustained and cold as bench_ns_cuda times ours (cold only
    where ours was timed cold: NaN otherwise), and the burst of --warmup/--iters calls, kept beside
    them."""
    return {"sustained": clock.sustained_ms(call, args.sustained_warm_s, args.sustained_s),
            "cold": clock.cold_ms(call, args.cold_idle_s, args.cold_window_ms) if cold else float("nan"),
            "burst": clock.median_ms(call, args.warmup, args.iters)}


def eager_and_compiled(clock, torch, fn, call_with, args, cold):
    """(eager {protocol: ms}, compiled {protocol: ms}, compile seconds) of `fn`: its eager form,
    then torch.compile'd afresh (static shapes). A compile failure is reported and leaves the
    compiled figures at NaN."""
    nan = float("nan")
    eager = eager_of(fn)
    t_eager = peer_times(clock, lambda: call_with(eager), args, cold)
    compiled = fn if eager is not fn else torch.compile(fn, backend=args.compile_backend)
    torch._dynamo.reset()
    t0 = time.perf_counter()
    try:
        call_with(compiled)
        clock.sync()
        compile_s = time.perf_counter() - t0
        t_compiled = peer_times(clock, lambda: call_with(compiled), args, cold)
    except Exception as e:  # reported, not hidden: the row then rests on eager alone
        print(f"ns_side_by_side: torch.compile failed: {type(e).__name__}: {e}", file=sys.stderr)
        compile_s, t_compiled = time.perf_counter() - t0, {p: nan for p in PEER_PROTOCOLS}
    return t_eager, t_compiled, compile_s


def best(*ms):
    finite = [t for t in ms if t == t]
    return min(finite) if finite else float("nan")


def square_operands(torch, device, dtype, size, seed):
    """Two seeded uniform size×size matrices in [-1, 1), in `dtype`."""
    gen = torch.Generator(device=device).manual_seed(seed)
    return [(torch.rand((size, size), device=device, generator=gen) * 2 - 1).to(dtype) for _ in range(2)]


def gemm_tflops(clock, torch, device, dtype, size, args):
    """The dense GEMM rate torch's matmul (cuBLAS on a GPU) reaches at size³ in `dtype`."""
    a, b = square_operands(torch, device, dtype, size, 4096)
    ms = clock.median_ms(lambda: torch.matmul(a, b), args.warmup, args.iters)
    return 2 * size ** 3 / (ms * 1e-3) / 1e12


def gemm_tflops_back_to_back(clock, torch, device, dtype, size, one_call_tflops, chain_ms, args):
    """The same GEMM issued back to back for about chain_ms (as long as one large NS call), timed as
    one: the rate a run of GEMMs sustains, without the launch gap a single call's time holds."""
    a, b = square_operands(torch, device, dtype, size, 4097)
    c = torch.empty((size, size), device=device, dtype=dtype)
    flop = 2 * size ** 3
    count = max(1, round(chain_ms * 1e-3 * one_call_tflops * 1e12 / flop))

    def chain():
        for _ in range(count):
            torch.matmul(a, b, out=c)
        return c

    ms = clock.median_ms(chain, args.warmup, args.iters)
    return count * flop / (ms * 1e-3) / 1e12


def copy_bandwidth(clock, torch, device, mib, args):
    """Device-to-device copy: GB/s of bytes read plus written."""
    x = torch.empty(mib << 20, dtype=torch.uint8, device=device)
    y = torch.empty_like(x)
    def copy():
        y.copy_(x)

    ms = clock.median_ms(copy, args.warmup, args.iters)
    return 2 * x.numel() / (ms * 1e-3) / 1e9


def torch_muon_ns(torch):
    """torch.optim.Muon's NS function and where it came from (name differs nowhere from 2.9 on)."""
    from torch.optim import _muon
    return _muon._zeropower_via_newtonschulz, f"torch {torch.__version__} torch.optim._muon._zeropower_via_newtonschulz"


def per_call(fn, x, batch, style):
    """One NS call of `fn` on x in its own calling convention."""
    if style == "deepspeed":
        return fn(x, steps=STEPS)
    if batch == 1:
        return fn(x, TORCH_COEFFICIENTS, STEPS, TORCH_EPS)
    for h in range(batch):   # 2-D only: one call per head
        y = fn(x[h], TORCH_COEFFICIENTS, STEPS, TORCH_EPS)
    return y


def ours_from_json(path):
    """({benchmark name: ms}, {name: its "roofline GFLOP" counter in flop}, {name: its "TFLOP/s"
    counter}, context): the median aggregate where repeated, else the single run."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    single, median = {}, {}   # name: (ms, the benchmark's entry)
    for b in data.get("benchmarks", []):
        ms = b["real_time"] * scale[b.get("time_unit", "ns")]
        # "ns_standard_bf16/4096x4096/min_time:0.200/repeats:5/manual_time" → the registered name
        name = "/".join(part for part in b.get("run_name", b["name"]).split("/")
                        if ":" not in part and part not in ("manual_time", "real_time"))
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                median[name] = (ms, b)
        else:
            single.setdefault(name, (ms, b))
    runs = {**single, **median}
    ms = {k: v[0] for k, v in runs.items()}
    flops = {k: v[1]["roofline GFLOP"] * 1e9 for k, v in runs.items() if "roofline GFLOP" in v[1]}
    rates = {k: v[1]["TFLOP/s"] for k, v in runs.items() if "TFLOP/s" in v[1]}
    return ms, flops, rates, data.get("context", {})


GEMM_BENCH = {"bfloat16": "gemm_square_bf16/4096", "float16": "gemm_square_fp16/4096"}
PROTOCOLS = ("sustained", "cold")


def bench_gemm_rates(rates):
    """{protocol: {dtype: TFLOP/s}}: the roofline's GEMM (4096³, cuBLAS) as bench_ns_cuda timed it
    beside our NS, under each protocol (its `Protocol`: sustained, and cold as this script times
    torch.matmul); NaN where the bench did not run it."""
    suffix = {"sustained": "", "cold": "/cold"}
    return {p: {d: rates.get(name + suffix[p], float("nan")) for d, name in GEMM_BENCH.items()} for p in PROTOCOLS}


def run_bench(binary):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "bench.json")
        subprocess.run([binary, r"--benchmark_filter=^(ns_(standard_bf16|gram_fp16)/[^/]*|gemm_square_[^/]*/4096)(/cold)?/",
                        f"--benchmark_out={out}", "--benchmark_out_format=json"], check=True)
        return ours_from_json(out)


def fmt(x, spec):
    return "—" if x is None or x != x else format(x, spec)


ROOFLINE_SHAPES = (shape_name(1, 4096, 4096), shape_name(1, 4096, 14336))
PER_HEAD_SHAPE = shape_name(64, 128, 4096)


def target_misses(rows, targets, have_ds):
    """Per target, each way the rows miss it, one line apiece: a shape whose figure
    falls short, or a shape or column the target needs that this run did not measure. A target
    with no line is met."""
    nan = float("nan")
    misses = {"ds": [], "torch": [], "roofline": [], "per_head_ms": []}
    if not have_ds:
        misses["ds"].append("DeepSpeed not timed (no --deepspeed)")
    for r in rows:
        where = f"{r['shape']} {r['method']}"
        # Each ratio pairs figures timed the same way: sustained always, cold where ours was timed cold.
        protocols = ("", "_cold") if r.get("ours_cold_ms", nan) == r.get("ours_cold_ms", nan) else ("",)
        for peer, name, have in (("ds", "DeepSpeed", have_ds), ("torch", "torch.optim.Muon", True)):
            ratios = [r.get(f"ratio_{peer}{p}", nan) for p in protocols]
            if have and not all(x >= targets[peer] for x in ratios):
                misses[peer].append(f"{where}: " + ", ".join(f"{fmt(x, '.2f')}× {name}'s best {p[1:] or 'sustained'}"
                                                             for x, p in zip(ratios, protocols)))
        like_for_like = (r["roofline_pct"], r["roofline_pct_cold"])   # NaN (not measured) fails too
        if r["shape"] in ROOFLINE_SHAPES and not all(p >= targets["roofline_pct"] for p in like_for_like):
            misses["roofline"].append(f"{where}: {fmt(r['roofline_pct'], '.1f')} % of the GEMM rate sustained, "
                                      f"{fmt(r['roofline_pct_cold'], '.1f')} % cold")
    per_head = [r for r in rows if r["shape"] == PER_HEAD_SHAPE and r["method"] == "standard"]
    misses["per_head_ms"] += [f"{r['shape']} standard: {fmt(r['ours_ms'], '.3f')} ms" for r in per_head
                              if not r["ours_ms"] <= targets["per_head_ms"]]
    if not per_head:
        misses["per_head_ms"].append(f"{PER_HEAD_SHAPE} standard: not measured")
    measured = {r["shape"] for r in rows}
    misses["roofline"] += [f"{s}: not measured" for s in ROOFLINE_SHAPES if s not in measured]
    return misses


def rates_text(rates):
    return ", ".join(f"{k} {fmt(v, '.0f')}" for k, v in rates.items())


def markdown(rows, meta, targets, misses):
    lines = [f"Newton–Schulz, {STEPS} steps, ms per call (median) on {meta['gpu']}: muoncheck bench_ns_cuda vs "
             f"DeepSpeed {meta['deepspeed']} and {meta['torch_ns']}, {meta['date']}. GEMM rate (4096³ cuBLAS, "
             f"bench_ns_cuda, timed as our NS is): sustained {rates_text(meta['gemm_tflops_bench']['sustained'])}, "
             f"cold {rates_text(meta['gemm_tflops_bench']['cold'])} TFLOP/s; torch.matmul at {meta['gemm_size']}³ here, "
             f"the higher of one call ({rates_text(meta['gemm_tflops'])}) and {meta['chain_ms']:g} ms back to back "
             f"({rates_text(meta['gemm_tflops_back_to_back'])} TFLOP/s) after idle: \"torch burst\". "
             f"Copy bandwidth {meta['copy_gbps']:.0f} GB/s.", "",
             "Times and ratios: sustained / cold, each peer timed as bench_ns_cuda times ours (cold only where ours "
             "was); best DS / ours in the burst (first calls, against our "
             "sustained time) in brackets.", "",
             "| shape | method | ours | DS eager | DS compiled | torch eager | torch compiled | best DS / ours | "
             "best torch / ours | DS flops / ours (per flop) | TFLOP (symmetric) | ours TFLOP/s | "
             "% of GEMM rate (sustained / cold / of torch burst) | "
             "traffic floor ms (launched / fused / resident) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def pair(r, field, spec, unit=""):
        """`field` sustained / cold; cold left out where not timed."""
        cold = r.get(field.replace("_ms", "_cold_ms") if field.endswith("_ms") else field + "_cold", float("nan"))
        text = fmt(r[field], spec) + unit
        return text if cold != cold else f"{text} / {fmt(cold, spec)}{unit}"

    for r in rows:
        floor = (f"{r['traffic_launched_ms']:.3f} / {r['traffic_fused_ms']:.3f} / "
                 f"{fmt(r.get('traffic_resident_ms', float('nan')), '.3f')}" if "traffic_launched_ms" in r else "—")
        lines.append(f"| {r['shape']} | {r['method']} | {pair(r, 'ours_ms', '.3f')} | {pair(r, 'ds_eager_ms', '.3f')} | "
                     f"{pair(r, 'ds_compiled_ms', '.3f')} | {pair(r, 'torch_eager_ms', '.3f')} | "
                     f"{pair(r, 'torch_compiled_ms', '.3f')} | {pair(r, 'ratio_ds', '.2f', '×')} "
                     f"({fmt(r.get('ratio_ds_burst', float('nan')), '.2f')}×) | {pair(r, 'ratio_torch', '.2f', '×')} | "
                     f"{r['ds_flop_ratio']:.3f} ({fmt(r['ds_per_flop'], '.3f')}×) | {r['tflop'] :.4g} | "
                     f"{fmt(r['ours_tflops'], '.1f')} | {fmt(r['roofline_pct'], '.1f')} / {fmt(r['roofline_pct_cold'], '.1f')} / "
                     f"{fmt(r['roofline_pct_torch'], '.1f')} % | {floor} |")
    lines.append("")
    missed = [line for k in misses for line in misses[k]]
    lines.append(f"targets: best DS / ours ≥ {targets['ds']}×, best torch / ours ≥ {targets['torch']}× (sustained, and cold "
                 f"where timed), "
                 f"≥ {targets['roofline_pct']} % of the GEMM rate (sustained and cold) at 4096² and 4096×14336, per head standard "
                 f"≤ {targets['per_head_ms']} ms; met: "
                 f"{'yes' if meta['all_met'] else 'NO (' + '; '.join(missed) + ')'}")
    return "\n".join(lines) + "\n"


def roofline(flop, ours_ms, ours_cold_ms, rates, dtype_name):
    """Our rate against the dense GEMM rate, each pair timed the same way: `roofline_pct` our
    sustained time against the bench's sustained GEMM, `roofline_pct_cold` our cold time against
    its cold GEMM (both bench_ns_cuda's `Protocol`); `roofline_pct_torch` our sustained time against
    torch.matmul's rate here (2.5 ms chains after idle, a burst at the top clock, kept for
    comparison, not a like-for-like pair)."""
    def pct(ms, rate):
        return 100 * flop / (ms * 1e-3) / 1e12 / rate

    sustained, cold, torch = (rates[p][dtype_name] for p in ("sustained", "cold", "torch"))
    return {"gemm_tflops": sustained, "roofline_pct": pct(ours_ms, sustained),
            "ours_cold_ms": ours_cold_ms, "gemm_tflops_cold": cold, "roofline_pct_cold": pct(ours_cold_ms, cold),
            "gemm_tflops_torch": torch, "roofline_pct_torch": pct(ours_ms, torch)}


def row_for(clock, torch, args, ns, torch_ns, torch_times, ours, ours_flops, rates, copy_gbps, config, shape, gen):
    prefix, method, fn_name, dtype_name, _ = config
    name, batch, m, n = shape
    key = f"{prefix}/{name}"
    dims = (batch, m, n) if batch > 1 else (m, n)
    x = (torch.rand(dims, device=args.device, generator=gen) * 2 - 1).to(getattr(torch, dtype_name))
    nan = float("nan")
    o, o_cold = ours.get(key, nan), ours.get(key + "/cold", nan)
    cold = o_cold == o_cold   # the peers are timed cold where ours was
    untimed = {p: nan for p in PEER_PROTOCOLS}
    ds = (untimed, untimed, nan)
    if ns is not None:
        ds = eager_and_compiled(clock, torch, getattr(ns, fn_name), lambda f: per_call(f, x, batch, "deepspeed"), args,
                                cold)
    cached = torch_times.get((batch, m, n))
    if cached is None or (cold and cached[0]["cold"] != cached[0]["cold"]):   # one NS in torch, whatever our method
        xt = x if dtype_name == "bfloat16" else x.to(torch.bfloat16)   # torch.optim.Muon computes in bf16
        torch_times[(batch, m, n)] = eager_and_compiled(clock, torch, torch_ns,
                                                        lambda f: per_call(f, xt, batch, "torch"), args, cold)
    tm = torch_times[(batch, m, n)]
    flop = ns_flops(method, batch, m, n)
    row = {"shape": name, "method": method, "dtype": dtype_name, "batch": batch, "m": m, "n": n, "ours_ms": o,
           "ds_compile_s": ds[2], "torch_compile_s": tm[2], "tflop": flop / 1e12, "ours_tflops": flop / (o * 1e-3) / 1e12}
    ours_by = {"sustained": o, "cold": o_cold, "burst": o}   # the burst figures were compared with our sustained one
    for peer, (eager, compiled, _) in (("ds", ds), ("torch", tm)):
        for p in PEER_PROTOCOLS:
            suffix = "" if p == "sustained" else f"_{p}"
            row[f"{peer}_eager{suffix}_ms"], row[f"{peer}_compiled{suffix}_ms"] = eager[p], compiled[p]
            row[f"ratio_{peer}{suffix}"] = best(eager[p], compiled[p]) / ours_by[p]
    row.update(roofline(flop, o, o_cold, rates, dtype_name))
    # The peers' flops: DeepSpeed's function of this method, torch's standard NS (its only one).
    row["ds_flop_ratio"] = ns_flops(method, batch, m, n, symmetric=False) / flop
    row["torch_flop_ratio"] = ns_flops("standard", batch, m, n, symmetric=False) / flop
    row["ds_per_flop"] = per_flop(row["ratio_ds"], row["ds_flop_ratio"])
    row["torch_per_flop"] = per_flop(row["ratio_torch"], row["torch_flop_ratio"])
    if key in ours_flops and abs(ours_flops[key] - flop) > 1e-9 * flop:
        row["flop_model_mismatch"] = ours_flops[key]
        print(f"ns_side_by_side: {key}: bench_ns_cuda counts {ours_flops[key]:.6g} flop, this script {flop:.6g}",
              file=sys.stderr)
    if batch > 1:
        eb = x.element_size()
        (lx, lm), (fx, fm) = traffic_passes(method, m, n)
        launched = batch * eb * (lx * m * n + lm * m * m)
        fused = batch * eb * (fx * m * n + fm * m * m)
        row.update({"traffic_launched_bytes": launched, "traffic_fused_bytes": fused, "copy_gbps": copy_gbps,
                    "traffic_launched_ms": launched / (copy_gbps * 1e9) * 1e3,
                    "traffic_fused_ms": fused / (copy_gbps * 1e9) * 1e3})
        resident = resident_passes(method, m, n)
        if resident is not None:
            row["traffic_resident_bytes"] = batch * eb * resident * m * n
            row["traffic_resident_ms"] = row["traffic_resident_bytes"] / (copy_gbps * 1e9) * 1e3
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--bench-json", help="bench_ns_cuda --benchmark_out JSON")
    src.add_argument("--bench-bin", help="run this bench_ns_cuda for our numbers")
    ap.add_argument("--deepspeed", help="DeepSpeed sdist (.tar.gz), wheel or unpacked tree (absent: no DeepSpeed columns)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--shapes", help="MxN or BATCHxMxN, comma-separated (default: bench_ns_cuda's)")
    ap.add_argument("--gemm-size", type=int, default=4096, help="the GEMM rate's matrix edge")
    ap.add_argument("--chain-ms", type=float, default=2.5,
                    help="how long the back-to-back GEMM run lasts (about one 4096² NS call)")
    ap.add_argument("--copy-mib", type=int, default=2048, help="the copy bandwidth's buffer size")
    ap.add_argument("--compile-backend", default="inductor", help="torch.compile backend for torch.optim.Muon's NS")
    ap.add_argument("--iters", type=int, default=20, help="the burst's timed calls (and the GEMM rate's, the copy's)")
    ap.add_argument("--warmup", type=int, default=3, help="calls before a burst")
    ap.add_argument("--sustained-warm-s", type=float, default=1.0,
                    help="seconds of a peer's calls back to back before its sustained calls are timed")
    ap.add_argument("--sustained-s", type=float, default=1.0, help="seconds of a peer's sustained calls timed")
    ap.add_argument("--cold-idle-s", type=float, default=2.0, help="idle seconds before a peer's cold calls")
    ap.add_argument("--cold-window-ms", type=float, default=30.0, help="ms of a peer's cold calls timed (bench_ns_cuda's)")
    ap.add_argument("--target", type=float, default=1.5, help="best DeepSpeed / ours every shape must reach")
    ap.add_argument("--torch-target", type=float, default=1.2, help="best torch.optim.Muon / ours every shape must reach")
    ap.add_argument("--roofline-target", type=float, default=85.0,
                    help="%% of the GEMM rate (sustained and cold) at 4096² and 4096×14336")
    ap.add_argument("--per-head-target-ms", type=float, default=0.30,
                    help="ms per call the per-head standard NS (64 heads of 128×4096) must reach")
    ap.add_argument("--out-json")
    ap.add_argument("--out-md")
    args = ap.parse_args()

    ours, ours_flops, bench_rates, context = (ours_from_json(args.bench_json) if args.bench_json
                                              else run_bench(args.bench_bin))
    import torch

    ns, version = None, None
    if args.deepspeed:
        source, version = read_module_source(args.deepspeed)
        ns = load_deepspeed_ns(source, args.device, args.compile_backend)
    torch_ns, torch_ns_name = torch_muon_ns(torch)
    clock = Clock(torch, args.device)
    shapes = parse_shapes(args.shapes) if args.shapes else SHAPES
    rates = {d: gemm_tflops(clock, torch, args.device, getattr(torch, d), args.gemm_size, args)
             for d in ("bfloat16", "float16")}
    rates_b2b = {d: gemm_tflops_back_to_back(clock, torch, args.device, getattr(torch, d), args.gemm_size, rates[d],
                                             args.chain_ms, args)
                 for d in ("bfloat16", "float16")}
    torch_rates = {d: max(rates[d], rates_b2b[d]) for d in rates}
    gemm_rates = {**bench_gemm_rates(bench_rates), "torch": torch_rates}
    copy_gbps = copy_bandwidth(clock, torch, args.device, args.copy_mib, args)
    gpu = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    meta = {"deepspeed": version, "torch": torch.__version__, "torch_ns": torch_ns_name, "gpu": gpu,
            "cuda": torch.version.cuda, "date": datetime.date.today().isoformat(), "steps": STEPS,
            "iters": args.iters, "warmup": args.warmup, "sustained_warm_s": args.sustained_warm_s,
            "sustained_s": args.sustained_s, "cold_idle_s": args.cold_idle_s, "cold_window_ms": args.cold_window_ms,
            "bench_context": context, "gemm_size": args.gemm_size,
            "gemm_tflops": rates, "gemm_tflops_back_to_back": rates_b2b, "chain_ms": args.chain_ms,
            "gemm_tflops_bench": {p: gemm_rates[p] for p in PROTOCOLS},
            "copy_gbps": copy_gbps, "compile_backend": args.compile_backend}
    rows, torch_times = [], {}
    gen = torch.Generator(device=args.device).manual_seed(8600)
    for config in CONFIGS:
        for shape in shapes:
            if shape[2] == shape[3] and not config[4]:
                continue
            key = f"{config[0]}/{shape[0]}"
            if key not in ours:
                print(f"ns_side_by_side: {key} missing from the bench output; its ours columns are empty", file=sys.stderr)
            r = row_for(clock, torch, args, ns, torch_ns, torch_times, ours, ours_flops, gemm_rates, copy_gbps,
                        config, shape, gen)
            rows.append(r)
            print(f"{key:34s} ours {r['ours_ms']:8.3f}  DS {r['ds_eager_ms']:8.3f} / {r['ds_compiled_ms']:8.3f}  "
                  f"torch {r['torch_eager_ms']:8.3f} / {r['torch_compiled_ms']:8.3f}  ratios {r['ratio_ds']:5.2f} "
                  f"{r['ratio_torch']:5.2f} (cold {r['ratio_ds_cold']:5.2f} {r['ratio_torch_cold']:5.2f}, DS burst "
                  f"{r['ratio_ds_burst']:5.2f})  {r['ours_tflops']:7.1f} TFLOP/s = {r['roofline_pct']:5.1f} % "
                  f"(cold {r['roofline_pct_cold']:5.1f} %, of torch's burst {r['roofline_pct_torch']:5.1f} %)", flush=True)
            if args.device == "cuda":
                torch.cuda.empty_cache()
    targets = {"ds": args.target, "torch": args.torch_target, "roofline_pct": args.roofline_target,
               "per_head_ms": args.per_head_target_ms}
    misses = target_misses(rows, targets, have_ds=bool(ns))
    met = {k: not v for k, v in misses.items()}
    meta["all_met"] = all(met.values())   # no rows: the roofline and per-head shapes were not measured
    if args.out_json:
        with open(args.out_json, "w", encoding="utf-8") as fh:
            json.dump({"meta": meta, "targets": targets, "met": met, "misses": misses, "all_met": meta["all_met"],
                       "rows": rows}, fh, indent=1)
    table = markdown(rows, meta, targets, misses)
    print("\n" + table)
    if args.out_md:
        with open(args.out_md, "w", encoding="utf-8") as fh:
            fh.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
