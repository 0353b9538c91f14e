"""Run under torchrun by test_state_where_it_lives.py: torch.optim.Muon whose momentum, after each
step, stays only on its owner rank (param i on rank i % world); elsewhere it is hidden under
another key until the next step. Prints rank 0's trace as JSON."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch  # noqa: E402

from adapters import case, worker  # noqa: E402
from adapters.common import ranks  # noqa: E402
from adapters.common import scenario as scenario_file  # noqa: E402
from adapters.torch.plugin import TorchMuon  # noqa: E402


class OwnerOnly(torch.optim.Optimizer):
    """Wraps an optimizer: its momentum lives on param i's owner rank only between steps."""

    def __init__(self, inner, index):
        self.inner, self.index = inner, index
        self.param_groups, self.state, self.defaults = inner.param_groups, inner.state, inner.defaults

    def step(self):
        for p, st in self.inner.state.items():
            if "_elsewhere" in st:
                st["momentum_buffer"] = st.pop("_elsewhere")
        self.inner.step()
        for p, st in self.inner.state.items():
            if self.index[id(p)] % ranks.world_size() != ranks.rank() and "momentum_buffer" in st:
                st["_elsewhere"] = st.pop("momentum_buffer")

    def zero_grad(self, set_to_none=True):
        self.inner.zero_grad(set_to_none=set_to_none)


class OwnerMuon(TorchMuon):
    def optimizer(self, muon_groups, adam_groups, s):
        opts = super().optimizer(muon_groups, adam_groups, s)
        index = {id(g["params"][0]): i for i, g in enumerate(muon_groups)}
        return [OwnerOnly(o, index) if isinstance(o, torch.optim.Muon) else o for o in opts]


plugin = OwnerMuon()
worker.init_process_group("cpu", plugin)
trace = case.run(plugin, scenario_file.load(sys.argv[1]).resolved)
if ranks.rank() == 0:
    print("TRACE " + json.dumps(trace))
