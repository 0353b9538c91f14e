"""Times DeepSpeed's Muon all-gathers and reports their bus bandwidth (nccl-tests' definition).

DeepSpeed's ZeRO code calls collectives through the `deepspeed.comm` package (`from deepspeed import
comm as dist`), looking them up at call time, so wrapping `all_gather` / `all_gather_into_tensor` /
`allgather_fn` there sees every call. A call counts as a Muon gather when a caller frame's function
name contains "muon" (`_muon_update_sub_group`, `_partitioned_buffers_all_gather` called from it,
`_muon_all_gather_partitions`). Each timed call is bracketed by device synchronisation, so the time
is the collective's own (and the run loses the overlap it would otherwise have: use it for
bandwidth, not for end-to-end speed).

nccl-tests, all-gather: algbw = S / t with S the gathered (output) bytes, busbw = algbw · (n−1)/n.
"""
import sys
import time

import torch

_NAMES = ("all_gather", "all_gather_into_tensor", "allgather_fn")


def _tensor_bytes(x):
    if torch.is_tensor(x):
        return x.numel() * x.element_size()
    if isinstance(x, (list, tuple)):
        return sum(_tensor_bytes(t) for t in x)
    return 0


def _inside_muon(depth=2, limit=24):
    frame = sys._getframe(depth)
    for _ in range(limit):
        if frame is None:
            return False
        if "muon" in frame.f_code.co_name.lower():
            return True
        frame = frame.f_back
    return False


class GatherTimer:
    def __init__(self, world_size, synchronize):
        self.world_size = world_size
        self.synchronize = synchronize
        self.calls, self.bytes, self.seconds = 0, 0, 0.0
        self._installed = []

    def install(self):
        import deepspeed.comm as ds_comm
        for name in _NAMES:
            fn = getattr(ds_comm, name, None)
            if fn is not None:
                setattr(ds_comm, name, self._wrap(fn))
                self._installed.append((ds_comm, name, fn))

    def uninstall(self):
        for module, name, fn in self._installed:
            setattr(module, name, fn)
        self._installed = []

    def _wrap(self, fn):
        timer = self

        def timed(*args, **kwargs):
            if not _inside_muon():
                return fn(*args, **kwargs)
            timer.synchronize()
            start = time.perf_counter()
            out = fn(*args, **kwargs)
            if hasattr(out, "wait"):
                out.wait()
            timer.synchronize()
            timer.seconds += time.perf_counter() - start
            timer.calls += 1
            # the output is the first argument (all_gather(list, t), all_gather_into_tensor(out, in))
            timer.bytes += _tensor_bytes(args[0] if args else kwargs.get("tensor_list", kwargs.get("output_tensor")))
            return out

        return timed

    def summary(self):
        n = self.world_size
        algbw = self.bytes / self.seconds / 1e9 if self.seconds > 0 else None
        return {"calls": self.calls, "bytes": self.bytes, "seconds": round(self.seconds, 6),
                "algbw_GBps": None if algbw is None else round(algbw, 3),
                "busbw_GBps": None if algbw is None else round(algbw * (n - 1) / n, 3),
                "definition": "nccl-tests all_gather: algbw = output bytes / time, busbw = algbw*(n-1)/n; "
                              "each call bracketed by device synchronisation"}
