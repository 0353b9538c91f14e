"""The FSDP2 parameters of this process and the dtype FSDP2 reduces each one's gradient in, read
from FSDP2's per-module state (an optimizer sees only the sharded DTensors, which do not carry the
mixed-precision policy). Used by fixes that gather in that dtype."""


def fsdp_params():
    """Every FSDPParam of every fully_shard-ed module of this process."""
    from torch.distributed._composable_state import _module_state_mapping
    from torch.distributed.fsdp._fully_shard._fsdp_state import FSDPState
    for ref in list(_module_state_mapping.values()):
        state = ref()
        if not isinstance(state, FSDPState):
            continue
        groups = getattr(state, "_fsdp_param_groups", None)
        if groups is None:
            groups = [state._fsdp_param_group] if state._fsdp_param_group is not None else []
        for group in groups:
            yield from group.fsdp_params


def reduce_dtype(fsdp_param):
    """The dtype FSDP2 reduces this parameter's gradient in: `unsharded_grad_dtype` where torch has
    it. Torch releases before it (2.11) clamp `reduce_dtype` to None where it equals `param_dtype`
    (init_dtype_attrs: the gradient is computed in `param_dtype` already) and `param_dtype` to None
    where it equals the parameter's own dtype, so there the gradient is reduced in the first of
    `reduce_dtype`, `param_dtype` and the parameter's dtype that is set: with bf16 params and a
    bf16 reduce, `reduce_dtype or orig_dtype` said fp32 and the fixes built on it did nothing."""
    if hasattr(type(fsdp_param), "unsharded_grad_dtype"):
        return fsdp_param.unsharded_grad_dtype
    return fsdp_param.reduce_dtype or fsdp_param.param_dtype or fsdp_param.orig_dtype
