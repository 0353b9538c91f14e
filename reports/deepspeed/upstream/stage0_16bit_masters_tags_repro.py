"""DeepSpeed stage 0 with bf16 (or fp16) params: the optimizer steps fp32 copies that carry none of
the Muon tags DeepSpeed set on the model's params, so per-head Muon cannot reach them.

`FP16_UnfusedOptimizer.__init__` (deepspeed/runtime/fp16/unfused_optimizer.py) builds its masters as
`p.clone().float().detach()` and hands them to MuonWithAuxAdam as its param groups. A clone keeps
no Python attributes: `muon_num_heads` (per-head Muon) and `is_expert_group` stay on the model's
bf16 params. MuonWithAuxAdam.step runs muon_update on the masters, so a fix that forwards
`getattr(p, "muon_num_heads", None)` there (PR #8612) reads None and orthogonalises every per-head
projection whole. With fp32 params there is no wrapper and the tag is on the param stepped.

Standalone: torch + deepspeed only; one process (GPU, or CPU with DS_ACCELERATOR=cpu).
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 stage0_16bit_masters_tags_repro.py [--dtype bf16|fp16|fp32]
Exit status 1 while the params the optimizer steps lack a tag the model's params carry, 0 otherwise.
"""
import argparse
import os
import types

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29549")):
    os.environ.setdefault(key, value)
import torch  # noqa: E402
import deepspeed  # noqa: E402

HEADS, HEAD_DIM, HIDDEN = 4, 2, 16


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = torch.nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.norm = torch.nn.Parameter(torch.ones(HEADS * HEAD_DIM))

    def forward(self, x):
        return ((self.q_proj(x) * self.norm) ** 2).mean()


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn = Attention()
        # where DeepSpeed's per-head tagging reads the head counts from
        self.config = types.SimpleNamespace(num_attention_heads=HEADS, num_key_value_heads=HEADS,
                                            head_dim=HEAD_DIM, hidden_size=HIDDEN)

    def forward(self, x):
        return self.self_attn(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    args = ap.parse_args()
    deepspeed.init_distributed()
    cfg = {"train_micro_batch_size_per_gpu": 2, "steps_per_print": 1 << 30, "gradient_clipping": 0.0,
           "zero_optimization": {"stage": 0},
           "optimizer": {"type": "Muon", "params": {"lr": 0.02, "momentum": 0.95, "per_head_muon": True}}}
    if args.dtype != "fp32":
        cfg[args.dtype] = {"enabled": True}
    model = Model()
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    model_param = engine.module.self_attn.q_proj.weight
    stepped = [p for g in engine.optimizer.param_groups for p in g["params"] if p.dim() == 2]
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, stage 0, {args.dtype}, per_head_muon; "
          f"wrapper {type(engine.optimizer).__name__}")
    print(f"model's q_proj: muon_num_heads = {getattr(model_param, 'muon_num_heads', None)}, "
          f"use_muon = {getattr(model_param, 'use_muon', None)}")
    print(f"matrix the optimizer steps: muon_num_heads = {getattr(stepped[0], 'muon_num_heads', None)}, "
          f"use_muon = {getattr(stepped[0], 'use_muon', None)} (same object: {stepped[0] is model_param})")
    lost = [t for t in ("muon_num_heads", "use_muon") if hasattr(model_param, t) and not hasattr(stepped[0], t)]
    print(f"DEFECT PRESENT: tags lost on the stepped copy: {lost}" if lost else "no defect")
    return 1 if lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
