"""muon-optimizer 0.1.0: a 3-D weight (a Conv1d kernel, out x in x k) is orthogonalized slice by
slice, not as its (out, in·k) matrix.

    python3 reports/muon-optimizer/upstream/rank3_batched_ns_repro.py     # exit 1 while the defect is there

muon.py, muon_update: only `update.ndim == 4` is flattened (`update.view(len(update), -1)`); a 3-D
update goes to zeropower_via_newtonschulz5 as is, which is batched over the leading dimension
(`X.norm(dim=(-2, -1))`, `X @ X.mT`): each of the `out` slices (in x k) is normalized and
orthogonalized on its own, and the scale is read from (in, k). The docstring's rule (view the
weight as 2-D, collapsing the trailing dimensions) gives one NS of the (out, in·k) matrix.

torch + muon-optimizer only: one 8x4x3 weight, one SingleDeviceMuon step with lr 1 and momentum 0,
compared with muon's own NS of the 8x12 view (scale √max(1, 8/12) = 1).
"""
import sys

import torch

import muon

torch.manual_seed(0)
w = torch.nn.Parameter(torch.zeros(8, 4, 3))
g = torch.randn_like(w)
w.grad = g.clone()
muon.SingleDeviceMuon([w], lr=1.0, momentum=0.0).step()
got = -w.detach().reshape(8, 12)
want = muon.zeropower_via_newtonschulz5(g.reshape(8, 12), steps=5).float()
err = ((got - want).norm() / want.norm()).item()
ok = err < 2e-2   # bf16 NS on both sides
print(f"relative difference from NS of the 8x12 view: {err:.3f}: "
      + ("OK" if ok else "DEFECT: the 3-D update is orthogonalized per slice of its first dimension"))
sys.exit(0 if ok else 1)
