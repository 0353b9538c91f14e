"""bench/ns_side_by_side.py on the CPU with tiny shapes: the GPU run's code (DeepSpeed's and
torch.optim.Muon's NS eager and torch.compile'd, the GEMM rate, the copy bandwidth, the roofline
and traffic columns, the JSON report and its table) runs end to end here, so a device run cannot
fail on a typo. DeepSpeed's columns need its wheel (.whl/ds-0.19.8/, scripts/deepspeed-site.sh);
without it they stay empty and the rest still runs."""
import glob
import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "ns_side_by_side.py")
SHAPES = "8x8,8x24,2x4x16"


def side_by_side():
    spec = importlib.util.spec_from_file_location("ns_side_by_side", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEMM_RATES = {"gemm_square_bf16/4096": 700.0, "gemm_square_fp16/4096": 650.0,
              "gemm_square_bf16/4096/cold": 780.0, "gemm_square_fp16/4096/cold": 720.0}
COLD_MS = {"ns_standard_bf16/8x8/cold": 0.125}


def bench_json(path, mod, shapes, wrong_flops_for):
    """bench_ns_cuda's --benchmark_out format: a median aggregate per repeated benchmark with its
    counters, single runs for the GEMM rates and the cold protocol."""
    benchmarks = []
    for name, rate in GEMM_RATES.items():
        runs = "iterations:1/manual_time" if name.endswith("/cold") else "min_time:0.200/manual_time"
        benchmarks.append({"name": f"{name}/{runs}", "run_name": f"{name}/{runs}", "run_type": "iteration",
                           "real_time": 2.9, "time_unit": "ms", "TFLOP/s": rate})
    for name, ms in COLD_MS.items():
        benchmarks.append({"name": f"{name}/iterations:1/manual_time", "run_name": f"{name}/iterations:1/manual_time",
                           "run_type": "iteration", "real_time": ms, "time_unit": "ms", "TFLOP/s": 1.0,
                           "roofline GFLOP": 1.0})
    for prefix, method, _, _, square_too in mod.CONFIGS:
        for name, batch, m, n in shapes:
            if m == n and not square_too:
                continue
            run = f"{prefix}/{name}"
            flop = mod.ns_flops(method, batch, m, n) * (2 if run == wrong_flops_for else 1)
            for agg, ms in (("mean", 0.5), ("median", 0.25), ("stddev", 0.0)):
                benchmarks.append({"name": f"{run}/repeats:5/manual_time_{agg}", "run_name": f"{run}/repeats:5/manual_time",
                                   "run_type": "aggregate", "aggregate_name": agg, "real_time": ms, "time_unit": "ms",
                                   "roofline GFLOP": 0.0 if agg == "stddev" else flop / 1e9})
    with open(path, "w") as f:
        json.dump({"context": {"host_name": "test"}, "benchmarks": benchmarks}, f)


def test_flop_model_counts_symmetric_products_as_triangles():
    mod = side_by_side()
    m = 4096
    per_iteration = m * (m + 1) * m * 2 + 2 * m ** 3   # XXᵀ and A² as triangles, BX in full
    assert mod.ns_flops("standard", 1, m, m) == 5 * per_iteration
    assert abs(mod.ns_flops("standard", 1, m, m) / 1e12 - 1.3746) < 1e-3   # ≈ 1.37 TFLOP
    # gram on a square matrix is the standard loop; on a wide one fewer X-sized products
    assert mod.ns_flops("gram", 1, 64, 64) == mod.ns_flops("standard", 1, 64, 64)
    assert mod.ns_flops("gram", 3, 128, 4096) == 3 * mod.ns_flops("gram", 1, 128, 4096)
    assert mod.ns_flops("gram", 1, 128, 4096) < mod.ns_flops("standard", 1, 128, 4096)
    launched, fused = mod.traffic_passes("standard", 128, 4096)
    assert launched == (23, 30) and fused == (16, 0)
    (gx, _), (fx, _) = mod.traffic_passes("gram", 128, 4096)
    assert fx < gx < launched[0]
    assert mod.resident_passes("standard", 128, 4096) == 2 and mod.resident_passes("gram", 96, 96) == 2
    assert mod.resident_passes("gram", 128, 4096) is None and mod.resident_passes("standard", 256, 4096) is None
    assert mod.resident_passes("standard", 128, 4104) is None


def test_peer_flops_are_every_product_in_full():
    mod = side_by_side()
    m, n = 4096, 14336
    # DeepSpeed's and torch's standard NS: X·Xᵀ, A·A and B·X in full
    assert mod.ns_flops("standard", 1, m, n, symmetric=False) == 5 * (4 * m * m * n + 2 * m ** 3)
    assert mod.ns_flops("standard", 1, m, m, symmetric=False) / mod.ns_flops("standard", 1, m, m) == \
        pytest.approx(3 * m / (2 * m + 1))
    ratio = mod.ns_flops("standard", 1, m, n, symmetric=False) / mod.ns_flops("standard", 1, m, n)
    assert 1.39 < ratio < 1.392
    # gram: the same products as ours, each in full; more than ours, fewer than the standard loop's
    assert mod.ns_flops("gram", 1, m, n) < mod.ns_flops("gram", 1, m, n, symmetric=False) < \
        mod.ns_flops("standard", 1, m, n, symmetric=False)
    assert mod.ns_flops("gram", 2, 64, 64, symmetric=False) == mod.ns_flops("standard", 2, 64, 64, symmetric=False)
    assert mod.per_flop(1.5, 1.5) == 1.0 and mod.per_flop(1.43, 1.391) == pytest.approx(1.028, abs=1e-3)


def test_help_renders():
    r = subprocess.run([sys.executable, SCRIPT, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--roofline-target" in r.stdout, r.stderr[-2000:]


def test_runs_on_cpu_and_writes_the_report(tmp_path):
    mod = side_by_side()
    shapes = mod.parse_shapes(SHAPES)
    bench = tmp_path / "bench.json"
    bench_json(bench, mod, shapes, wrong_flops_for="ns_gram_fp16/8x24")
    out_json, out_md = tmp_path / "side.json", tmp_path / "side.md"
    cmd = [sys.executable, SCRIPT, "--bench-json", str(bench), "--device", "cpu", "--shapes", SHAPES,
           "--gemm-size", "32", "--copy-mib", "1", "--iters", "2", "--warmup", "1", "--compile-backend", "eager",
           "--sustained-warm-s", "0.01", "--sustained-s", "0.02", "--cold-idle-s", "0.01", "--cold-window-ms", "1",
           "--out-json", str(out_json), "--out-md", str(out_md)]
    wheels = glob.glob(os.path.join(ROOT, ".whl", "ds-0.19.8", "deepspeed-*.whl"))
    if wheels:
        cmd += ["--deepspeed", wheels[0]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    report = json.loads(out_json.read_text())
    rows = report["rows"]
    assert [(x["shape"], x["method"]) for x in rows] == [
        ("8x8", "standard"), ("8x24", "standard"), ("per_head_2x4x16", "standard"),
        ("8x24", "gram"), ("per_head_2x4x16", "gram")]
    for x in rows:
        assert x["ours_ms"] == 0.25
        assert x["torch_eager_ms"] > 0 and x["torch_compiled_ms"] > 0, x
        # each ratio pairs figures timed the same way: sustained with ours, cold with ours cold
        # (timed only where ours was), the burst of the reports before with our sustained time
        assert x["ratio_torch"] == pytest.approx(min(x["torch_eager_ms"], x["torch_compiled_ms"]) / x["ours_ms"])
        assert x["ratio_torch_burst"] == pytest.approx(
            min(x["torch_eager_burst_ms"], x["torch_compiled_burst_ms"]) / x["ours_ms"])
        if (x["ours_cold_ms"] == x["ours_cold_ms"]):
            assert x["torch_eager_cold_ms"] > 0 and x["torch_compiled_cold_ms"] > 0, x
            assert x["ratio_torch_cold"] == pytest.approx(
                min(x["torch_eager_cold_ms"], x["torch_compiled_cold_ms"]) / x["ours_cold_ms"])
        else:
            assert x["torch_eager_cold_ms"] != x["torch_eager_cold_ms"] and x["ratio_torch_cold"] != x["ratio_torch_cold"]
        assert x["tflop"] * 1e12 == mod.ns_flops(x["method"], x["batch"], x["m"], x["n"])
        # the roofline's rate is the bench's GEMM, timed as our NS is (sustained; cold beside the cold time)
        suffix = {"bfloat16": "bf16", "float16": "fp16"}[x["dtype"]]
        assert x["gemm_tflops"] == GEMM_RATES[f"gemm_square_{suffix}/4096"]
        assert x["roofline_pct"] == pytest.approx(100 * x["ours_tflops"] / x["gemm_tflops"])
        assert x["gemm_tflops_cold"] == GEMM_RATES[f"gemm_square_{suffix}/4096/cold"]
        cold = COLD_MS.get(f"ns_{x['method']}_{suffix}/{x['shape']}/cold")
        if cold is None:
            assert x["ours_cold_ms"] != x["ours_cold_ms"] and x["roofline_pct_cold"] != x["roofline_pct_cold"]
        else:
            assert x["roofline_pct_cold"] == pytest.approx(100 * x["tflop"] / (cold * 1e-3) / x["gemm_tflops_cold"])
        # torch.matmul's burst rate here, the higher of one call and back to back, stays beside them
        rates = (report["meta"]["gemm_tflops"][x["dtype"]], report["meta"]["gemm_tflops_back_to_back"][x["dtype"]])
        assert x["gemm_tflops_torch"] == max(rates)
        assert x["roofline_pct_torch"] == pytest.approx(100 * x["ours_tflops"] / max(rates))
        assert (x["ds_eager_ms"] > 0) == bool(wheels)
        assert ("traffic_fused_ms" in x) == (x["batch"] > 1)
        assert ("traffic_resident_ms" in x) == (x["batch"] > 1 and x["method"] == "standard")
        full = mod.ns_flops(x["method"], x["batch"], x["m"], x["n"], symmetric=False)
        assert x["ds_flop_ratio"] == pytest.approx(full / (x["tflop"] * 1e12)) and x["ds_flop_ratio"] > 1
        assert x["torch_per_flop"] == pytest.approx(x["ratio_torch"] / x["torch_flop_ratio"])
        assert (x["ds_per_flop"] > 0) == bool(wheels)
    mismatched = [x["shape"] + " " + x["method"] for x in rows if "flop_model_mismatch" in x]
    assert mismatched == ["8x24 gram"], "the bench's own flop count must be compared, and only the wrong one flagged"
    assert report["meta"]["gemm_tflops"]["bfloat16"] > 0 and report["meta"]["copy_gbps"] > 0
    assert report["meta"]["gemm_tflops_back_to_back"]["bfloat16"] > 0
    assert report["meta"]["gemm_tflops_bench"]["cold"]["float16"] == 720.0
    assert set(report["met"]) == {"ds", "torch", "roofline", "per_head_ms"}
    # tiny shapes: the roofline and per-head targets' shapes were not measured, so not met
    assert report["misses"]["roofline"] == ["4096x4096: not measured", "4096x14336: not measured"]
    assert not report["met"]["per_head_ms"] and not report["all_met"]
    table = out_md.read_text()
    assert "| per_head_2x4x16 | gram |" in table and "torch compiled" in table


def test_every_missed_target_is_named_with_its_figure():
    """The verdict line names each shape that misses a target (figures of one H100 run, its
    roofline figures sustained as measured, cold ones made up)."""
    mod = side_by_side()
    targets = {"ds": 1.5, "torch": 1.2, "roofline_pct": 85.0, "per_head_ms": 0.30}

    nan = float("nan")

    def row(shape, method, ours_ms, ratio_ds, ratio_torch, pct, pct_cold=nan, cold=None):
        """cold: (our cold ms, DS ratio cold, torch ratio cold) where ours was timed cold."""
        r = {"shape": shape, "method": method, "ours_ms": ours_ms, "ratio_ds": ratio_ds,
             "ratio_torch": ratio_torch, "roofline_pct": pct, "roofline_pct_cold": pct_cold, "ours_cold_ms": nan}
        if cold:
            r.update(ours_cold_ms=cold[0], ratio_ds_cold=cold[1], ratio_torch_cold=cold[2])
        return r

    rows = [row("1024x1024", "standard", 0.106, 4.77, 3.20, 29.0),
            row("4096x4096", "standard", 2.286, 1.51, 1.43, 83.5, 86.0, (2.07, 1.49, 1.40)),   # short sustained; DS cold
            row("4096x14336", "standard", 6.375, 1.42, 1.35, 85.6, 84.9, (5.70, 1.55, 1.30)),  # short cold; DS sustained
            row("per_head_64x128x4096", "standard", 0.307, 3.60, 112.5, 27.6),
            row("4096x14336", "gram", 4.115, 1.56, 2.10, 84.8, nan, (3.80, nan, 2.0)),      # cold not measured
            row("per_head_64x128x4096", "gram", 0.291, 3.45, 119.0, 13.1)]
    misses = mod.target_misses(rows, targets, have_ds=True)
    assert misses == {
        "ds": ["4096x4096 standard: 1.51× DeepSpeed's best sustained, 1.49× DeepSpeed's best cold",
               "4096x14336 standard: 1.42× DeepSpeed's best sustained, 1.55× DeepSpeed's best cold",
               "4096x14336 gram: 1.56× DeepSpeed's best sustained, —× DeepSpeed's best cold"],
        "torch": [],
        "roofline": ["4096x4096 standard: 83.5 % of the GEMM rate sustained, 86.0 % cold",
                     "4096x14336 standard: 85.6 % of the GEMM rate sustained, 84.9 % cold",
                     "4096x14336 gram: 84.8 % of the GEMM rate sustained, — % cold"],
        "per_head_ms": ["per_head_64x128x4096 standard: 0.307 ms"]}
    # a column that was not timed is a miss, never a pass
    rows[0]["ratio_torch"] = nan
    assert mod.target_misses(rows, targets, have_ds=False)["ds"] == ["DeepSpeed not timed (no --deepspeed)"]
    assert "1024x1024 standard: —× torch.optim.Muon's best sustained" in mod.target_misses(rows, targets, True)["torch"]
    # every figure on its target: nothing missed
    met = [row(r["shape"], r["method"], 0.30 if r["shape"].startswith("per_head") else r["ours_ms"], 1.5, 1.2, 85.0,
               85.0, (1.0, 1.5, 1.2) if r["ours_cold_ms"] == r["ours_cold_ms"] else None) for r in rows]
    assert not any(mod.target_misses(met, targets, have_ds=True).values())
    meta = {"gpu": "g", "deepspeed": "d", "torch_ns": "t", "date": "x", "gemm_size": 4096, "gemm_tflops": {},
            "chain_ms": 2.5, "gemm_tflops_back_to_back": {}, "copy_gbps": 1.0, "all_met": False,
            "gemm_tflops_bench": {"sustained": {}, "cold": {}}}
    for r in rows:
        r.update(ds_eager_ms=nan, ds_compiled_ms=nan, torch_eager_ms=nan, torch_compiled_ms=nan, ds_flop_ratio=1.0,
                 ratio_ds_burst=nan,
                 ds_per_flop=nan, tflop=1.0, ours_tflops=1.0, roofline_pct_torch=nan)
    table = mod.markdown(rows, meta, targets, misses)
    assert table.rstrip().endswith("met: NO (4096x4096 standard: 1.51× DeepSpeed's best sustained, 1.49× DeepSpeed's "
                                   "best cold; 4096x14336 standard: 1.42× DeepSpeed's best sustained, 1.55× DeepSpeed's "
                                   "best cold; 4096x14336 gram: 1.56× DeepSpeed's best sustained, —× DeepSpeed's best "
                                   "cold; 4096x4096 standard: 83.5 % of the GEMM rate sustained, 86.0 % cold; 4096x14336 "
                                   "standard: 85.6 % of the GEMM rate sustained, 84.9 % cold; 4096x14336 gram: 84.8 % of "
                                   "the GEMM rate sustained, — % cold; per_head_64x128x4096 standard: 0.307 ms)")
    # a timed cold pair shows beside the sustained one; an untimed one is left out
    assert "| 4096x4096 | standard | 2.286 / 2.070 |" in table and "| 1.51× / 1.49× (—×) |" in table
    assert "| 1024x1024 | standard | 0.106 |" in table
