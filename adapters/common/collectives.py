"""Records the collectives torch dispatches while it is active (a TorchDispatchMode), as the
muoncheck-trace/2 collective log (docs/trace-format.md, `ranks[].collectives`).

It sees what torch's CommDebugMode sees — c10d ops (FSDP2's all-gathers and reduce-scatters, DDP's
bucket all-reduce) and functional collectives (DTensor's redistributions, e.g. inside an optimizer
step on sharded params) — without CommDebugMode's module tracker, which fails on torch 2.11 for a
model whose forward calls grandchild modules directly (reports/torch/upstream/). Waits and
autograd wrappers are not collectives.

Each record: the kind muoncheck names (`all_reduce`, `reduce_scatter`, `all_gather`, `gather`,
`scatter`), the dtype,
the logical size (nccl-tests' "size": a gather's output, a reduction's input), the purpose the
caller's `classify(kind, elements)` gives (`classify(kind, elements, dtype)` when it has `wants_dtype`), and the caller's `phase` and `step`. Collectives of
integer, bool or fp64 tensors (DDP's bucket-index broadcasts) and ops muoncheck has no kind for
(broadcast, all-to-all) are not in the log; they are counted in `unrecorded` by op name, so a
floating-point broadcast in training would show in the trace's details, never vanish.
"""
from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_NAMESPACES = ("c10d", "_c10d_functional", "c10d_functional", "_c10d_functional_autograd")
_DTYPE = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
_KINDS = {"allreduce_": "all_reduce", "all_reduce": "all_reduce", "allreduce_coalesced_": "all_reduce",
          "all_reduce_coalesced": "all_reduce",
          "_allgather_base_": "all_gather", "allgather_": "all_gather", "all_gather_into_tensor": "all_gather",
          "all_gather_into_tensor_out": "all_gather", "allgather_into_tensor_coalesced_": "all_gather",
          "all_gather_into_tensor_coalesced": "all_gather",
          "_reduce_scatter_base_": "reduce_scatter", "reduce_scatter_": "reduce_scatter",
          "reduce_scatter_tensor": "reduce_scatter", "reduce_scatter_tensor_coalesced_": "reduce_scatter",
          "reduce_scatter_tensor_coalesced": "reduce_scatter"}
_KINDS.update({"gather_": "gather", "gather": "gather", "scatter_": "scatter", "scatter": "scatter"})
_FUNCTIONAL_GATHERS = ("all_gather_into_tensor", "all_gather_into_tensor_coalesced")   # args: input, group_size


def tensors_in(x):
    """Every tensor in a (nested) argument list, in order."""
    if torch.is_tensor(x):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for y in x for t in tensors_in(y)]
    return []


class CollectiveRecorder(TorchDispatchMode):
    def __init__(self, classify):
        super().__init__()
        self.classify = classify
        self.log, self.unrecorded, self.counts = [], Counter(), Counter()
        self.phase, self.step = "micro_step", 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if any(t.__name__ == "DTensor" for t in types):
            return NotImplemented   # let DTensor desugar into collectives first (as CommDebugMode does)
        name = func._overloadpacket.__name__
        if func.namespace in _NAMESPACES and not name.startswith(("wait", "_wrap")):
            self._record(name, args, kwargs or {})
        return func(*args, **(kwargs or {}))

    def _record(self, name, args, kwargs):
        self.counts[name] += 1
        tensors = tensors_in(list(args) + list(kwargs.values()))
        kind = _KINDS.get(name)
        if kind is None or not tensors or tensors[0].dtype not in _DTYPE:
            self.unrecorded[name] += 1
            return
        # the logical size: a gather's output (the root's list), a scatter's input, a reduction's input
        elements = max(t.numel() for t in tensors) if kind not in ("all_reduce", "gather", "scatter") else \
            sum(t.numel() for t in tensors_in(args[0])) if kind == "all_reduce" else \
            max(sum(t.numel() for t in tensors_in(a)) for a in args[:2])
        if name in _FUNCTIONAL_GATHERS:
            elements = sum(t.numel() for t in tensors_in(args[0])) * int(args[1])
        dtype = tensors[0].dtype
        self.log.append({"kind": kind, "dtype": _DTYPE[dtype], "elements": int(elements),
                         "bytes": int(elements * torch.tensor([], dtype=dtype).element_size()),
                         "purpose": self.classify(kind, int(elements), _DTYPE[dtype]) if getattr(self.classify, "wants_dtype", False)
                         else self.classify(kind, int(elements)), "phase": self.phase, "step": self.step})
