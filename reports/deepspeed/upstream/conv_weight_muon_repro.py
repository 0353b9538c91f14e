"""DeepSpeed Muon on a 4-D (conv) weight: muon_update raises at stage 0 and under ZeRO-1/2/3 in 0.19.8.

`muon_update` views a 4-D update as a matrix (`update.view(len(update), -1)`) for Newton-Schulz and
then returns `torch.where(grad_is_finite, update, grad)`: the 2-D update against the 4-D gradient,
which cannot broadcast. Standalone: torch + deepspeed only; one process (GPU, or CPU with
DS_ACCELERATOR=cpu).
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 conv_weight_muon_repro.py [--stage 0|1|2|3] [--kernel 1]
With --kernel 1 the conv weight is 6x4x1x1 and a 5x6 Muon matrix follows it: the broadcast then
succeeds (into 6x4x6x4, 576 elements), ZeRO-1/2 advance the momentum offset by those 576 and raise
IndexError staging the next parameter's momentum (Muon's group is sorted by shape, descending, so
the 5x6 matrix comes after the 6x4x1x1 weight).
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
    def __init__(self, kernel):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.conv = torch.nn.Parameter(torch.randn(6, 4, kernel, kernel, generator=g) / 6)   # out, in, kh, kw
        # a 1x1 kernel broadcasts instead of raising; the Muon matrix after it is what then fails
        self.proj = torch.nn.Parameter(torch.randn(5, 6, generator=g) / 6) if kernel == 1 else None

    def forward(self, x):
        y = torch.nn.functional.conv2d(x, self.conv)
        if self.proj is not None:
            y = torch.einsum("oc,bchw->bohw", self.proj, y)
        return y.square().mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", type=int, default=2, choices=[0, 1, 2, 3])
    ap.add_argument("--kernel", type=int, default=3, choices=[1, 3])
    args = ap.parse_args()
    stage, kernel = args.stage, args.kernel
    cuda = torch.cuda.is_available()
    deepspeed.init_distributed(dist_backend="nccl" if cuda else "gloo")
    cfg = {"train_micro_batch_size_per_gpu": 2, "steps_per_print": 1 << 30, "gradient_clipping": 0.0,
           "zero_optimization": {"stage": stage, "reduce_scatter": False, "stage3_param_persistence_threshold": 0},
           "optimizer": {"type": "Muon", "params": {"lr": 0.02, "momentum": 0.95}}}
    model = Model(kernel)
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, ZeRO-{stage}, fp32, one 6x4x{kernel}x{kernel} conv weight"
          + (" and a 5x6 matrix" if kernel == 1 else ""))
    x = torch.randn(2, 4, 8, 8, generator=torch.Generator().manual_seed(1)).to(engine.device)
    try:
        loss = engine(x)
        engine.backward(loss)
        engine.step()
    except (RuntimeError, IndexError) as e:
        print(f"DeepSpeed raised {type(e).__name__}: {e}")
        print(f"expected: one Muon step on the conv weight viewed as a 6x{4 * kernel * kernel} matrix")
        print("DEFECT PRESENT")
        return 1
    print("one step ran: no defect")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
