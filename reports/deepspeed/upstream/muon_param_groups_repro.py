"""DeepSpeed's Muon drops the param groups it is given: a group's own weight_decay (or lr) never
reaches the optimizer, the config's applies (0.19.6; fixed by PR #8440 in 0.19.8).

`_configure_basic_optimizer` (deepspeed/runtime/engine.py, Muon branch, 0.19.6 l. 2285-2317)
flattens `model_parameters` into one list and rebuilds two groups, `muon-params` and
`adam-params`, from the config alone. A model's usual "no decay" group is decayed at the config's
rate, on both halves, at every ZeRO stage.

The script passes one group holding a Linear's weight (Muon) and bias (AdamW) with weight_decay 0
against a config weight_decay of 0.1, and takes one step on a zero gradient: Muon's and Adam's
updates are then exactly 0, so any change of a weight is the weight decay alone. Expected: no
change; with the defect every element is multiplied by (1 - lr * 0.1).

Standalone: torch + deepspeed only; one process (GPU, or CPU with DS_ACCELERATOR=cpu).
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 muon_param_groups_repro.py [--stage 0|1|2|3]
Exit status 1 while the defect shows (a weight moved, or a group's weight_decay is not 0), 0 once not.
"""
import argparse
import os

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29549")):
    os.environ.setdefault(key, value)
import torch  # noqa: E402
import deepspeed  # noqa: E402
from deepspeed.utils import safe_get_full_fp32_param  # noqa: E402

MUON_LR, ADAM_LR, WD = 0.02, 3e-4, 0.1


class Model(torch.nn.Module):
    """One Linear: its weight is tagged for Muon, its bias for AdamW."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.proj = torch.nn.Linear(16, 8)

    def forward(self, x):
        return (self.proj(x) * 0.0).sum()   # a zero gradient: the step's only change is weight decay


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", type=int, default=1, choices=[0, 1, 2, 3])
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    deepspeed.init_distributed(dist_backend="nccl" if cuda else "gloo")
    cfg = {"train_micro_batch_size_per_gpu": 1, "steps_per_print": 1 << 30, "gradient_clipping": 0.0,
           # ZeRO-3 refuses Muon with reduce_scatter (its default)
           "zero_optimization": dict({"stage": args.stage}, **({"reduce_scatter": False} if args.stage == 3 else {})),
           "optimizer": {"type": "Muon", "params": {"lr": MUON_LR, "adam_lr": ADAM_LR, "momentum": 0.95,
                                                    "weight_decay": WD, "torch_adam": True}}}
    model = Model()
    groups = [{"params": list(model.parameters()), "weight_decay": 0.0}]   # the usual "no decay" group
    engine, *_ = deepspeed.initialize(model=model, model_parameters=groups, config=cfg)
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, stage {args.stage}, fp32, Muon; "
          f"one param group of weight_decay 0.0, config weight_decay {WD}")
    decays = []
    for g in engine.optimizer.param_groups:
        decays.append(float(g.get("weight_decay", 0.0)))
        print(f"  optimizer group {g.get('name')!r}: use_muon {g.get('use_muon')}, lr {g['lr']:.3g}, "
              f"weight_decay {g.get('weight_decay')}")
    named = list(engine.module.named_parameters())

    def fp32(p):   # the ZeRO getter; at stage 0 (no ZeRO optimizer) the parameter itself
        full = safe_get_full_fp32_param(p)
        return (p if full is None else full).detach().clone()

    before = {n: fp32(p) for n, p in named}
    loss = engine(torch.ones(1, 16, device=engine.device))
    engine.backward(loss)
    engine.step()
    moved = 0.0
    for n, p in named:
        after = fp32(p)
        lr = MUON_LR if getattr(p, "use_muon", False) else ADAM_LR
        ratio = (after / before[n]).flatten()
        ratio = ratio[before[n].flatten() != 0]
        moved = max(moved, (after - before[n]).abs().max().item())
        print(f"  {n} ({'Muon' if getattr(p, 'use_muon', False) else 'AdamW'}): after / before "
              f"{ratio.min().item():.6f}..{ratio.max().item():.6f}; expected 1 (group weight_decay 0), "
              f"config's decay would give 1 - lr*{WD} = {1 - lr * WD:.6f}")
    if moved > 0 or any(d != 0.0 for d in decays):
        print("DEFECT PRESENT")
        return 1
    print("no defect")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
