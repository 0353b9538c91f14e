#!/usr/bin/env python3
"""Newton–Schulz side by side: muoncheck's bench_ns_cuda against DeepSpeed's own NS functions.

For each shape of bench_ns_cuda (1024², 4096², 4096×14336, per-head 64×(128×4096)) this times
DeepSpeed's `zeropower_via_newtonschulz5` (standard, bf16) and, for the non-square shapes,
`zeropower_via_gram_newtonschulz` (gram, fp16), each eager and under torch.compile, in this
process on the same GPU, and prints ms per call beside ours with the ratio
best(DeepSpeed eager, DeepSpeed compiled) / ours. Ours come from bench_ns_cuda's JSON output
(--bench-json, the median of its repetitions) or from running it (--bench-bin).

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
Timing: CUDA events around each call, `--warmup` calls first, the median of `--iters`.

Run on the GPU machine (scripts/gpu-run.sh ns does all of it):
  python3 bench/ns_side_by_side.py --bench-json bench-ns.json \
      --deepspeed .whl/ds/deepspeed-0.19.8.tar.gz --out-json side.json --out-md side.md
"""
import argparse
import datetime
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
# bench_ns_cuda's benchmark prefix, DeepSpeed's function, dtype name, square shapes too
CONFIGS = [
    ("ns_standard_bf16", "zeropower_via_newtonschulz5", "bfloat16", True),
    ("ns_gram_fp16", "zeropower_via_gram_newtonschulz", "float16", False),
]
MODULE = "deepspeed/runtime/zero/muon/original_muon.py"
STEPS = 5


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


def load_deepspeed_ns(source):
    """Executes DeepSpeed's module with its three imports stubbed (see the header)."""
    import torch

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__path__ = []  # a package, so submodule imports resolve through sys.modules
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    class CudaAccelerator:  # what deepspeed.accelerator's CUDA accelerator answers on a GPU
        def is_fp16_supported(self):
            return True

        def is_bf16_supported(self):
            return torch.cuda.is_bf16_supported()

    accelerator = CudaAccelerator()
    ds = module("deepspeed")
    ds.comm = module("deepspeed.comm")
    ds.runtime = module("deepspeed.runtime")
    # deepspeed/runtime/compiler.py: `def compile(): return torch.compile if hasattr(torch, "compile") ...`
    ds.runtime.compiler = module("deepspeed.runtime.compiler", compile=lambda: torch.compile)
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


