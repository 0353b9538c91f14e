"""DeepSpeed 0.19.8: minimal case deepspeed-0.19.8-s11-c1 found by `muoncheck sweep --impl deepspeed`.

shrunk from case 1 of `muoncheck sweep --impl deepspeed=0.19.8 --seed 11` (generated (focus general, overflow none))

Standalone: torch, numpy and deepspeed only. Trains the case with the DeepSpeed config
below and compares each step's fp32 master weights with the exact (float128) trajectory;
the band is the error eight valid rounding sequences make, times alpha, plus a floor.
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 2 deepspeed-0.19.8-s11-c1_repro.py
Exit status 1 while the defect shows, 0 once it is gone.
"""
import json
import os
import sys
import types

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29541")):   # torchrun sets these; plain python3 runs one process
    os.environ.setdefault(key, value)
import numpy as np  # noqa: E402
import torch  # noqa: E402

CASE = "deepspeed-0.19.8-s11-c1"
CONFIG = json.loads(r'''{"gradient_accumulation_steps":1,"gradient_clipping":0.0,"optimizer":{"params":{"adam_lr":0.0003,"betas":[0.9,0.95],"eps":1e-10,"lr":0.02,"momentum":0.95,"ns_method":"gram","torch_adam":true,"weight_decay":0.0},"type":"Muon"},"steps_per_print":1073741824,"train_batch_size":2,"train_micro_batch_size_per_gpu":1,"zero_optimization":{"allgather_bucket_size":500000000,"contiguous_gradients":true,"overlap_comm":false,"reduce_bucket_size":500000000,"reduce_scatter":false,"round_robin_gradients":true,"stage":1}}''')
HEAD_CONFIG = None
SEED, STEPS, GAS, MICRO_BATCH, DP = 0, 1, 1, 1, 2
STAGE, ZERO_INIT, PARAM_DTYPE = 1, False, "fp32"
EXPECT_ERROR = False
PARAM_SHAPES = [
    ("model.embed_tokens.weight", [2, 2]),
    ("model.layers.0.self_attn.q_proj.weight", [2, 2]),
    ("model.layers.0.self_attn.k_proj.weight", [2, 2]),
    ("model.layers.0.self_attn.v_proj.weight", [2, 2]),
    ("model.layers.0.self_attn.o_proj.weight", [2, 2]),
    ("model.layers.0.mlp.gate_proj.weight", [2, 2]),
    ("model.layers.0.mlp.up_proj.weight", [2, 2]),
    ("model.layers.0.mlp.down_proj.weight", [2, 2]),
    ("model.layers.0.input_layernorm.weight", [2]),
    ("model.layers.0.post_attention_layernorm.weight", [2]),
    ("model.norm.weight", [2]),
    ("lm_head.weight", [2, 2]),
]
INJECTIONS = [
]
# fp32 master weight after each step: the exact trajectory (muoncheck's float128 oracle)
EXPECTED = {
    "model.embed_tokens.weight": [[0.46845000000009479, 0.43720000000012482, -0.46845000000096754, -0.49970000000039544]],
    "model.layers.0.self_attn.q_proj.weight": [[0.2809341574346752, 0.23261780366039322, -0.4191638732564853, -0.054230468930153194]],
    "model.layers.0.self_attn.k_proj.weight": [[-0.45213372701245119, -0.3775197691026092, -0.030385496192127003, 0.2352688107631522]],
    "model.layers.0.self_attn.v_proj.weight": [[-0.41962430598620276, 0.39203277440680956, -0.17927195308759308, 0.32569981391452396]],
    "model.layers.0.self_attn.o_proj.weight": [[0.33713969900460167, -0.1690545558945955, 0.30014200650331668, -0.21188545326641345]],
    "model.layers.0.mlp.gate_proj.weight": [[0.020644515609049494, 0.45455614582427961, -0.45195369685280284, 0.33864029063783574]],
    "model.layers.0.mlp.up_proj.weight": [[0.085323805402085159, -0.14490999758908837, 0.23028050958806501, -0.42910942557585974]],
    "model.layers.0.mlp.down_proj.weight": [[0.10791551821929724, 0.29287505404234182, -0.13253717038020066, 0.30029530430375367]],
    "model.layers.0.input_layernorm.weight": [[1.1872000000000953, 1.0778250000001843]],
    "model.layers.0.post_attention_layernorm.weight": [[0.93720000000048231, 0.87470000000009174]],
    "model.norm.weight": [[0.79657500000010228, 1.0934500000007639]],
    "lm_head.weight": [[0.34404999999598757, 0.50029999999979413, 0.062200000014456469, 0.21845000000014447]],
}
# the relative error allowed per step (alpha x the worst of 8 valid rounding sequences + floor)
BAND = {
    "model.embed_tokens.weight": [6.1111181754664685e-07],
    "model.layers.0.self_attn.q_proj.weight": [0.00078073033419761326],
    "model.layers.0.self_attn.k_proj.weight": [0.0011382725372265964],
    "model.layers.0.self_attn.v_proj.weight": [0.0021285702557134298],
    "model.layers.0.self_attn.o_proj.weight": [0.00053063066640595725],
    "model.layers.0.mlp.gate_proj.weight": [0.0011593871927665499],
    "model.layers.0.mlp.up_proj.weight": [0.0010815730527262333],
    "model.layers.0.mlp.down_proj.weight": [0.0019927419381958467],
    "model.layers.0.input_layernorm.weight": [6.5246082620394868e-07],
    "model.layers.0.post_attention_layernorm.weight": [5.2018047722861221e-07],
    "model.norm.weight": [6.8500051264883598e-07],
    "lm_head.weight": [5.8213839319278305e-07],
}

