"""DeepSpeed Muon + gradient_clipping under ZeRO: Muon's momentum is built from the unclipped
gradient, and the clip factor is computed over the Muon updates (the flat partition already holds
NS outputs when `unscale_and_clip_grads` runs), not over the gradients.

Standalone: torch + deepspeed only; one GPU, or the CPU accelerator (DS_ACCELERATOR=cpu).
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 clip_muon_repro.py [--stage 1|2|3]
Exit status 1 when the defect shows, 0 when it does not.
"""
import argparse
import os

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
import torch  # noqa: E402
import deepspeed  # noqa: E402

MAX_NORM, BETA = 0.05, 0.95


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w = torch.nn.Parameter(torch.randn(32, 64, generator=g) / 8)      # Muon
        self.scale = torch.nn.Parameter(torch.ones(32))                        # AdamW

    def forward(self, x, y):
        return (((x @ self.w.t()) * self.scale - y) ** 2).mean()


def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(64, 64, generator=g), torch.randn(64, 32, generator=g)


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", type=int, default=2)
    stage = ap.parse_args().stage
    deepspeed.init_distributed(dist_backend="nccl" if torch.cuda.is_available() else "gloo")
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, ZeRO-{stage}, fp32, gradient_clipping {MAX_NORM}")
    ref = Model()
    x, y = batch()
    ref(x, y).backward()
    norm = torch.sqrt(ref.w.grad.norm() ** 2 + ref.scale.grad.norm() ** 2).item()
    clip = min(1.0, MAX_NORM / (norm + 1e-6))
    expected = (1 - BETA) * clip * ref.w.grad
    cfg = {"train_micro_batch_size_per_gpu": 64, "steps_per_print": 1 << 30, "gradient_clipping": MAX_NORM,
           "zero_optimization": {"stage": stage, "reduce_scatter": False, "stage3_param_persistence_threshold": 0},
           "optimizer": {"type": "Muon", "params": {"lr": 0.02, "momentum": BETA,
                                                   "torch_adam": True}}}   # the AdamW group without a JIT-built kernel
    model = Model()
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    loss = engine(x.to(engine.device), y.to(engine.device))
    engine.backward(loss)
    engine.step()
    observed = momentum_of(engine, engine.module.w).detach().float().cpu()
    ratio = (observed.norm() / expected.norm()).item()
    print(f"global gradient norm {norm:.4g} > max_norm {MAX_NORM}: clip factor {clip:.4g}")
    print(f"momentum after step 0: ||observed|| / ||(1-beta)*clip*g|| = {ratio:.4g} "
          f"(expected 1; 1/clip = {1 / clip:.4g} means the momentum took the unclipped gradient)")
    defect = abs(ratio - 1) > 0.01
    print("DEFECT PRESENT" if defect else "no defect")
    return 1 if defect else 0


if __name__ == "__main__":
    raise SystemExit(main())
