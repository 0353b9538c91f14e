"""DeepSpeed ZeRO-3 + bf16: a step skipped for a non-finite gradient still advances Muon's momentum.

ZeRO-3's step() checks the raw gradients for overflow only when the params are fp16
(`_overflow_check_and_loss_scale_update`, `if self.dtype == torch.float16`); with bf16 it runs
Muon on the accumulated gradients first (`_apply_muon_to_accumulated_grads`, which writes the
momentum into the optimizer state) and only then finds the overflow in the gradient norm and skips
the step. `muon_update` keeps the momentum of a parameter whose own gradient is non-finite, so
every other Muon matrix absorbs the discarded gradient. ZeRO-1/2 stage the momentum and commit it
only on an applied step, so they are not affected.

The check: run A overflows at step 0 (an inf in the bias' gradient, so the step is skipped) and
then takes step 1; run B takes only step 1 from the same weights with the same data. A skipped
step changes nothing, so A's matrix after step 1 must equal B's. Standalone: torch + deepspeed
only; one process (GPU, or CPU with DS_ACCELERATOR=cpu).
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 zero3_bf16_skip_muon_momentum_repro.py [--stage 1|2|3]
Exit status 1 while the defect shows (A differs from B), 0 once they agree.
"""
import argparse
import os

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29549")):
    os.environ.setdefault(key, value)
import torch  # noqa: E402
import deepspeed  # noqa: E402


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.proj = torch.nn.Parameter(torch.randn(8, 8, generator=g) / 8)   # Muon (2-D)
        self.bias = torch.nn.Parameter(torch.zeros(8))                         # AdamW (1-D)

    def forward(self, x):
        return (x @ self.proj.t() + self.bias).float().square().mean()


def train(stage, overflow_first):
    cfg = {"train_micro_batch_size_per_gpu": 4, "steps_per_print": 1 << 30, "gradient_clipping": 0.0,
           "bf16": {"enabled": True},
           "zero_optimization": {"stage": stage, "reduce_scatter": False, "stage3_param_persistence_threshold": 0},
           "optimizer": {"type": "Muon", "params": {"lr": 0.02, "momentum": 0.95}}}
    model = Model()
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1)).to(engine.device, torch.bfloat16)
    inject = {"on": overflow_first}

    def poison(grad):
        if not inject["on"]:
            return grad
        grad = grad.clone()
        grad[0] = float("inf")
        return grad

    engine.module.bias.register_hook(poison)
    if overflow_first:
        engine.backward(engine(x))
        engine.step()
        inject["on"] = False
        skipped = engine.skipped_steps
    else:
        skipped = 0
    engine.backward(engine(x))
    engine.step()
    full = deepspeed.utils.safe_get_full_fp32_param(engine.module.proj)
    return full.detach().float().cpu().clone(), skipped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", type=int, default=3, choices=[1, 2, 3])
    stage = ap.parse_args().stage
    deepspeed.init_distributed(dist_backend="nccl" if torch.cuda.is_available() else "gloo")
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, ZeRO-{stage}, bf16, Muon 8x8 + AdamW bias")
    a, skipped = train(stage, overflow_first=True)
    b, _ = train(stage, overflow_first=False)
    diff = float((a - b).norm() / b.norm())
    print(f"steps skipped in run A: {skipped}")
    print(f"relative difference of the Muon matrix after step 1, A (skipped step 0) vs B (no step 0): {diff:.3g}")
    if skipped != 1:
        print("run A did not skip its overflowed step: not the defect this script shows")
        return 2
    if diff > 1e-6:
        print("expected: 0 (a skipped step leaves the state alone); DEFECT PRESENT")
        return 1
    print("no defect")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
