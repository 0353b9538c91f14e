"""dev/cuda/bench_medians.py: each benchmark's median per program over PROGRAM-ROUND.json files."""
import json
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parent / "bench_medians.py"


def bench_json(path, runs):
    """A Google Benchmark JSON file with (name, ms, run_type) runs."""
    path.write_text(json.dumps({"benchmarks": [
        {"name": n, "real_time": t, "run_type": kind} for n, t, kind in runs]}))


def medians(*paths):
    done = subprocess.run([sys.executable, str(SCRIPT), *map(str, paths)], capture_output=True, text=True)
    return done.returncode, done.stdout.splitlines(), done.stderr


def test_median_per_benchmark_and_program_without_aggregates_or_suffixes(tmp_path):
    for r, (ours, before) in enumerate([(2.0, 3.0), (2.9, 3.3), (2.2, 3.1)], start=1):
        bench_json(tmp_path / f"bench_ns_cuda-{r}.json", [
            ("ns/4096x4096/min_time:0.200/repeats:5/manual_time", ours, "iteration"),
            ("ns/4096x4096/min_time:0.200/repeats:5/manual_time_median", 99.0, "aggregate"),
            ("ns/4096x4096/cold/iterations:1/manual_time", ours - 1, "iteration")])
        bench_json(tmp_path / f"ablation-before-{r}.json", [
            ("ns/4096x4096/min_time:0.200/repeats:5/manual_time", before, "iteration")])
    rc, lines, _ = medians(*sorted(tmp_path.glob("*.json")))
    assert rc == 0
    assert len(lines) == 3
    by = {tuple(line.split()[:2]): line for line in lines}
    assert "median 2.2000 ms" in by[("ns/4096x4096", "bench_ns_cuda")]
    assert "median 3.1000 ms" in by[("ns/4096x4096", "ablation-before")]
    assert "median 1.2000 ms" in by[("ns/4096x4096/cold", "bench_ns_cuda")]
    assert "99" not in " ".join(lines)


def test_a_truncated_file_is_named_and_the_rest_still_counts(tmp_path):
    bench_json(tmp_path / "bench_ns_cuda-1.json", [("ns/1024x1024/manual_time", 0.1, "iteration")])
    (tmp_path / "bench_ns_cuda-2.json").write_text('{"benchmarks": [{"name": "ns/1024x1024"')
    rc, lines, err = medians(tmp_path / "bench_ns_cuda-1.json", tmp_path / "bench_ns_cuda-2.json")
    assert rc == 0
    assert lines == ["ns/1024x1024  bench_ns_cuda  median 0.1000 ms  (0.1000)"]
    assert "bench_ns_cuda-2.json: skipped" in err


def test_no_runs_at_all_fails(tmp_path):
    rc, lines, err = medians()
    assert rc == 1 and not lines and "no benchmark runs" in err
