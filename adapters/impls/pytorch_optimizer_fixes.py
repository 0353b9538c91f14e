"""pytorch-optimizer's known defects' fixes (reports/pytorch-optimizer/upstream/), as the registry
adapters/pytorch-optimizer/known_defects.json names them (adapters/common/fixes.py applies them)."""
import math

import torch.distributed as dist


def owner_broadcast(original):
    """DistributedMuon.step gathers each chunk of W (correctly padded) params with one all_gather, which
    needs one shape per chunk: rank j's entry of the chunk is broadcast from rank j instead."""
    def all_gather(tensor_list, tensor, group=None, async_op=False):
        for j, t in enumerate(tensor_list):
            dist.broadcast(t, src=j, group=group)
    return all_gather


def gram_gathered_in_reduce_dtype(original):
    """pytorch_optimizer/optimizer/utils/matrix.py, zero_power_via_gram_newton_schulz under FSDP2:
    `_orthogonalize_dtensor(g.float(), ...)` then `helper(g.full_tensor(), ...)` all-gathers each
    sharded update whole in fp32 on every rank, before the Gram path's own fp16 cast (the
    newton_schulz path casts to bf16 first). The replacement, for an fp32 DTensor on its way to the
    Gram helper: the gather runs in the dtype FSDP2 reduces that parameter's gradient in (the comm
    dtype; the parameter found by the update's global shape, one dtype for all of that shape), and
    is cast back to fp32 after, so the Gram NS normalizes the gathered values in fp32 as shipped;
    from_local and redistribute (a local slice) are the shipped ones. Anything else goes to the
    original."""
    import functools

    import torch

    @functools.wraps(original)
    def _orthogonalize_dtensor(g, helper, **kwargs):
        from torch.distributed.tensor import DTensor
        if getattr(helper, "__name__", "") != "zero_power_via_gram_newton_schulz" or g.dtype != torch.float32:
            return original(g, helper, **kwargs)
        dtypes = _reduce_dtypes_by_shape(g.device_mesh).get(tuple(g.shape), set())
        if len(dtypes) != 1 or next(iter(dtypes)) == torch.float32:
            return original(g, helper, **kwargs)
        result = helper(g.to(next(iter(dtypes))).full_tensor().float(), **kwargs)
        return DTensor.from_local(result, device_mesh=g.device_mesh).redistribute(placements=g.placements)
    return _orthogonalize_dtensor


def _reduce_dtypes_by_shape(mesh):
    """{global shape: {dtypes FSDP2 reduces the gradients of parameters of that shape in}}, keyed by
    shape: the Gram helper sees the update, not the parameter. Only the parameters on `mesh` (the
    update's): a resident worker's earlier cases leave their sharded models behind until they are
    collected, each on a mesh of its own, and one of them with another dtype for a shape made the
    fix fall back to the fp32 gather (pytorch-optimizer dp-2 seed-31 cases 218, 519 and 557, NEW in
    the sweep and conforming with the fixes in a fresh worker)."""
    from ..common.fsdp2_params import fsdp_params, reduce_dtype
    out = {}
    for fsdp_param in fsdp_params():
        p = fsdp_param.sharded_param
        if getattr(p, "device_mesh", None) is not mesh:
            continue
        if p.ndim >= 2:   # the update as _orthogonalize reshapes it: (rows, the rest)
            out.setdefault((p.shape[0], math.prod(p.shape[1:])), set()).add(reduce_dtype(fsdp_param))
    return out
