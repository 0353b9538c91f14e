#!/usr/bin/env python3
"""A sweep of a third-party plugin in its own configuration space, on the CPU over gloo.

    scripts/impl-sweep.py NAME --dp N --cases K [--seed S] [--batch B] --out DIR

Each case draws the plugin's knobs (each value equally likely) and a small base scenario (stage 0, 2
or 3; fp32 or bf16; gas and micro-batch 1–2; two to four Muon matrices of drawn shapes, rank 2, and
sometimes 3 or 4; a vector and an embedding on AdamW; raw-gradient clipping and a warm-up schedule
sometimes); the plugin maps the configuration onto the scenario (`to_scenario`), and the mapped
scenario is what is run and judged. Cases run B at a time in one launch (torchrun at dp > 1,
adapters.impls.run, the drawn knobs beside each scenario as CASE.config.json; 600 s per launch), then `muoncheck verify` judges each with its trace. The record
(OUT/sweep.json) counts cases, PASS/FAIL/ERROR, declines by knob, minutes and cases per minute;
failing cases keep their scenario file and repro line. No shrinking here (the C++ sweep shrinks
through RapidCheck).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_scenario(rng, name, dp):
    shapes = [(rng.choice([4, 8, 12, 16, 33, 63]), rng.choice([3, 8, 16, 24, 64])) for _ in range(rng.randint(2, 4))]
    params = [{"name": f"layers.{i}.weight", "shape": list(s)} for i, s in enumerate(shapes)]
    if rng.random() < 0.2:
        params.append({"name": f"layers.{len(params)}.weight", "shape": rng.choice([[8, 4, 3], [16, 2, 2, 2]])})
    params += [{"name": "embed_tokens.weight", "shape": [16, 8]}, {"name": "norm.weight", "shape": [rng.choice([7, 33])]}]
    stage = rng.choice([0, 2, 3])
    dtype = rng.choice(["fp32", "bf16"])
    gas = rng.choice([1, 2])
    engine = {"stage": stage, "dp": dp, "gas": gas, "micro_batch": rng.choice([1, 2]), "param_dtype": dtype}
    if stage > 0 and dtype == "bf16":
        engine.update(grad_accum_dtype="bf16", comm_dtype="bf16")
    opt = {"lr": rng.choice([0.02, 0.01]), "ns_method": "standard", "momentum": 0.5}
    if rng.random() < 0.25:
        opt["clip"] = {"max_norm": rng.choice([0.05, 0.5]), "mode": "raw_grad"}
    if rng.random() < 0.25:
        opt["lr_schedule"] = {"shape": "linear_warmup", "warmup_steps": 2}
    return {"name": name, "description": "a generated case of scripts/impl-sweep.py", "seed": rng.randrange(1 << 30),
            "steps": 3, "model": {"params": params}, "engine": engine, "optimizer": opt}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name")
    ap.add_argument("--dp", type=int, default=1)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=0, help="stop starting batches after this many seconds (0: none)")
    a = ap.parse_args(argv)
    from adapters import plugins
    plugin = plugins.load(a.name)
    rng = random.Random(a.seed)
    muoncheck = os.environ.get("MUONCHECK", os.path.join(ROOT, "build/harness/muoncheck"))
    os.makedirs(os.path.join(a.out, "cases"), exist_ok=True)
    start, done = time.time(), []
    record = {"cases": [], "summary": None}
    for b0 in range(0, a.cases, a.batch):
        if a.budget and time.time() - start > a.budget:
            break
        files = []
        for i in range(b0, min(a.cases, b0 + a.batch)):
            config = {k.name: rng.choice(k.values) for k in plugin.knobs}
            base = base_scenario(rng, f"{a.name}-dp{a.dp}-s{a.seed}-{i:04d}", a.dp)
            s = plugin.to_scenario(config, base)
            path = os.path.join(a.out, "cases", f"{base['name']}.json")
            json.dump(s, open(path, "w"), indent=1)
            json.dump(config, open(path.replace(".json", ".config.json"), "w"))
            files.append((path, config))
        launch = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(a.dp),
                  "--master-port", str(_free_port())] if a.dp > 1 else [sys.executable]
        cmd = launch + ["-m", "adapters.impls.run", "--impl", a.name, "--out", os.path.join(a.out, "traces"),
                        *[p for p, _ in files]]
        env = dict(os.environ, MUONCHECK_PORT=str(_free_port()))   # dp 1 runs without torchrun: its own port
        try:   # the drawn knobs travel beside each scenario (CASE.config.json)
            subprocess.run(cmd, cwd=ROOT, env=env, stdout=open(os.path.join(a.out, "run.log"), "a"), stderr=subprocess.STDOUT,
                           timeout=600)
        except subprocess.TimeoutExpired:
            pass
        for path, config in files:
            name = os.path.basename(path)[:-5]
            trace = os.path.join(a.out, "traces", f"{name}.trace.json")
            case = {"scenario": os.path.relpath(path, a.out), "config": config}
            if not os.path.exists(trace):
                case.update(status="ERROR", why="no trace (the launch crashed or hung)")
            else:
                t = json.load(open(trace))
                if t.get("unsupported"):
                    case.update(status="DECLINED", why=t["unsupported"])
                else:
                    rep = os.path.join(a.out, "cases", f"{name}.verify.json")
                    subprocess.run([muoncheck, "verify", path, "--trace", trace, "--report", rep],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    r = json.load(open(rep)) if os.path.exists(rep) else {"scenarios": []}
                    sc = r["scenarios"][0] if r["scenarios"] else {}
                    bad = [v["id"] for v in sc.get("invariants", []) if v["status"] in ("FAIL", "ERROR")]
                    case.update(status="ERROR" if t.get("error") else ("FAIL" if bad else "PASS"), failing=bad,
                                error=t.get("error"), repro=(sc.get("repro") or [""])[0])
            record["cases"].append(case)
            done.append(case)
        minutes = (time.time() - start) / 60
        by = lambda st: sum(c["status"] == st for c in done)
        declined_by = {}
        for c in done:
            if c["status"] == "DECLINED":
                k = c["why"].split(":")[0].replace("knob ", "")
                declined_by[k] = declined_by.get(k, 0) + 1
        record["summary"] = {"dp": a.dp, "cases": len(done), "pass": by("PASS"), "fail": by("FAIL"), "error": by("ERROR"),
                             "declined": by("DECLINED"), "minutes": round(minutes, 2),
                             "cases_per_minute": round(len(done) / minutes, 2) if minutes else 0.0,
                             "declined_by_knob": declined_by, "seed": a.seed,
                             "command": f"scripts/impl-sweep.py {a.name} --dp {a.dp} --cases {a.cases} --seed {a.seed}"}
        json.dump(record, open(os.path.join(a.out, "sweep.json"), "w"), indent=1)
        print(json.dumps(record["summary"]), flush=True)


if __name__ == "__main__":
    sys.exit(main())
