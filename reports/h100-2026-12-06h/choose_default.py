"""Which split the NS default takes at m = 4096 after the strips' first run (run.sh, step 4).

argv: the gpu tests' exit status, bench_ns_cuda's --variants JSON. Prints one line, 'strips ...' or
'triangle ...', with the reason: the strips only where every gpu test passed, the strips kernel took
products in each of its runs, and the sustained NS under the strips is faster in total over the
three shapes and at none more than 0.5 % slower than under the ping-pong triangle."""
import json
import sys

SHAPES = ("ns_standard_bf16/4096x4096", "ns_standard_bf16/4096x14336", "ns_gram_fp16/4096x14336")


def main(tests_rc: str, path: str) -> None:
    if tests_rc != "0":
        print(f"triangle: the gpu tests exited {tests_rc}")
        return
    try:
        with open(path) as f:
            runs = json.load(f)["benchmarks"]
    except (OSError, ValueError, KeyError) as e:
        print(f"triangle: no NS timings ({path}: {e})")
        return
    times = {}
    for r in runs:
        name = r["name"]
        if "/cold" in name or r.get("run_type") == "aggregate" or r.get("error_occurred"):
            continue
        for shape in SHAPES:
            for split in ("triangle", "strips"):
                if name.startswith(f"{shape}/{split}/"):
                    if split == "strips" and not r.get("strips products", 0) > 0:
                        print(f"triangle: {name} ran no product on the strips kernel")
                        return
                    times[(shape, split)] = r["real_time"]
    missing = [f"{s}/{k}" for s in SHAPES for k in ("triangle", "strips") if (s, k) not in times]
    if missing:
        print(f"triangle: no timing for {', '.join(missing)}")
        return
    ratios = {s: times[(s, "strips")] / times[(s, "triangle")] for s in SHAPES}
    total = sum(times[(s, "strips")] for s in SHAPES) / sum(times[(s, "triangle")] for s in SHAPES)
    shown = ", ".join(f"{s} {r:.4f}" for s, r in ratios.items())
    win = total < 1.0 and max(ratios.values()) <= 1.005
    print(f"{'strips' if win else 'triangle'}: strips/triangle sustained {shown}; total {total:.4f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
