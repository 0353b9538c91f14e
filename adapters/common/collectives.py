"""Counts the collectives torch dispatches while it is active (a TorchDispatchMode).

It sees what torch's CommDebugMode sees — c10d ops (FSDP2's all-gathers and reduce-scatters, DDP's
first-step broadcasts and its bucket all-reduce) and functional collectives (DTensor's
redistributions, e.g. inside an optimizer step on sharded params) — without CommDebugMode's module
tracker, which fails on torch 2.11 for a model whose forward calls grandchild modules directly.
Counts are by op name (`_allgather_base_`, `all_reduce`, ...); waits and autograd wrappers are not collectives.
"""
from collections import Counter

from torch.utils._python_dispatch import TorchDispatchMode

_NAMESPACES = ("c10d", "_c10d_functional", "c10d_functional", "_c10d_functional_autograd")


class CollectiveCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.counts = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if any(t.__name__ == "DTensor" for t in types):
            return NotImplemented   # let DTensor desugar into collectives first (as CommDebugMode does)
        name = func._overloadpacket.__name__
        if func.namespace in _NAMESPACES and not name.startswith(("wait", "_wrap")):
            self.counts[name] += 1
        return func(*args, **(kwargs or {}))
