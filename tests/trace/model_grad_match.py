"""The adapters' shared model computes the gradient muoncheck's control does, bit for bit.

    python3 tests/trace/model_grad_match.py MUONCHECK SCENARIO.json...

For each scenario (dp 1, gas 1: one micro-step is the whole step), the step-0 gradient of
adapters/common/model.py — the model copy in param_dtype, one backward on the step's batch — is
compared with the reduced gradient G of control member 0 (`muoncheck oracle --control`: the
forward/backward in fp32 on the param_dtype weights, the micro-step gradient rounded once to
param_dtype). Equal bit for bit, except where the exact gradient (the float128 oracle's) lies
within a few fp32 roundings of the midpoint of two param_dtype neighbours: there the two fp32
orders may round to either neighbour, and the element must be the other one. A model whose forward ran in bf16 would also round the residual and r/(2m) per
sample, a rounding no control member has (the torch sweep's false FAILs, 228x the band).
Exit 0 when all match, 1 on a mismatch, 77 (ctest SKIP) when torch is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError:
    print("SKIP: torch or numpy is not installed for", sys.executable)
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from adapters.common import model as shared_model  # noqa: E402
from adapters.common import scenario as muoncheck_scenario  # noqa: E402

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
MANTISSA = {"bf16": 8, "fp16": 11}   # significand bits: neighbours are 2^(1-bits)·|x| apart at most
FP32_ROUNDINGS = 4                   # how far from a midpoint the backward's fp32 roundings reach


def adapter_gradient(s):
    dtype = DTYPES[s.param_dtype]
    model = shared_model.ScenarioModel(s).to(dtype)
    model(shared_model.make_batch(s, 0, 0, "cpu", dtype)).backward()
    named = dict(model.named_parameters())
    return {p.name: named[p.name].grad.double().reshape(-1).numpy() for p in s.params}


def check(muoncheck, path):
    s = muoncheck_scenario.load(path)
    if s.dp != 1 or s.gas != 1 or s.param_dtype == "fp32":
        print(f"{path}: expected a 16-bit dp-1 gas-1 scenario")
        return False
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "control.json")
        subprocess.run([muoncheck, "oracle", path, "--control", "--out", out], check=True, capture_output=True)
        control = json.load(open(out))
        subprocess.run([muoncheck, "oracle", path, "--out", out], check=True, capture_output=True)
        exact = json.load(open(out))
    got = adapter_gradient(s)
    bad, n = [], 0
    for p, want, star in zip(s.params, control["steps"][0]["params"], exact["steps"][0]["params"]):
        want, star, have = np.array(want["grad"]), np.array(star["grad"]), got[p.name]
        n += want.size
        d = have != want
        tie = np.abs(star - (have + want) / 2) <= FP32_ROUNDINGS * 2.0**-24 * np.abs(star)
        neighbours = np.abs(have - want) <= 2.0**(1 - MANTISSA[s.param_dtype]) * np.abs(star)
        wrong = int(np.sum(d & ~(tie & neighbours)))
        ties = int(np.sum(d)) - wrong
        if wrong:
            bad.append(f"{p.name}: {wrong} of {want.size} elements differ ({ties} at a tie)")
    print(f"{s.name} ({s.param_dtype}, micro_batch {s.micro_batch}): {len(s.params)} params, {n} gradient elements:",
          "match" if not bad else "MISMATCH " + "; ".join(bad[:5]))
    return not bad


def main():
    muoncheck, paths = sys.argv[1], sys.argv[2:]
    results = [check(muoncheck, p) for p in paths]
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
