"""DeepSpeed ZeRO fp16: on a step where the dynamic loss scale grows, the step's gradients are
unscaled by the new (doubled) scale. `step()` calls `_update_scale(overflow)` before
`unscale_and_clip_grads`, which divides by `self.loss_scale` (already raised); `prev_scale` is
saved but used only for the norm. Optimizer-independent: shown here with plain SGD. With clipping
that binds on the growth step the wrong scale cancels (clip·S_new); `--clip` shows both cases.
Stage 0 (fp16/fused_optimizer.py, fp16/unfused_optimizer.py) has the same order: `--stage 0`.

Standalone: torch + deepspeed only, one GPU.
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 scale_growth_unscale_repro.py [--stage 0|1|2|3] [--clip C]
Exit status 1 when the defect shows, 0 when it does not.
"""
import argparse
import os

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
import torch  # noqa: E402
import deepspeed  # noqa: E402

STEPS, LR = 6, 0.1


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w = torch.nn.Parameter(torch.randn(32, 64, generator=g) / 8)

    def forward(self, x, y):
        return ((x @ self.w.t() - y) ** 2).mean()


def batches():
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(64, 64, generator=g), torch.randn(64, 32, generator=g)) for _ in range(STEPS)]


def scale_of(engine):
    value = getattr(engine.optimizer, "cur_scale", None)
    return float(value if value is not None else engine.optimizer.loss_scale)


def weight(engine, stage):
    """The fp32 master copy of w, which the optimizer steps (the fp16 param is its rounding)."""
    from deepspeed.utils import safe_get_full_fp32_param
    if stage > 0:
        return safe_get_full_fp32_param(engine.module.w).detach().float().clone()
    o = engine.optimizer   # stage 0: FP16_Optimizer keeps one flat fp32 buffer per group, FP16_UnfusedOptimizer one per param
    w = o.fp32_groups_flat[0] if hasattr(o, "fp32_groups_flat") else o.fp32_groups[0][0]
    return w.detach().float().clone().view(-1)


def train(stage, dynamic, clip):
    fp16 = {"enabled": True, "initial_scale_power": 8, "loss_scale_window": 2, "hysteresis": 2,
            "loss_scale": 0 if dynamic else 256.0}
    cfg = {"train_micro_batch_size_per_gpu": 64, "steps_per_print": 1 << 30, "fp16": fp16,
           "gradient_clipping": clip,   # 0: off (DeepSpeed's default is 1.0); the only difference is the scale
           "zero_allow_untested_optimizer": True,   # plain SGD keeps the optimizer out of the picture
           "zero_optimization": {"stage": stage, "stage3_param_persistence_threshold": 0}}
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    engine, *_ = deepspeed.initialize(model=model, optimizer=opt, config=cfg)
    steps, before = [], weight(engine, stage)
    for x, y in batches():
        scale = scale_of(engine)
        loss = engine(x.cuda().half(), y.cuda().half())
        engine.backward(loss)
        engine.step()
        after = weight(engine, stage)
        steps.append((scale, scale_of(engine), (after - before).norm().item()))
        before = after
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", type=int, default=2, choices=[0, 1, 2, 3])
    ap.add_argument("--clip", type=float, default=0.0,
                    help="gradient_clipping; a binding clip (e.g. 0.1 here) cancels the wrong scale (clip·S_new)")
    args = ap.parse_args()
    stage, clip = args.stage, args.clip
    deepspeed.init_distributed()
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, ZeRO-{stage}, fp16, torch.optim.SGD lr {LR}, gradient_clipping {clip}")
    static, dynamic = train(stage, False, clip), train(stage, True, clip)
    print("step  scale used  scale after  ||dW|| static  ||dW|| dynamic  ratio")
    worst = 0.0
    for t, ((_, _, ds), (s, s_after, dd)) in enumerate(zip(static, dynamic)):
        ratio = dd / ds
        worst = max(worst, abs(ratio - 1))
        print(f"{t:4d}  {s:10.0f}  {s_after:11.0f}  {ds:13.6g}  {dd:14.6g}  {ratio:.4f}" +
              ("   <- scale grew after this step's backward" if s_after > s else ""))
    print("expected: ratio 1.0000 on every step (a power-of-two loss scale divides out exactly)")
    defect = worst > 1e-3
    print("DEFECT PRESENT" if defect else "no defect")
    return 1 if defect else 0


if __name__ == "__main__":
    raise SystemExit(main())
