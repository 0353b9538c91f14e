"""torch.optim.Muon normalizes a bf16 momentum buffer in place when Nesterov is off (torch <= 2.11).

    python3 reports/torch/upstream/muon_bf16_momentum_aliasing_repro.py     # exit 1 while the defect is there

torch/optim/_muon.py (2.11): `_zeropower_via_newtonschulz` starts with `ortho_grad = grad.bfloat16()`,
which returns the tensor itself when it is already bf16, then `ortho_grad.div_(norm)`. With
`nesterov=False` the tensor is the momentum buffer (`update = buf`), so a bf16 parameter's buffer
is divided by its Frobenius norm on every step: the next step's momentum starts from a unit-norm
matrix instead of β·M. fp32 parameters, and Nesterov (`grad.lerp(buf, β)` is a new tensor), are
not affected. Upstream fixed it with `grad.to(dtype=torch.bfloat16, copy=True)` (pytorch/pytorch
PR #194664, "fix momentum buffer aliasing in Newton-Schulz"); torch 2.15 has the fix.

Torch only: one 8x5 bf16 parameter, lr 0 (the weights never move), constant gradient of ones;
after one step the buffer must be (1 − β)·G = 0.1 everywhere.
"""
import sys

import torch

beta = 0.9
param = torch.nn.Parameter(torch.zeros(8, 5, dtype=torch.bfloat16))
param.grad = torch.ones_like(param)
opt = torch.optim.Muon([param], lr=0.0, weight_decay=0.0, momentum=beta, nesterov=False)
opt.step()
buf = opt.state[param]["momentum_buffer"].float()
want = torch.full_like(buf, 1 - beta).bfloat16().float()
ok = torch.equal(buf, want)
print(f"torch {torch.__version__}: momentum buffer after one step {buf[0, 0].item():.6g} (want {want[0, 0].item():.6g}): "
      + ("OK" if ok else "DEFECT: the NS normalized the bf16 buffer in place"))
sys.exit(0 if ok else 1)
