"""A muoncheck scenario file, read with the defaults of docs/scenario-format.md.

Only what an adapter needs: the ordered parameter list (the llama preset expanded exactly
as core/llama_preset.cpp does), the engine split, the optimizer and loss-scaler settings and
the overflow injections. The C++ loader stays the one validator; this reader trusts files
that `muoncheck` already accepts and keeps the raw JSON so a trace can embed it.
"""
import json
import math

_ADAM = {"lr": 3e-4, "betas": [0.9, 0.95], "eps": 1e-10}
_SCALER = {"type": "none", "initial_scale_power": 16, "scale_window": 1000, "hysteresis": 2, "min_scale": 1.0}


def expand_llama(layers=2, hidden=64, intermediate=176, heads=4, kv_heads=2, vocab=128, tie_embeddings=False):
    hd = hidden // heads
    out = [("model.embed_tokens.weight", [vocab, hidden])]
    for i in range(layers):
        pre = f"model.layers.{i}."
        out += [(pre + "self_attn.q_proj.weight", [heads * hd, hidden]),
                (pre + "self_attn.k_proj.weight", [kv_heads * hd, hidden]),
                (pre + "self_attn.v_proj.weight", [kv_heads * hd, hidden]),
                (pre + "self_attn.o_proj.weight", [hidden, hidden]),
                (pre + "mlp.gate_proj.weight", [intermediate, hidden]),
                (pre + "mlp.up_proj.weight", [intermediate, hidden]),
                (pre + "mlp.down_proj.weight", [hidden, intermediate]),
                (pre + "input_layernorm.weight", [hidden]),
                (pre + "post_attention_layernorm.weight", [hidden])]
    out.append(("model.norm.weight", [hidden]))
    if not tie_embeddings:
        out.append(("lm_head.weight", [vocab, hidden]))
    return out


class Param:
    def __init__(self, index, name, shape, num_heads=None):
        self.index, self.name, self.shape, self.num_heads = index, name, list(shape), num_heads

    @property
    def rows(self):  # the matrix view (shape[0], prod(rest)); rank 1 is (1, n)
        return 1 if len(self.shape) == 1 else self.shape[0]

    @property
    def cols(self):
        return self.shape[0] if len(self.shape) == 1 else math.prod(self.shape[1:])


class Scenario:
    def __init__(self, raw, source):
        self.raw, self.source = raw, source
        self.name = raw["name"]
        self.seed = int(raw.get("seed", 0))
        self.steps = int(raw.get("steps", 3))
        model = raw["model"]
        self.preset = None
        if "preset" in model:
            keys = ("layers", "hidden", "intermediate", "heads", "kv_heads", "vocab", "tie_embeddings")
            self.preset = {k: model[k] for k in keys if k in model}
            self.preset = {**dict(layers=2, hidden=64, intermediate=176, heads=4, kv_heads=2, vocab=128,
                                  tie_embeddings=False), **self.preset}
            specs = [(n, s, None) for n, s in expand_llama(**self.preset)]
        else:
            specs = [(p["name"], p["shape"], p.get("num_heads")) for p in model["params"]]
        self.params = [Param(i, n, s, h) for i, (n, s, h) in enumerate(specs)]
        e = raw.get("engine", {})
        self.stage, self.dp = int(e.get("stage", 0)), int(e.get("dp", 1))
        self.gas, self.micro_batch = int(e.get("gas", 1)), int(e.get("micro_batch", 1))
        self.zero_init = bool(e.get("zero_init", False))
        self.reduce_bucket_size = int(e.get("reduce_bucket_size", 500000000))
        self.allgather_bucket_size = int(e.get("allgather_bucket_size", 500000000))
        self.contiguous_gradients = bool(e.get("contiguous_gradients", True))
        self.param_dtype = e.get("param_dtype", "fp32")
        self.grad_accum_dtype = e.get("grad_accum_dtype", self.param_dtype)
        self.comm_dtype = e.get("comm_dtype", self.param_dtype)
        self.offload_optimizer = e.get("offload_optimizer", "none")
        self.compile = bool(e.get("compile", False))
        o = raw.get("optimizer", {})
        self.optimizer = o
        self.lr, self.momentum = float(o.get("lr", 0.02)), float(o.get("momentum", 0.95))
        self.nesterov = bool(o.get("nesterov", True))
        self.momentum_form = o.get("momentum_form", "ema")
        self.ns_method = o.get("ns_method", "gram")
        self.ns_steps = int(o.get("ns_steps", 5))
        self.ns_coefficients = list(o.get("ns_coefficients", [3.4445, -4.7750, 2.0315]))
        self.scale_rule = o.get("scale_rule", "deepspeed")
        self.weight_decay = float(o.get("weight_decay", 0.0))
        self.per_head = bool(o.get("per_head", False))
        self.adam = {**_ADAM, **o.get("adam", {})}
        self.groups = list(o.get("groups", []))
        self.clip = {"max_norm": 0.0, "mode": "raw_grad", **o.get("clip", {})}
        self.loss_scaler = {**_SCALER, **raw.get("loss_scaler", {})}
        self.overflow = list(raw.get("overflow", []))
        self.lr_schedule = {"shape": "constant", **o.get("lr_schedule", {})}
        self.checkpoint = raw.get("checkpoint")   # {save_after_step, resume?: {dp?, stage?}} or None

    def group_of(self, name):
        """The first group whose `match` is a substring of the name (None: no group)."""
        return next((g for g in self.groups if g["match"] in name), None)

    def lr_factor(self, name, t):
        """f(t) of the param's schedule (its group's, else the optimizer's) times its lr_scale."""
        g = self.group_of(name) or {}
        return float(g.get("lr_scale", 1.0)) * lr_factor({"shape": "constant", **g.get("lr_schedule", self.lr_schedule)}, t)

    def resumed(self):
        """The scenario as it continues after its checkpoint: resume.dp (gas rescaled so the global
        batch stays) and resume.stage applied; itself when there is no checkpoint."""
        resume = (self.checkpoint or {}).get("resume", {})
        out = Scenario(self.raw, self.source)
        dp = int(resume.get("dp", self.dp))
        out.gas, out.dp = self.dp * self.gas // dp, dp
        out.stage = int(resume.get("stage", self.stage))
        return out

    @property
    def global_batch(self):
        return self.dp * self.gas * self.micro_batch

    def global_sample(self, micro_step, rank, local):
        # j = (k·dp + r)·micro_batch + i  (SPEC §2)
        return (micro_step * self.dp + rank) * self.micro_batch + local


def lr_factor(schedule, t):
    """The schedule's factor at step t (docs/semantics.md, learning-rate schedules)."""
    shape = schedule["shape"]
    if shape == "constant":
        return 1.0
    warmup = int(schedule.get("warmup_steps", 0))
    if shape == "linear_warmup":
        return min(1.0, (t + 1) / warmup)
    if t < warmup:
        return (t + 1) / warmup
    total, floor = int(schedule["total_steps"]), float(schedule.get("min_ratio", 0.0))
    progress = min(1.0, (t - warmup) / (total - warmup))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def load(path):
    with open(path) as f:
        return Scenario(json.load(f), path)
