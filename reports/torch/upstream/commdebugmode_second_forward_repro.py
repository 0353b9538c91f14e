"""torch.distributed.tensor.debug.CommDebugMode raises IndexError on a module's second forward in
one context (gradient accumulation) — torch 2.11.

    python3 reports/torch/upstream/commdebugmode_second_forward_repro.py    # exit 1 while the defect is there

CommDebugMode's module tracker (torch/distributed/tensor/debug/_comm_mode.py, 2.11) registers a
new forward hook `_fw_set_module_hook` on the module in every forward pre-hook and never removes
the previous one. On a module's second forward in the same context both hooks fire, each pops
`parent_list`, and the second pop empties it: `self.name = self.parent_list[-1]` raises IndexError
and the training step dies. torch 2.15 removes the old handle before registering a new one
(`register_forward_hook_handles[name].remove()`). Found by the torch adapter, which counted each
step's collectives with CommDebugMode around gas micro-steps (adapters/common/collectives.py now
counts them with its own dispatch mode). No upstream thread found (search: CommDebugMode
IndexError parent_list).

Torch only, no process group: two forward/backward passes of a two-layer Sequential.
"""
import sys

import torch
from torch.distributed.tensor.debug import CommDebugMode

model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
try:
    with CommDebugMode():
        for _ in range(2):
            model(torch.ones(2, 4, requires_grad=True)).sum().backward()
except IndexError as e:
    print(f"torch {torch.__version__}: DEFECT: CommDebugMode raised IndexError on the second forward: {e}")
    sys.exit(1)
print(f"torch {torch.__version__}: OK")
