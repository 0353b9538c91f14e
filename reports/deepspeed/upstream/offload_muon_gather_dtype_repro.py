"""DeepSpeed ZeRO-1/2 + optimizer offload + Muon: the Muon all-gather ignores communication_data_type.

With `offload_optimizer`, ZeRO-1/2's step() runs `_apply_muon_updates_cpu_offload`, which gathers
each Muon matrix's gradient partition -- and from the second step on its momentum partition in the
same buffer -- through `_muon_all_gather_partitions`, in the dtype of those buffers: fp32. The
configured communication dtype (bf16 here: DeepSpeed's default for bf16 params, also set
explicitly) is used by every gradient reduction, not by this gather. Without offload, the same
gradients reach Newton-Schulz through a reduction in communication_data_type.

The script records every all_gather_into_tensor issued from inside `_muon_all_gather_partitions`
(dtype, elements) over two steps at dp 2 and compares it with communication_data_type. It also
prints the relative difference of the fp32 master weights between a run with the gathers as shipped
and a run whose gathers round what they send to communication_data_type (the momentum included,
which is what a naive "pass communication_data_type" change would do): that rounds optimizer state.
Standalone: torch + deepspeed only; two processes (GPUs, or CPU with DS_ACCELERATOR=cpu).
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 2 offload_muon_gather_dtype_repro.py [--stage 1|2]
Exit status 1 while a Muon gather travels in a dtype other than communication_data_type, 0 once none does.
"""
import argparse
import os
import sys

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
import torch  # noqa: E402
import deepspeed  # noqa: E402
import deepspeed.comm as dist  # noqa: E402


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.proj = torch.nn.Parameter(torch.randn(4, 8, generator=g) / 8)   # Muon (2-D), straddles the 2 partitions
        self.norm = torch.nn.Parameter(torch.ones(8))                          # AdamW (1-D)

    def forward(self, x):
        return ((x @ self.proj.t()).sum(-1, keepdim=True) * self.norm).float().square().mean()


def in_muon_gather():
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "_muon_all_gather_partitions":
            return True
        frame = frame.f_back
    return False


def train(stage, round_sent_to_comm_dtype):
    cfg = {"train_micro_batch_size_per_gpu": 1, "steps_per_print": 1 << 30, "gradient_clipping": 0.0,
           "bf16": {"enabled": True}, "communication_data_type": "bf16",
           "zero_optimization": {"stage": stage, "reduce_scatter": False,
                                 "offload_optimizer": {"device": "cpu", "pin_memory": False}},
           "optimizer": {"type": "Muon", "params": {"lr": 0.02, "momentum": 0.95}}}
    model = Model()
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    comm_dtype = engine.optimizer.communication_data_type
    seen = []
    shipped = dist.all_gather_into_tensor

    def recording(output, tensor, *a, **k):
        if in_muon_gather():
            seen.append((step["i"], tensor.dtype, tensor.numel()))
            if round_sent_to_comm_dtype:
                tensor.copy_(tensor.to(comm_dtype))
        return shipped(output, tensor, *a, **k)

    dist.all_gather_into_tensor = recording
    step = {"i": 0}
    try:
        for step["i"] in range(2):
            x = torch.randn(1, 8, generator=torch.Generator().manual_seed(1 + 7 * step["i"] + dist.get_rank()))
            engine.backward(engine(x.to(engine.device, torch.bfloat16)))
            engine.step()
    finally:
        dist.all_gather_into_tensor = shipped
    full = deepspeed.utils.safe_get_full_fp32_param(engine.module.proj).detach().float().cpu().clone()
    return full, seen, comm_dtype


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", type=int, default=1, choices=[1, 2])
    stage = ap.parse_args().stage
    deepspeed.init_distributed(dist_backend="nccl" if torch.cuda.is_available() else "gloo")
    rank0 = dist.get_rank() == 0
    if rank0:
        print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, ZeRO-{stage} + offload_optimizer cpu, "
              f"bf16, dp {dist.get_world_size()}, Muon 4x8 + AdamW vector of 8, two steps")
    a, seen, comm_dtype = train(stage, round_sent_to_comm_dtype=False)
    b, _, _ = train(stage, round_sent_to_comm_dtype=True)
    wrong = [s for s in seen if s[1] != comm_dtype]
    if rank0:
        print(f"communication_data_type: {comm_dtype}")
        for i, dtype, n in seen:
            print(f"  step {i}: Muon all_gather_into_tensor sends {n} elements of {dtype} "
                  f"({n * torch.tensor([], dtype=dtype).element_size()} bytes)")
        print(f"fp32 master of the Muon matrix, gathers as shipped vs gathers rounded to {comm_dtype} "
              f"(momentum included): relative difference {float((a - b).norm() / a.norm()):.3g}")
    if not seen:
        if rank0:
            print("no Muon gather ran (this version runs no Muon under offload?): not the defect this script shows")
        return 2
    if wrong:
        if rank0:
            print(f"expected: every Muon gather in {comm_dtype}; {len(wrong)} of {len(seen)} were not: DEFECT PRESENT")
        return 1
    if rank0:
        print("no defect")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
