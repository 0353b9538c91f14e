"""DeepSpeed Muon + fp16: the momentum buffer holds loss-scaled gradients, so a change of the
dynamic loss scale changes the training trajectory.

Standalone: torch + deepspeed only, one GPU.
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 fp16_muon_momentum_repro.py [--stage 2|3]
Exit status 1 when the defect shows, 0 when it does not.
"""
import argparse
import os

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")   # only to make the run start fast
import torch  # noqa: E402
import deepspeed  # noqa: E402

STEPS, LR, BETA, SCALE_POWER = 12, 0.02, 0.95, 8


class TwoMatrices(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w1 = torch.nn.Parameter(torch.randn(32, 64, generator=g) / 8)
        self.w2 = torch.nn.Parameter(torch.randn(64, 32, generator=g) / 8)

    def forward(self, x, y):
        return ((x @ self.w1.t() @ self.w2.t() - y) ** 2).mean()


def batches():
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g)) for _ in range(STEPS)]


def config(stage, dynamic):
    fp16 = {"enabled": True, "initial_scale_power": SCALE_POWER, "hysteresis": 2, "loss_scale_window": 2,
            "loss_scale": 0 if dynamic else float(2 ** SCALE_POWER)}
    return {"train_micro_batch_size_per_gpu": 64, "gradient_accumulation_steps": 1, "steps_per_print": 1 << 30,
            "gradient_clipping": 0.0,   # off (DeepSpeed's default is 1.0): the runs differ only in the loss scale
            "fp16": fp16, "zero_optimization": {"stage": stage, "reduce_scatter": False,
                                                "stage3_param_persistence_threshold": 0},
            "optimizer": {"type": "Muon", "params": {"lr": LR, "momentum": BETA, "weight_decay": 0.0}}}


def momentum_of(engine, param):
    from deepspeed.utils import safe_get_full_optimizer_state
    if engine.zero_optimization_stage() == 3:
        return safe_get_full_optimizer_state(param, "momentum_buffer")
    opt = engine.optimizer
    for gi, group in enumerate(opt.params_in_partition):
        offset = 0
        for q in group:
            if q is param:
                flat = opt.optimizer.param_groups[gi]["params"][0]
                return opt.optimizer.state[flat]["momentum_buffer"].narrow(0, offset, q.numel()).view(q.shape)
            offset += q.numel()


def train(stage, dynamic):
    from deepspeed.utils import safe_get_full_fp32_param
    model = TwoMatrices()
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config(stage, dynamic))
    weights, scales, first_momentum = [], [], None
    for t, (x, y) in enumerate(batches()):
        scales.append(engine.optimizer.cur_scale)
        loss = engine(x.cuda().half(), y.cuda().half())
        engine.backward(loss)
        engine.step()
        if t == 0:
            first_momentum = momentum_of(engine, engine.module.w1).detach().float().clone()
        weights.append(safe_get_full_fp32_param(engine.module.w1).detach().float().clone())
    return weights, scales, first_momentum


def expected_first_momentum():
    """(1 - beta) * g at step 0, g the unscaled fp32 gradient of w1 on the first batch."""
    model = TwoMatrices()
    x, y = batches()[0]
    model(x, y).backward()
    return (1 - BETA) * model.w1.grad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", type=int, default=2)
    stage = ap.parse_args().stage
    deepspeed.init_distributed()
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, ZeRO-{stage}, fp16")
    w_static, s_static, m_static = train(stage, dynamic=False)
    w_dynamic, s_dynamic, _ = train(stage, dynamic=True)
    m_expected = expected_first_momentum().cuda()
    ratio = (m_static.norm() / m_expected.norm()).item()
    print(f"momentum after step 0: ||observed|| / ||(1-beta)*g|| = {ratio:.4g} (expected 1; loss scale {2 ** SCALE_POWER})")
    print("step  scale(static) scale(dynamic)  ||W_dyn - W_static|| / ||W_static||")
    worst = 0.0
    for t in range(STEPS):
        d = ((w_dynamic[t] - w_static[t]).norm() / w_static[t].norm()).item()
        worst = max(worst, d)
        print(f"{t:4d}  {s_static[t]:12.0f} {s_dynamic[t]:14.0f}  {d:.3e}")
    # A power-of-two scale is exact in fp16 (short of under/overflow), so the runs should agree to the bit.
    print(f"expected: the two runs agree (0, or ~1e-6 from gradients that underflow differently) because the "
          f"loss scale is divided out; observed worst {worst:.3e}")
    defect = abs(ratio - 1) > 0.01 or worst > 1e-4
    print("DEFECT PRESENT" if defect else "no defect")
    return 1 if defect else 0


if __name__ == "__main__":
    raise SystemExit(main())
