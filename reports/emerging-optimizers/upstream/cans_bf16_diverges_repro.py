"""emerging-optimizers 0.3.0: newton_schulz(coefficient_type="cans") under fp32_matmul_prec "medium" (Muon's
default; orthogonalized_optimizers/muon_utils.py casts the normalized input to bf16 and iterates there)
returns inf/huge values for a share of ordinary matrices; at "highest" (fp32) none, and no other
coefficient set does it in bf16.

    python3 reports/emerging-optimizers/upstream/cans_bf16_diverges_repro.py   # exit 1 while it diverges

Plain torch + emerging_optimizers, CPU, one process.
"""
import sys
import typing

if not hasattr(typing, "override"):   # the package needs Python >= 3.12 only for typing.override
    import typing_extensions
    typing.override = typing_extensions.override

import torch
from emerging_optimizers.orthogonalized_optimizers import muon_utils

g = torch.Generator().manual_seed(0)
xs = [torch.randn(37, 8, generator=g) * 1e-3 for _ in range(40)]   # a gradient's scale; NS normalizes it anyway
bad = {}
for kind in ("cans", "quintic", "polar_express"):
    for prec in ("medium", "highest"):
        torch.set_float32_matmul_precision(prec)
        outs = [muon_utils.newton_schulz(x, 5, coefficient_type=kind) for x in xs]
        bad[kind, prec] = sum(1 for o in outs if not torch.isfinite(o).all() or o.norm() > 10)
        s = max(float(torch.linalg.svdvals(x / x.norm())[0]) for x in xs)
        print(f"{kind:14s} {prec:8s}: {bad[kind, prec]:2d} of 40 37x8 matrices diverge (5 steps; normalized inputs' largest singular value <= {s:.2f})")
torch.set_float32_matmul_precision("highest")
print("the first cans triple (8.4703, -25.1081, 18.6293) at sigma 1: value", 8.4703 - 25.1081 + 18.6293,
      "slope", 8.4703 - 3 * 25.1081 + 5 * 18.6293)
sys.exit(1 if bad["cans", "medium"] else 0)