# ---- the data generator (docs/semantics.md §1, verbatim)
"""The data generator of docs/semantics.md §1, vectorized in numpy, bit for bit the same as core/datagen.cpp.

mix / splitmix64 / h(w0..w5) on uint64 arrays (numpy wraps uint64 arithmetic mod 2^64),
v = ((h >> 40) mod 33 − 16) / 16. Every value is a dyadic rational, exact in fp16, bf16
and fp32. tests/trace/datagen_match.py checks this file against muoncheck's own dump.
"""
import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
INIT, INPUT, TARGET = 1, 2, 3


def _u64(x):
    return np.asarray(x, dtype=np.uint64)


def mix(z):
    z = _u64(z)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def splitmix64(x):
    with np.errstate(over="ignore"):
        return mix(_u64(x) + _GOLDEN)


def hash6(w0, w1, w2, w3, w4, w5):
    """x = 0; x = splitmix64(x ^ w) for each word; words broadcast against each other."""
    words = np.broadcast_arrays(*[_u64(w) for w in (w0, w1, w2, w3, w4, w5)])
    x = np.zeros(words[0].shape, dtype=np.uint64)
    for w in words:
        x = splitmix64(x ^ w)
    return x


def unit_value(h):
    return ((_u64(h) >> np.uint64(40)) % np.uint64(33)).astype(np.int64).astype(np.float64) / 16.0 - 1.0


def _init_exponent(cols):
    k = 0
    while (1 << (2 * k)) < cols:
        k += 1
    return k


def initial_weight(seed, param):
    """Param p's initial weight in its layer shape (float64, exact)."""
    n = int(np.prod(param.shape))
    v = unit_value(hash6(seed, INIT, param.index, np.arange(n, dtype=np.uint64), 0, 0))
    w = 1.0 + v / 4.0 if len(param.shape) < 2 else np.ldexp(v, -_init_exponent(param.cols))
    return w.reshape(param.shape)


def inputs(seed, param, step, samples):
    """x of each sample: (len(samples), cols)."""
    j = _u64(samples)[:, None]
    e = np.arange(param.cols, dtype=np.uint64)[None, :]
    return unit_value(hash6(seed, INPUT, param.index, step, j, e))


def targets(seed, param, step, samples):
    """y of each sample: (len(samples), rows), or (len(samples), n) for a vector."""
    m = param.cols if len(param.shape) == 1 else param.rows
    j = _u64(samples)[:, None]
    e = np.arange(m, dtype=np.uint64)[None, :]
    return unit_value(hash6(seed, TARGET, param.index, step, j, e))


class P:
    """A parameter as the data generator reads it: index, shape, matrix view (rows, cols)."""
    def __init__(self, index, name, shape):
        self.index, self.name, self.shape = index, name, tuple(shape)
        self.rows = 1 if len(shape) < 2 else shape[0]
        self.cols = shape[0] if len(shape) < 2 else int(np.prod(shape[1:]))


PARAMS = [P(i, name, shape) for i, (name, shape) in enumerate(PARAM_SHAPES)]


class Node(torch.nn.Module):
    """One module of a tree named like the case's params; each owns the loss terms of its params:
    1/(2m)·‖W x − y‖² for a matrix (W viewed as rows × cols), 1/(2n)·‖w ⊙ x − y‖² for a vector."""
    def __init__(self, tree):
        super().__init__()
        self.terms = []
        for name, child in tree["children"].items():
            self.add_module(name, Node(child))
        for local, p in tree["params"]:
            w = torch.from_numpy(initial_weight(SEED, p).astype(np.float32))
            self.register_parameter(local, torch.nn.Parameter(w))
            self.terms.append((local, p))

    def forward(self, batch):
        total = 0
        for local, p in self.terms:
            # fp32 arithmetic on the 16-bit model copy, so only the gradient rounds to it, once
            w = getattr(self, local).float()
            x, y = (t.float() for t in batch[p.index])
            if len(p.shape) == 1:
                term = ((w * x - y) ** 2).sum(-1) / (2 * p.cols)
            else:
                term = ((x @ w.reshape(p.rows, -1).t() - y) ** 2).sum(-1) / (2 * p.rows)
            total = total + term.mean()
        for child in self.children():
            total = total + child(batch)
        return total


