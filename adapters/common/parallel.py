"""The scenario's engine as torch's data parallelism: DDP for stage 0, FSDP2 `fully_shard` for 2/3.

- DDP (stage 0): params replicated, gradients all-reduced (averaged) in buckets of
  `engine.reduce_bucket_size` elements (`bucket_cap_mb`). bf16: the module holds bf16 params
  (forward, backward, accumulation and all-reduce in bf16) and the optimizers step fp32 master
  copies (gradients copied up, weights copied down): DDP has no public mixed-precision policy.
- FSDP2 (stages 2/3): `fully_shard` on every module that owns parameters, then on the root;
  `reshard_after_forward` = (stage == 3) — stage 2 keeps the gathered params from forward to
  backward (FSDP2's ZeRO-2-like setting), stage 3 gathers them again for backward. Params, grads
  and optimizer state are DTensor shards of the fp32 params; bf16 maps to
  `MixedPrecisionPolicy(param_dtype=bf16)`, `comm_dtype` to its `reduce_dtype` (always given).
- gas, stage 0 (DDP): every micro-step but the last runs without gradient sync (`no_sync()`), so
  gradients accumulate locally and are reduced once: the semantics' stage-0/1 order.
- gas, stages 2/3 (FSDP2): every micro-step is reduce-scattered (gradient sync stays on) and FSDP2
  accumulates the reduced shards in the sharded param's dtype (fp32): the semantics' stage-2/3 order
  (docs/semantics.md §9: reduced every micro-step, the reduced sums accumulated). Reducing once, as
  before, rounded the 16-bit comm_dtype once where the scenario rounds it once per micro-step: a
  false FAIL (heavyball sweep seed 31 dp 2 c191: bf16 wire, gas 8, AdamW weight 4.82e-06 vs the
  band's 3.32e-07, 2.67x; 0.1 with every micro-step reduced).
"""
import contextlib

import torch
import torch.distributed as dist

_TORCH_DTYPE = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def torch_dtype(name):
    return _TORCH_DTYPE[name]


class Parallel:
    """The wrapped model and the fp32 tensors the optimizers step, in the scenario's param order."""

    def __init__(self, model, s, mode, device):
        self.mode, self.s, self.device = mode, s, device
        self.compute_dtype = torch_dtype(s.param_dtype)
        by_name = dict(model.named_parameters())
        self.masters = None
        self.settings = {"parallelism": mode}
        if mode == "ddp":
            if self.compute_dtype != torch.float32:
                self.masters = [torch.nn.Parameter(by_name[p.name].detach().clone().float()) for p in s.params]
                model.to(self.compute_dtype)
            element = torch.tensor([], dtype=self.compute_dtype).element_size()
            bucket_cap_mb = s.reduce_bucket_size * element / (1 << 20)
            ids = [device.index] if device.type == "cuda" else None
            self.module = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids, bucket_cap_mb=bucket_cap_mb)
            self.settings.update(bucket_cap_mb=bucket_cap_mb, masters="fp32 copies" if self.masters else "the params")
            self.model = model
        else:
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
            mesh = init_device_mesh(device.type, (s.dp,))
            reduce = torch_dtype(s.comm_dtype)
            # reduce_dtype always explicit: with None, torch 2.15 reduces (and accumulates) in the sharded
            # param's dtype, fp32 here, where 2.11 used param_dtype (_fsdp_api.py, "versionchanged:: 2.15")
            mp = MixedPrecisionPolicy(param_dtype=self.compute_dtype if self.compute_dtype != torch.float32 else None,
                                      reduce_dtype=reduce)
            reshard = s.stage == 3
            for node in model._owners:
                if node is not model:
                    fully_shard(node, mesh=mesh, reshard_after_forward=reshard, mp_policy=mp)
            fully_shard(model, mesh=mesh, reshard_after_forward=reshard, mp_policy=mp)
            self.module = self.model = model
            self.settings.update(reshard_after_forward=reshard, mp_param_dtype=s.param_dtype, mp_reduce_dtype=s.comm_dtype,
                                 fully_shard="each parameter-owning module, then the root")
            by_name = dict(model.named_parameters())
        self.module_params = [by_name[p.name] for p in s.params]
        self.params = self.masters or self.module_params   # what the optimizers step

    def sync(self, last_micro_step):
        """The context of one micro-step: DDP syncs only on the last, FSDP2 on every one (the module docstring)."""
        if self.mode == "ddp":
            return contextlib.nullcontext() if last_micro_step else self.module.no_sync()
        self.module.set_requires_gradient_sync(True)
        return contextlib.nullcontext()

    def after_backward(self):
        if self.masters:
            for m, p in zip(self.masters, self.module_params):
                m.grad, p.grad = p.grad.float(), None

    @torch.no_grad()
    def after_step(self):
        if self.masters:
            for m, p in zip(self.masters, self.module_params):
                p.copy_(m)


def full(t):
    """The whole tensor on every rank (a DTensor shard is gathered: collective)."""
    return t.full_tensor() if hasattr(t, "full_tensor") else t


def world():
    return dist.get_world_size() if dist.is_initialized() else 1
