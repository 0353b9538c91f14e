"""DeepSpeed per-head Muon is silently off under ZeRO-1/2 when `parameter_alignment` pads the flat
partition: `_get_flat_partition` (the padded path) calls `muon_update` without `num_heads`, while
`_get_flat_partition_unpadded` passes it.

Standalone: torch + deepspeed only, one GPU.
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 per_head_alignment_repro.py
Exit status 1 when the defect shows, 0 when it does not.
"""
import os
import types

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")   # also keeps the NS call visible to the wrapper below
import torch  # noqa: E402
import deepspeed  # noqa: E402
from deepspeed.runtime.zero.muon import original_muon  # noqa: E402

HEADS, KV_HEADS, HEAD_DIM, HIDDEN, STEPS = 4, 1, 3, 9, 3


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        lin = lambda rows, cols: torch.nn.Linear(cols, rows, bias=False)  # noqa: E731
        self.q_proj, self.k_proj = lin(HEADS * HEAD_DIM, HIDDEN), lin(KV_HEADS * HEAD_DIM, HIDDEN)
        self.v_proj, self.o_proj = lin(KV_HEADS * HEAD_DIM, HIDDEN), lin(HIDDEN, HEADS * HEAD_DIM)
        with torch.no_grad():
            for m in (self.q_proj, self.k_proj, self.v_proj, self.o_proj):
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) / 3)

    def forward(self, x):
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        return (self.o_proj(q * k.repeat(1, HEADS) + v.repeat(1, HEADS)) ** 2).mean()


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn = Attention()
        # where DeepSpeed's per-head tagging reads the head counts from
        self.config = types.SimpleNamespace(num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
                                            head_dim=HEAD_DIM, hidden_size=HIDDEN)

    def forward(self, x):
        return self.self_attn(x)


def train(alignment):
    shapes = []
    originals = {n: getattr(original_muon, n) for n in ("zeropower_via_newtonschulz5", "zeropower_via_gram_newtonschulz")}

    def wrap(fn):
        def counted(G, *a, **k):
            shapes.append(tuple(G.shape))
            return fn(G, *a, **k)
        return counted

    for n, fn in originals.items():
        setattr(original_muon, n, wrap(fn))
    cfg = {"train_micro_batch_size_per_gpu": 16, "steps_per_print": 1 << 30, "gradient_clipping": 0.0,
           "zero_optimization": {"stage": 2, "reduce_scatter": False, "parameter_alignment": alignment},
           "optimizer": {"type": "Muon", "params": {"lr": 0.02, "momentum": 0.95, "per_head_muon": True}}}
    model = Model()
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    g = torch.Generator().manual_seed(1)
    for _ in range(STEPS):
        loss = engine(torch.randn(16, HIDDEN, generator=g).cuda())
        engine.backward(loss)
        engine.step()
    from deepspeed.utils import safe_get_full_fp32_param
    q = safe_get_full_fp32_param(engine.module.self_attn.q_proj.weight).detach().float().clone()
    heads = getattr(engine.module.self_attn.q_proj.weight, "muon_num_heads", None)
    for n, fn in originals.items():
        setattr(original_muon, n, fn)
    return q, sorted(set(shapes)), heads


def main():
    deepspeed.init_distributed()
    print(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, ZeRO-2, fp32, per_head_muon")
    q_off, shapes_off, heads = train(alignment=False)
    q_on, shapes_on, _ = train(alignment=True)
    print(f"q_proj tagged muon_num_heads = {heads}")
    print(f"parameter_alignment false: NS input shapes {shapes_off}")
    print(f"parameter_alignment true:  NS input shapes {shapes_on}")
    d = ((q_on - q_off).norm() / q_off.norm()).item()
    print(f"q_proj after {STEPS} steps: ||W_aligned - W_unaligned|| / ||W_unaligned|| = {d:.3e} "
          f"(expected ~1e-7: alignment only pads the flat buffer)")
    per_head_seen = any(len(s) == 3 for s in shapes_on)
    defect = not per_head_seen or d > 1e-4
    print("DEFECT PRESENT" if defect else "no defect")
    return 1 if defect else 0


if __name__ == "__main__":
    raise SystemExit(main())