def time_ms(torch, fn, x, warmup, iters):
    for _ in range(warmup):
        y = fn(x, steps=STEPS)
    torch.cuda.synchronize()
    if not torch.isfinite(y).all():
        raise RuntimeError("DeepSpeed's NS returned non-finite values")
    times = []
    for _ in range(iters):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(x, steps=STEPS)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def ours_from_json(path):
    """{benchmark name: ms}: the median aggregate where repeated, else the single run."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    single, median = {}, {}
    for b in data.get("benchmarks", []):
        ms = b["real_time"] * scale[b.get("time_unit", "ns")]
        # "ns_standard_bf16/4096x4096/min_time:0.200/repeats:5/manual_time" → the registered name
        name = "/".join(part for part in b.get("run_name", b["name"]).split("/")
                        if ":" not in part and part not in ("manual_time", "real_time"))
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                median[name] = ms
        else:
            single.setdefault(name, ms)
    return {**single, **median}, data.get("context", {})


def run_bench(binary):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "bench.json")
        subprocess.run([binary, r"--benchmark_filter=^ns_(standard_bf16|gram_fp16)/[^/]*$",
                        f"--benchmark_out={out}", "--benchmark_out_format=json"], check=True)
        return ours_from_json(out)


def markdown(rows, meta, target):
    lines = [f"Newton–Schulz, {STEPS} steps, ms per call (median; CUDA events) on {meta['gpu']}: "
             f"muoncheck bench_ns_cuda vs DeepSpeed {meta['deepspeed']} (torch {meta['torch']}), "
             f"{meta['date']}.", "",
             "| shape | method | ours | DS eager | DS compiled | ratio (best DS / ours) | ≥ %.1f× |" % target,
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['shape']} | {r['method']} | {r['ours_ms']:.3f} | {r['ds_eager_ms']:.3f} | "
                     f"{r['ds_compiled_ms']:.3f} | {r['ratio']:.2f}× | {'yes' if r['ratio'] >= target else 'NO'} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--bench-json", help="bench_ns_cuda --benchmark_out JSON")
    src.add_argument("--bench-bin", help="run this bench_ns_cuda for our numbers")
    ap.add_argument("--deepspeed", required=True, help="DeepSpeed sdist (.tar.gz), wheel or unpacked tree")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--target", type=float, default=1.3, help="the ratio every shape must reach")
    ap.add_argument("--out-json")
    ap.add_argument("--out-md")
    args = ap.parse_args()

    ours, context = ours_from_json(args.bench_json) if args.bench_json else run_bench(args.bench_bin)
    source, version = read_module_source(args.deepspeed)
    import torch

    ns = load_deepspeed_ns(source)
    meta = {"deepspeed": version, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
            "cuda": torch.version.cuda, "date": datetime.date.today().isoformat(), "steps": STEPS,
            "iters": args.iters, "warmup": args.warmup, "bench_context": context}
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(8600)
    for prefix, fn_name, dtype_name, square_too in CONFIGS:
        compiled = getattr(ns, fn_name)
        eager = eager_of(compiled)
        dtype = getattr(torch, dtype_name)
        for shape, batch, m, n in SHAPES:
            if m == n and not square_too:
                continue
            key = f"{prefix}/{shape}"
            if key not in ours:
                print(f"ns_side_by_side: {key} missing from the bench output; skipped", file=sys.stderr)
                continue
            dims = (batch, m, n) if batch > 1 else (m, n)
            x = (torch.rand(dims, device="cuda", generator=gen) * 2 - 1).to(dtype)
            t_eager = time_ms(torch, eager, x, args.warmup, args.iters)
            torch._dynamo.reset()
            t0 = time.perf_counter()
            try:
                compiled(x, steps=STEPS)
                torch.cuda.synchronize()
                compile_s = time.perf_counter() - t0
                t_compiled = time_ms(torch, compiled, x, args.warmup, args.iters)
            except Exception as e:  # reported, not hidden: the row then rests on eager alone
                print(f"ns_side_by_side: {key}: torch.compile failed: {type(e).__name__}: {e}", file=sys.stderr)
                compile_s, t_compiled = time.perf_counter() - t0, float("nan")
            best = min(t for t in (t_eager, t_compiled) if t == t)
            row = {"shape": shape, "method": prefix.replace("ns_", "").replace("_", " "), "batch": batch, "m": m,
                   "n": n, "ours_ms": ours[key], "ds_eager_ms": t_eager, "ds_compiled_ms": t_compiled,
                   "ds_compile_s": compile_s, "ratio": best / ours[key]}
            rows.append(row)
            print(f"{key:34s} ours {row['ours_ms']:8.3f}  DS eager {t_eager:8.3f}  DS compiled {t_compiled:8.3f}"
                  f"  (compile {compile_s:5.1f} s)  ratio {row['ratio']:5.2f}", flush=True)
            del x
            torch.cuda.empty_cache()
    table = markdown(rows, meta, args.target)
    print("\n" + table)
    ok = bool(rows) and all(r["ratio"] >= args.target for r in rows)
    print(f"every shape >= {args.target}x: {'yes' if ok else 'NO'}")
    if args.out_json:
        with open(args.out_json, "w", encoding="utf-8") as fh:
            json.dump({"meta": meta, "target": args.target, "all_met": ok, "rows": rows}, fh, indent=1)
    if args.out_md:
        with open(args.out_md, "w", encoding="utf-8") as fh:
            fh.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
