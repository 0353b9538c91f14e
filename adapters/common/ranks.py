"""The adapter's view of its process group: who am I, and how rank 0 collects what all ranks saw.

One process per GPU (torchrun sets RANK / LOCAL_RANK / WORLD_SIZE); a scenario runs only when its
`engine.dp` equals the world size. Every helper here is collective: all ranks call it in the same
order, rank 0 gets the result, the others get None.
"""
import contextlib
import os
import sys

import torch
import torch.distributed as dist


def rank():
    return dist.get_rank() if dist.is_initialized() else int(os.environ.get("RANK", "0"))


def world_size():
    return dist.get_world_size() if dist.is_initialized() else int(os.environ.get("WORLD_SIZE", "1"))


def local_rank():
    return int(os.environ.get("LOCAL_RANK", "0"))


def gather_to_rank0(obj):
    """[obj of rank 0, obj of rank 1, ...] on rank 0, None elsewhere (pickled through the backend)."""
    if world_size() == 1:
        return [obj]
    out = [None] * world_size() if rank() == 0 else None
    dist.gather_object(obj, out, dst=0)
    return out


def all_ranks_true(flags):
    """flags[i] and-ed over the ranks, on every rank (a list of bools; one collective)."""
    if world_size() == 1:
        return list(flags)
    out = [None] * world_size()
    dist.all_gather_object(out, list(flags))
    return [all(r[i] for r in out) for i in range(len(flags))]


_deferring = 0
_deferred = None   # rank 0's first error raised under deferred_verdicts, until settle() raises it


@contextlib.contextmanager
def deferred_verdicts():
    """Inside: raise_together and defer keep rank 0's error for the next settle() instead of
    synchronising the ranks now. A training loop settles at each step's start, where it aligns the
    ranks anyway, so a state read-back costs its gather and no verdict broadcast of its own."""
    global _deferring, _deferred
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
        if not _deferring:   # an error left unsettled went with the exception that ended the run
            _deferred = None


def defer(error):
    """Keeps rank 0's `error` (the first one) for the next settle()."""
    global _deferred
    if _deferred is None:
        _deferred = error


def settle(device):
    """Aligns the ranks (as a barrier) and raises on every rank the error rank 0 deferred since the
    last settle, if any. Collective: one one-element all-reduce, and a broadcast of the message
    only when there is an error."""
    global _deferred
    error, _deferred = _deferred, None
    if world_size() > 1:
        flag = torch.tensor([error is not None], dtype=torch.int64, device=_collective_device())
        dist.all_reduce(flag)
        if not int(flag.item()):
            return
        message = _broadcast_message(str(error) if rank() == 0 and error is not None else None)
        if error is None:
            raise RuntimeError(message)
    if error is not None:
        raise error


def raise_together(error):
    """Raises `error` (rank 0's; the others pass None) on every rank, so that a check made on rank 0
    after a gather does not leave the other ranks running into the next collective alone (a
    deadlock: the worker times out and the check's message is lost). Collective: a one-element
    broadcast says whether there is an error, a second one carries its message only then, so the
    common case costs one small broadcast instead of broadcast_object_list's two. Under
    deferred_verdicts, the error waits for the next settle() and nothing is synchronised here."""
    if _deferring:
        if error is not None:
            defer(error)
        return
    message = str(error) if error is not None else None
    if world_size() > 1:
        message = _broadcast_message(message if rank() == 0 else None)
    if message is None:
        return
    raise error if error is not None else RuntimeError(message)


RAISED_PREFIX = "muoncheck: rank "


@contextlib.contextmanager
def raised_noted():
    """Inside, an exception is written to stderr (the worker's log) as "muoncheck: rank R raised
    TYPE: MESSAGE" the moment it leaves the block, before the teardown's collectives: a rank that
    raises while the others wait inside the implementation's collectives hangs them all, and the
    hang's ERROR then names the exception that began it (harness/external/stack_dump.hpp)."""
    try:
        yield
    except BaseException as e:
        if getattr(e, "_muoncheck_noted", False):   # an inner block noted it already
            raise
        e._muoncheck_noted = True
        first = str(e).splitlines()[0] if str(e) else ""
        line = f"{RAISED_PREFIX}{rank()} raised {type(e).__name__}: {first[:300]}\n"
        sys.stderr.flush()
        os.write(2, line.encode())   # one write: the ranks share the log, and a line must not be split
        raise


def _broadcast_message(message):
    """Rank 0's `message` (a string, or None) on every rank."""
    flag = torch.tensor([message is not None], dtype=torch.int64, device=_collective_device())
    dist.broadcast(flag, src=0)
    if not int(flag.item()):
        return None
    out = [message]
    dist.broadcast_object_list(out, src=0)
    return out[0]


def _collective_device():
    """Where the process group's collectives take their tensors: the rank's GPU under NCCL, the
    host under gloo."""
    return torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else torch.device("cpu")


def mean_over_ranks(value, device):
    """The mean of a float over the ranks (the global batch's loss from each rank's micro-batch)."""
    if world_size() == 1:
        return value
    t = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return float(t.item()) / world_size()


def barrier(device):
    if world_size() > 1:
        dist.barrier(device_ids=[device.index] if device.type == "cuda" else None)


def nccl_version():
    try:
        v = torch.cuda.nccl.version()
        return ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
    except Exception:   # CPU build of torch
        return None
