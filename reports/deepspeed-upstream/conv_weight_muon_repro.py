"""DeepSpeed Muon on a 4-D (conv) weight: muon_update raises at stage 0 and under ZeRO-1/2/3 in 0.19.8.

`muon_update` views a 4-D update as a matrix (`update.view(len(update), -1)`) for Newton-Schulz and
then returns `torch.where(grad_is_finite, update, grad)`: the 2-D update against the 4-D gradient,
which cannot broadcast. Standalone: torch + deepspeed only; one process (GPU, or CPU with
DS_ACCELERATOR=cpu).
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 conv_weight_muon_repro.py [--stage 0|1|2|3]
Exit status 1 while the defect shows (DeepSpeed raises), 0 once one step runs.
"""
import argparse
import os

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29547")):
    os.environ.setdefault(key, value)
import torch  # noqa: E402
import deepspeed  # noqa: E402


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.conv = torch.nn.Parameter(torch.randn(6, 4, 3, 3, generator=g) / 6)   # out, in, kh, kw

    def forward(self, x):
        return torch.nn.functional.conv2d(x, self.conv).square().mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", type=int, default=2, choices=[0, 1, 2, 3])
    stage = ap.parse_args().stage
    cuda = torch.cuda.is_available()
    deepspeed.init_distributed(dist_backend="nccl" if cuda else "gloo")
    cfg = {"train_micro_batch_size_per_gpu": 2, "steps_per_print": 1 << 30, "gradient_clipping": 0.0,
           "zero_optimization": {"stage": stage, "reduce_scatter": False, "stage3_param_persistence_threshold": 0},
           "optimizer": {"type": "Muon", "params": {"lr": 0.02, "momentum": 0.95}}}
    model = Model()
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, ZeRO-{stage}, fp32, one 6x4x3x3 conv weight")
    x = torch.randn(2, 4, 8, 8, generator=torch.Generator().manual_seed(1)).to(engine.device)
    try:
        loss = engine(x)
        engine.backward(loss)
        engine.step()
    except RuntimeError as e:
        print(f"DeepSpeed raised RuntimeError: {e}")
        print("expected: one Muon step on the conv weight viewed as a 6x36 matrix")
        print("DEFECT PRESENT")
        return 1
    print("one step ran: no defect")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
