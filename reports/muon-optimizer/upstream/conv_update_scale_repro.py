"""muon-optimizer 0.1.0: a conv (4-D) weight cannot be stepped, and its Muon update is scaled by its
kernel's kh/kw, not by its matrix view (out, in·kh·kw).

    python3 reports/muon-optimizer/upstream/conv_update_scale_repro.py     # exit 1 while the defect is there

muon.py, muon_update: the update is flattened for NS (`update.view(len(update), -1)` when ndim == 4)
but scaled by `max(1, grad.size(-2) / grad.size(-1))**0.5`, the last two dimensions of the 4-D
gradient: kh/kw = 1 for a square kernel. The documented rule is √max(1, rows/cols) of the matrix
NS orthogonalized, here 64 x 27 (in 3, kernel 3x3): √(64/27) = 1.54, so the update is 1.54x too
small; a depthwise 3x3 conv (C, 1, 3, 3) gets √(C/9) too small.

In 0.1.0 the step itself fails first: `p.add_(update, alpha=-lr)` adds the flattened 64x27 update
to the 64x3x3x3 weight (RuntimeError); the repository's master reshapes it (`update.reshape(p.shape)`)
and keeps the scale.

torch + muon-optimizer only: one 64x3x3x3 weight; one SingleDeviceMuon step, and muon_update with
momentum 0 (the update is NS(G)·scale) compared with muon's own NS of the 64x27 view times √(64/27).
"""
import sys

import torch

import muon

torch.manual_seed(0)
w = torch.nn.Parameter(torch.zeros(64, 3, 3, 3))
g = torch.randn_like(w)
w.grad = g.clone()
try:
    muon.SingleDeviceMuon([w], lr=1.0, momentum=0.0).step()
    stepped = "stepped"
except RuntimeError as e:
    stepped = f"RuntimeError: {str(e).splitlines()[0]}"
got = muon.muon_update(g.clone(), torch.zeros_like(g), beta=0.0).float()
want = muon.zeropower_via_newtonschulz5(g.view(64, -1), steps=5).float() * (64 / 27) ** 0.5
ratio = (got.norm() / want.norm()).item()
ok = stepped == "stepped" and abs(ratio - 1) < 1e-2
print(f"SingleDeviceMuon.step on a 64x3x3x3 weight: {stepped}")
print(f"muon_update norm / expected norm = {ratio:.4f} (expected 1; the kernel's kh/kw rule gives {(27 / 64) ** 0.5:.4f})")
print("OK" if ok else "DEFECT: a conv weight is not stepped as its matrix view")
sys.exit(0 if ok else 1)
