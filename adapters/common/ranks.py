"""The adapter's view of its process group: who am I, and how rank 0 collects what all ranks saw.

One process per GPU (torchrun sets RANK / LOCAL_RANK / WORLD_SIZE); a scenario runs only when its
`engine.dp` equals the world size. Every helper here is collective: all ranks call it in the same
order, rank 0 gets the result, the others get None.
"""
import os

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


def raise_together(error):
    """Raises `error` (rank 0's; the others pass None) on every rank, so that a check made on rank 0
    after a gather does not leave the other ranks running into the next collective alone (a
    deadlock: the worker times out and the check's message is lost). Collective: a one-element
    broadcast says whether there is an error, a second one carries its message only then, so the
    common case costs one small broadcast instead of broadcast_object_list's two."""
    message = str(error) if error is not None else None
    if world_size() > 1:
        message = _broadcast_message(message if rank() == 0 else None)
    if message is None:
        return
    raise error if error is not None else RuntimeError(message)


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
