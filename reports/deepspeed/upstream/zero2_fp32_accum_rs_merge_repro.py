"""DeepSpeed 0.19.8, ZeRO-2 with bf16 params accumulating gradients in fp32 and reduce_scatter: an
AdamW parameter whose reduce-bucket slice is followed by a Muon matrix's slice (same destination
rank) gets no gradient; its step reads zeros and it does not move.

average_tensor merges consecutive bucket ranges bound for the same rank; the merge tests only the
new range's fp32 output slice (`grad_partition_output is None`) and writes None as the merged
range's output, so the AdamW slice's output in the compact fp32 partition buffer is dropped.
Needs contiguous_gradients (optimizer offload forces it). Standalone: torch + deepspeed only; one
process (GPU, or CPU with DS_ACCELERATOR=cpu), or more with torchrun (every rank gets the same batch).
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 zero2_fp32_accum_rs_merge_repro.py [--offload]
        [--no-reduce-scatter | --bf16-accum | --no-muon]     (the three controls: no defect)
Exit status 1 while the defect shows (an AdamW element that should move by lr does not), 2 when
DeepSpeed refuses the config or the step raises first (0.19.6), else 0.
"""
import argparse
import os

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29561")):   # torchrun sets these; plain python3 runs one process
    os.environ.setdefault(key, value)
import torch  # noqa: E402
import deepspeed  # noqa: E402

LR = 0.02


class Model(torch.nn.Module):
    def __init__(self, muon):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        w = torch.randn(8, 16, generator=g) / 4
        v = torch.randn(8, 16, generator=g) / 4
        self.w = torch.nn.Parameter(w if muon else w.reshape(-1))     # 2-D: Muon; 1-D: AdamW (control)
        # a second matrix of the same size: at world 2 each lies whole in one rank's partition, so
        # the one after the vector in the bucket goes to one rank only (a matrix split over two
        # partitions goes to both, and is not merged with the vector's range)
        self.v = torch.nn.Parameter(v if muon else v.reshape(-1))
        self.scale = torch.nn.Parameter(1 + 0.1 * torch.randn(16, generator=g))   # AdamW

    def forward(self, x, y):
        # two terms; the vector's is built last, so autograd finishes its gradient first and it enters
        # the reduce bucket before the matrix's (the order the defect needs)
        matrix = ((x.float() @ self.w.float().view(8, 16).t() - y.float()) ** 2).mean()
        matrix = matrix + ((x.float() @ self.v.float().view(8, 16).t() + y.float()) ** 2).mean()
        vector = ((x.float() * self.scale.float() - x.float().roll(1, -1)) ** 2).mean()
        return matrix + vector


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--offload", action="store_true", help="offload_optimizer cpu (forces contiguous_gradients)")
    ap.add_argument("--no-reduce-scatter", action="store_true")
    ap.add_argument("--bf16-accum", action="store_true", help="grad_accum_dtype bf16 (no compact fp32 buffer)")
    ap.add_argument("--no-muon", action="store_true", help="the matrices as vectors: every parameter AdamW")
    a = ap.parse_args()
    cuda = torch.cuda.is_available()
    deepspeed.init_distributed(dist_backend="nccl" if cuda else "gloo")
    zero = {"stage": 2, "reduce_scatter": not a.no_reduce_scatter, "contiguous_gradients": True,
            "overlap_comm": False}
    if a.offload:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": False}
    cfg = {"train_micro_batch_size_per_gpu": 32, "steps_per_print": 1 << 30, "gradient_clipping": 0.0,
           "bf16": {"enabled": True}, "zero_optimization": zero,
           "optimizer": {"type": "Muon", "params": {"lr": LR, "adam_lr": LR, "weight_decay": 0.0,
                                                   "torch_adam": True}}}   # torch's AdamW: no JIT-built kernel
    if not a.bf16_accum:
        cfg["data_types"] = {"grad_accum_dtype": "fp32"}
        cfg["communication_data_type"] = "fp32"
    model = Model(muon=not a.no_muon)
    try:
        engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    except ValueError as e:   # 0.19.6 refuses Muon with reduce_scatter and optimizer offload
        print(f"deepspeed {deepspeed.__version__} refuses this config: {e}")
        return 2
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 16, generator=g), torch.randn(32, 8, generator=g)   # the same batch on every rank
    ref = Model(muon=True)
    ref.w.data.copy_(engine.module.w.detach().float().cpu().view(8, 16))
    ref.v.data.copy_(engine.module.v.detach().float().cpu().view(8, 16))
    ref.scale.data.copy_(engine.module.scale.detach().float().cpu())
    ref(x.bfloat16(), y.bfloat16()).backward()
    before = engine.module.scale.detach().float().cpu().clone()
    loss = engine(x.to(engine.device, torch.bfloat16), y.to(engine.device, torch.bfloat16))
    try:
        engine.backward(loss)
        engine.step()
    except RuntimeError as e:   # 0.19.6: the momentum/gradient dtype error of #7746 (fixed by #8433) comes first
        print(f"deepspeed {deepspeed.__version__}: the step raises before this defect can be judged: {e}")
        return 2
    moved = engine.module.scale.detach().float().cpu() - before
    expected = -LR * torch.sign(ref.scale.grad)   # AdamW's first step (no weight decay): lr * sign(g)
    still = (moved.abs() < LR / 100).nonzero().flatten().tolist()
    wrong = ((moved - expected).abs() > LR / 4).sum().item()
    if engine.global_rank == 0:
        print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, ZeRO-2 bf16, grad_accum_dtype "
              f"{'bf16' if a.bf16_accum else 'fp32'}, reduce_scatter {not a.no_reduce_scatter}, offload {a.offload}, "
              f"Muon matrices {not a.no_muon}, world {engine.world_size}")
        print(f"AdamW vector of 16 after step 0: {len(still)} elements did not move (indices {still}), "
              f"{wrong} off lr*sign(g) by more than lr/4; |update| max {moved.abs().max().item():.4g} (expected {LR})")
        print("DEFECT PRESENT" if wrong else "no defect")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
