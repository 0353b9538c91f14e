"""DeepSpeed stage 0 with bf16 (or fp16) params: the first Adam step is too small, because the
16-bit wrapper takes a real optimizer step when it is built.

`FP16_UnfusedOptimizer.__init__` (deepspeed/runtime/fp16/unfused_optimizer.py) calls
`initialize_optimizer_states()`, which sets every gradient to zero and calls `self.optimizer.step()`.
The weights do not move (zero gradient, and no weight decay here), but every Adam state's `step`
counter goes from 0 to 1, so the first real update uses the bias correction of step 2:
lr * sqrt(1 - b2^2) / (1 - b1^2) * (1 - b1) / sqrt(1 - b2) instead of lr, i.e. 0.735 * lr for
betas (0.9, 0.95), and the shortfall fades over the next steps. ZeRO-1/2/3 no longer do this (their
state is initialised lazily at the first step). The wrapper is the one DeepSpeed puts around every
optimizer but FusedAdam at stage 0 with fp16 or bf16, so `--optimizer AdamW` (torch's AdamW, no Muon
at all) shows the same; under Muon it is the AdamW half (embeddings, norms, biases).

Standalone: torch + deepspeed only; one process (GPU, or CPU with DS_ACCELERATOR=cpu).
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 stage0_unfused_init_step_repro.py [--optimizer Muon|AdamW]
        [--weight-decay WD]
With --weight-decay the same construction step also applies the decoupled weight decay once
(AdamW decays a weight whose gradient is zero), before any data is seen.
Exit status 1 while the defect shows (weights moved at construction, or the first update is not
lr per element), 0 once neither is.
"""
import argparse
import os

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29548")):
    os.environ.setdefault(key, value)
import torch  # noqa: E402
import deepspeed  # noqa: E402

LR, BETAS, EPS = 3e-4, (0.9, 0.95), 1e-10


class Model(torch.nn.Module):
    """One vector (the AdamW half under Muon): loss = (w . x)^2."""

    def __init__(self):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.tensor([0.9375, -0.5, 0.25, 0.75]))

    def forward(self, x):
        return (self.bias * x).sum().square()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--optimizer", default="Muon", choices=["Muon", "AdamW"])
    ap.add_argument("--weight-decay", type=float, default=0.0)
    args = ap.parse_args()
    name, wd = args.optimizer, args.weight_decay
    cuda = torch.cuda.is_available()
    deepspeed.init_distributed(dist_backend="nccl" if cuda else "gloo")
    params = {"lr": LR, "betas": list(BETAS), "eps": EPS, "weight_decay": wd, "torch_adam": True}
    if name == "Muon":
        params.update(lr=0.02, adam_lr=LR, momentum=0.95)
    cfg = {"train_micro_batch_size_per_gpu": 1, "steps_per_print": 1 << 30, "gradient_clipping": 0.0,
           "bf16": {"enabled": True}, "zero_optimization": {"stage": 0},
           "optimizer": {"type": name, "params": params}}
    model = Model()
    initial = model.bias.detach().clone()
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    opt = engine.optimizer
    master = opt.fp32_groups[0][0]
    inner = opt.optimizer
    step_before = inner.state.get(master, {}).get("step")
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, stage 0, bf16, {name}; "
          f"wrapper {type(opt).__name__}")
    print(f"Adam step counter before any training step: {None if step_before is None else float(step_before)} "
          f"(expected: no state, or 0)")
    moved = (master.detach().cpu() - initial).abs().max().item()
    print(f"weights moved by the wrapper's construction: max |change| {moved:.3e} "
          f"(expected 0; weight decay {wd} applied once would be {LR * wd * initial.abs().max().item():.3e})")
    before = master.detach().clone()
    x = torch.tensor([1.0, 2.0, -1.0, 0.5], dtype=torch.bfloat16, device=engine.device)
    loss = engine(x)
    engine.backward(loss)
    engine.step()
    ratio = ((before - master.detach()).abs() / LR).cpu()   # with weight decay also +-wd*|w|: that step's own decay
    b1, b2 = BETAS
    off_by_one = (1 - b2 ** 2) ** 0.5 / (1 - b1 ** 2) * (1 - b1) / (1 - b2) ** 0.5
    print(f"first update per element / lr: {[round(float(r), 4) for r in ratio]}")
    print(f"expected 1.0 (Adam's first step moves each element by lr); a step counter one ahead gives {off_by_one:.4f}")
    if (ratio - 1).abs().max() > 1e-3 or moved > 0:
        print("DEFECT PRESENT")
        return 1
    print("no defect")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
