"""pytorch-optimizer-fsdp2-gram-fp32-gather's fix gathers an update in the dtype FSDP2 reduces its
parameter's gradient in, found by shape among the sharded parameters of the update's own mesh: a
resident worker's earlier cases leave sharded models behind (each on a mesh of its own), whose
dtypes for the same shape must not count."""
import types

import torch

from adapters.impls import pytorch_optimizer_fixes as fixes


def fake_param(mesh, shape, dtype):
    sharded = types.SimpleNamespace(device_mesh=mesh, ndim=len(shape), shape=torch.Size(shape))
    return types.SimpleNamespace(sharded_param=sharded, unsharded_grad_dtype=dtype)


def test_only_the_parameters_on_the_updates_mesh_say_its_dtype(monkeypatch):
    this_case, earlier_case = object(), object()
    params = [fake_param(earlier_case, (4, 8), torch.float32), fake_param(this_case, (4, 8), torch.bfloat16),
              fake_param(this_case, (2, 3, 2), torch.bfloat16)]
    import adapters.common.fsdp2_params as fsdp2_params
    monkeypatch.setattr(fsdp2_params, "fsdp_params", lambda: iter(params))
    monkeypatch.setattr(fsdp2_params, "reduce_dtype", lambda p: p.unsharded_grad_dtype)
    assert fixes._reduce_dtypes_by_shape(this_case) == {(4, 8): {torch.bfloat16}, (2, 6): {torch.bfloat16}}
    assert fixes._reduce_dtypes_by_shape(earlier_case) == {(4, 8): {torch.float32}}