def tree():
    root = {"children": {}, "params": []}
    for p in PARAMS:
        *path, local = p.name.split(".")
        node = root
        for part in path:
            node = node["children"].setdefault(part, {"children": {}, "params": []})
        node["params"].append((local, p))
    return root


def batch(step, micro_step, rank, device, dtype):
    samples = [(micro_step * DP + rank) * MICRO_BATCH + i for i in range(MICRO_BATCH)]
    return {p.index: (torch.from_numpy(inputs(SEED, p, step, samples)).to(device, dtype),
                      torch.from_numpy(targets(SEED, p, step, samples)).to(device, dtype)) for p in PARAMS}


def relative_error(x, exact):
    exact = np.asarray(exact, dtype=np.float64)
    d = np.linalg.norm(np.asarray(x, dtype=np.float64) - exact)
    return float("inf") if not np.isfinite(d) else float(d / max(np.linalg.norm(exact), 1e-30))


HEADER = "step  param                                     error vs float128   band      ratio"


def check_param(t, name, observed, say):
    """Prints step t's error of param `name`'s fp32 master weight (flat) against the float128
    trajectory, next to its band; returns error / band."""
    err = relative_error(observed, EXPECTED[name][t])
    band = BAND[name][t]
    say(f"{t:4d}  {name:40s}  {err:17.3e}  {band:9.3e}  {err / band:8.2f}" + ("   <- outside" if err > band else ""))
    return err / band


def verdict(worst, raised, who, say):
    """The script's exit status: 1 while the defect shows (a ratio above 1, or `who` raising in an
    ERROR case), else 0."""
    if raised is not None:
        say(f"{who} raised {type(raised).__name__}: {raised}")
        say("DEFECT PRESENT" if EXPECT_ERROR else "the run raised (not the defect this script shows)")
        return 1
    if EXPECT_ERROR:
        say(f"expected: {who} raises; it did not (no defect)")
        return 0
    say("expected: every ratio at most 1 (the error of 8 valid rounding sequences, x alpha, plus a floor)")
    say(f"worst ratio {worst:.3g}: " + ("DEFECT PRESENT" if worst > 1 else "no defect"))
    return 1 if worst > 1 else 0



def main():
    import deepspeed
    from deepspeed.utils import safe_get_full_fp32_param
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if torch.cuda.is_available() else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    deepspeed.init_distributed(dist_backend="nccl" if device.type == "cuda" else "gloo")
    rank = torch.distributed.get_rank()
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[PARAM_DTYPE]
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, {device.type}, dp {DP}; case {CASE}")
    clock = {"step": 0, "micro_step": 0}
    worst, raised = 0.0, None
    try:
        with deepspeed.zero.Init(config_dict_or_path=CONFIG, enabled=ZERO_INIT):
            model = Node(tree())
        if HEAD_CONFIG:
            model.config = types.SimpleNamespace(**HEAD_CONFIG)   # where DeepSpeed reads head counts
        engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=CONFIG)
        named = dict(engine.module.named_parameters())
        # stage 0 with 16-bit params: the wrapper (FP16_UnfusedOptimizer) steps fp32 copies of them
        opt = engine.optimizer
        masters = {id(lp): hp for lg, hg in zip(getattr(opt, "fp16_groups", None) or [], getattr(opt, "fp32_groups", None) or [])
                   for lp, hp in zip(lg, hg) if torch.is_tensor(hp) and hp.shape == lp.shape}
        for inj in INJECTIONS:
            if inj["rank"] != rank:
                continue
            def hook(grad, inj=inj):
                if (clock["step"], clock["micro_step"]) != (inj["step"], inj["micro_step"]):
                    return grad
                grad = grad.clone()
                grad.view(-1)[inj["index"]] = float(inj["value"])
                return grad
            named[inj["param"]].register_hook(hook)
        say(HEADER)
        for t in range(STEPS):
            clock["step"] = t
            for k in range(GAS):
                clock["micro_step"] = k
                loss = engine(batch(t, k, rank, device, dtype))
                engine.backward(loss)
                engine.step()
            for p in PARAMS:
                w = named[p.name]
                full = safe_get_full_fp32_param(w) if STAGE > 0 else masters.get(id(w), w)
                worst = max(worst, check_param(t, p.name, full.detach().float().cpu().reshape(-1).numpy(), say))
    except Exception as e:
        raised = e
    return verdict(worst, raised, "DeepSpeed", say)


if __name__ == "__main__":
    sys.exit(main())
