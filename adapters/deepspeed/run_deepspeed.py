"""Runs muoncheck scenarios through DeepSpeed's own Muon under ZeRO and writes one trace each.

    python3 adapters/deepspeed/run_deepspeed.py --out DIR SCENARIO.json...

The model is a tree of nn.Modules whose parameters carry the scenario's names and layer shapes
(`model.layers.0.self_attn.q_proj.weight` is the `weight` of module model.layers.0.self_attn.q_proj),
so DeepSpeed's tagging reads real names; under `engine.zero_init` it is built inside
`deepspeed.zero.Init`. Each leaf computes the SPEC loss of its parameters with torch ops on the
SPEC data, so DeepSpeed's backward makes the gradients. The engine is configured from the scenario;
NS calls are counted by wrapping DeepSpeed's Newton–Schulz functions (ns_counter.py). After every
step the fp32 master weights (and the Muon momentum where DeepSpeed exposes it) are read back.

One process per GPU: a scenario with `engine.dp` N runs under `torchrun --nproc-per-node N`
(scripts/deepspeed-run.sh groups the scenarios by dp); rank r feeds the SPEC samples of rank r, and
rank 0 writes the one merged trace (NS calls summed over ranks, state read through DeepSpeed's
collective full-tensor getters). Trace format: docs/trace-format.md.
"""
import argparse
import json
import os
import sys
import time
import types

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")   # see ns_counter.py
# MUONCHECK_DEVICE=cpu runs DeepSpeed's CPU accelerator over gloo (a smoke test without a GPU).
DEVICE = os.environ.get("MUONCHECK_DEVICE", "cuda")
if DEVICE == "cpu":
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29533")):   # torchrun sets these for dp > 1
    os.environ.setdefault(key, value)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import ds_coverage  # noqa: E402
import muoncheck_data as data  # noqa: E402
import muoncheck_scenario  # noqa: E402
import ranks  # noqa: E402
from gather_timer import GatherTimer  # noqa: E402
from ns_counter import NsCounter  # noqa: E402

TRACE_FORMAT = "muoncheck-trace/1"
_TORCH_DTYPE = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
_DTYPE_NAME = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


class Unsupported(Exception):
    """A valid scenario this adapter (or this DeepSpeed version) cannot run as written."""


# ---------------------------------------------------------------- model

class Node(torch.nn.Module):
    """One module of the tree; `terms` are the loss terms of the parameters it owns.

    Children and parameters are created inside __init__ (from a name tree), because
    deepspeed.zero.Init partitions a module's own parameters when its __init__ returns:
    a parameter attached afterwards would stay a full tensor and hide the placeholder case.
    """

    def __init__(self, tree=None, seed=0):
        super().__init__()
        self.terms = []   # (local name, param index, rank, rows, cols)
        tree = tree or {"children": {}, "params": []}
        for name, child in tree["children"].items():
            self.add_module(name, Node(child, seed))
        for local, p in tree["params"]:
            init = torch.from_numpy(data.initial_weight(seed, p).astype(np.float32))
            self.register_parameter(local, torch.nn.Parameter(init))
            self.terms.append((local, p.index, len(p.shape), p.rows, p.cols))

    def forward(self, batch):
        total = None
        for local, index, rank, rows, cols in self.terms:
            w = getattr(self, local)
            x, y = batch[index]
            if rank == 1:   # 1/(2n)·‖w ⊙ x − y‖²
                r = w * x - y
                term = (r * r).sum(-1) / (2 * cols)
            else:           # 1/(2m)·‖W x − y‖², W viewed as (rows, cols)
                r = x @ w.reshape(rows, -1).t() - y
                term = (r * r).sum(-1) / (2 * rows)
            term = term.mean()   # mean over this micro-batch
            total = term if total is None else total + term
        return total


def name_tree(params):
    """{"children": {name: subtree}, "params": [(local name, Param)]} from dotted names."""
    root = {"children": {}, "params": []}
    for p in params:
        *path, local = p.name.split(".")
        node = root
        for part in path:
            node = node["children"].setdefault(part, {"children": {}, "params": []})
        node["params"].append((local, p))
    return root


class ScenarioModel(Node):
    def __init__(self, scenario):
        super().__init__(name_tree(scenario.params), scenario.seed)
        owners = []
        for p in scenario.params:
            node = self
            for part in p.name.split(".")[:-1]:
                node = node._modules[part]
            if all(node is not o for o in owners):
                owners.append(node)
        object.__setattr__(self, "_owners", owners)   # a plain list: not registered twice

    def forward(self, batch):
        total = None
        for node in self._owners:
            term = Node.forward(node, batch) if node is self else node(batch)
            total = term if total is None else total + term
        return total


def head_config(scenario):
    """The HF-style config DeepSpeed's per-head tagging reads (num heads, kv heads, head dim)."""
    if scenario.preset:
        pre = scenario.preset
        return types.SimpleNamespace(num_attention_heads=pre["heads"], num_key_value_heads=pre["kv_heads"],
                                     hidden_size=pre["hidden"], head_dim=pre["hidden"] // pre["heads"])
    q = [p for p in scenario.params if p.name.split(".")[-2] in ("q_proj", "query", "wq") and p.num_heads]
    kv = [p for p in scenario.params if p.name.split(".")[-2] in ("k_proj", "v_proj", "key", "value", "wk", "wv")
          and p.num_heads]
    if not q:
        raise Unsupported("per_head: DeepSpeed derives head counts from a model config; this scenario names no "
                          "query projection with num_heads")
    head_dim = q[0].rows // q[0].num_heads
    return types.SimpleNamespace(num_attention_heads=q[0].num_heads,
                                 num_key_value_heads=kv[0].num_heads if kv else q[0].num_heads,
                                 hidden_size=q[0].cols, head_dim=head_dim)


# ---------------------------------------------------------------- configuration

def check_runnable(s, deepspeed):
    if s.dp != ranks.world_size():
        raise Unsupported(f"engine.dp {s.dp}: this launch has {ranks.world_size()} process(es), one per GPU; "
                          f"scripts/deepspeed-run.sh starts dp-{s.dp} scenarios under torchrun --nproc-per-node {s.dp}")
    if s.momentum_form != "ema" or not s.nesterov:
        raise Unsupported("DeepSpeed's Muon is EMA momentum with Nesterov only")
    if s.ns_steps != 5 or [round(c, 4) for c in s.ns_coefficients] != [3.4445, -4.775, 2.0315]:
        raise Unsupported("DeepSpeed's Muon has fixed NS steps (5) and coefficients")
    if s.scale_rule != "deepspeed":
        raise Unsupported(f"scale_rule {s.scale_rule}: DeepSpeed scales by sqrt(max(1, rows/cols))")
    check_engine_path(s)
    if s.per_head and not hasattr(deepspeed, "resolve_per_head_muon_after_sharding"):
        raise Unsupported(f"optimizer.per_head: DeepSpeed {deepspeed.__version__} has no per-head Muon")
    if s.param_dtype == "fp16" and s.loss_scaler["type"] == "none":
        raise Unsupported("fp16 without a loss scaler: DeepSpeed's fp16 always scales")
    if s.loss_scaler["type"] != "none" and s.param_dtype != "fp16":
        raise Unsupported("a loss scaler needs fp16 params in DeepSpeed")


# ---------------------------------------------------------------- engine paths (issue 25)

def check_engine_path(s):
    """Declines the dtype / offload / checkpoint / compile combinations this launch cannot run."""
    import torch._dynamo
    if s.compile == bool(torch._dynamo.config.disable):
        raise Unsupported(f"engine.compile {str(s.compile).lower()}: this launch has torch.compile "
                          f"{'disabled' if s.compile else 'enabled'} (TORCH_COMPILE_DISABLE is read at start-up); "
                          "compile scenarios run in their own launch with TORCH_COMPILE_DISABLE=0 "
                          "(scripts/deepspeed-run-cpu.sh groups them)")
    mixed = s.grad_accum_dtype != s.param_dtype or s.comm_dtype != s.param_dtype
    if mixed and not bf16_optimizer_path(s):
        raise Unsupported("grad_accum_dtype / comm_dtype other than param_dtype: DeepSpeed's only such path is "
                          "BF16_Optimizer (bf16 params, fp32 grad_accum_dtype and comm_dtype, ZeRO-1, no offload)")
    if s.offload_optimizer != "none" and s.stage not in (1, 2, 3):
        raise Unsupported("engine.offload_optimizer: DeepSpeed offloads the optimizer only under ZeRO")
    if s.checkpoint and s.overflow:
        raise Unsupported("checkpoint with overflow injections: not mapped by this adapter")
    if s.lr_schedule["shape"] != "constant" or any("lr_schedule" in g for g in s.groups):
        if s.loss_scaler["type"] == "dynamic":
            raise Unsupported("lr_schedule with a dynamic loss scaler: DeepSpeed steps the scheduler only after an "
                              "applied step; this adapter does not re-index it over skipped steps")


def bf16_optimizer_path(s):
    """DeepSpeed picks BF16_Optimizer for bf16 params with fp32 gradient accumulation at ZeRO-1
    without offload (engine._do_optimizer_sanity_check); its gradient all-reduce is then fp32."""
    return (s.param_dtype == "bf16" and s.grad_accum_dtype == "fp32" and s.comm_dtype == "fp32" and s.stage == 1
            and s.offload_optimizer == "none")


def engine_path_config(s):
    """The DeepSpeed settings of the path: optimizer offload, BF16_Optimizer's dtypes."""
    cfg = {}
    if s.offload_optimizer != "none":
        cfg["zero_optimization"] = {"offload_optimizer": {"device": s.offload_optimizer, "pin_memory": False}}
    if s.grad_accum_dtype != s.param_dtype:
        cfg["data_types"] = {"grad_accum_dtype": s.grad_accum_dtype}
    if s.comm_dtype != s.param_dtype:
        cfg["communication_data_type"] = s.comm_dtype
    return cfg


def param_groups_for(s, model):
    """model_parameters: one dict per scenario group (its weight_decay override) and the rest;
    DeepSpeed splits each into a Muon and an Adam half named `gI-muon-params` / `gI-adam-params`."""
    if not s.groups:
        return list(model.parameters())
    buckets = [[] for _ in s.groups] + [[]]
    for name, p in model.named_parameters():
        g = s.group_of(name)
        buckets[s.groups.index(g) if g is not None else -1].append(p)
    out = []
    for i, (g, params) in enumerate(zip(s.groups + [None], buckets)):
        if params:
            group = {"params": params, "name": f"g{i}"}
            if g is not None and "weight_decay" in g:
                group["weight_decay"] = float(g["weight_decay"])
            out.append(group)
    return out


def lr_scheduler_for(s, model):
    """A callable DeepSpeed turns into its scheduler: LambdaLR with one factor per DeepSpeed param
    group (lr_scale · f(t) of the scenario group the half came from; the base rate is the
    config's muon_lr / adam_lr), or None when every rate stays constant."""
    if s.lr_schedule["shape"] == "constant" and not s.groups:
        return None
    names = [n for n, _ in model.named_parameters()]
    representative = {}   # DeepSpeed group prefix -> one param name of it
    for i, g in enumerate(s.groups + [None]):
        member = next((n for n in names if s.group_of(n) is g), None)
        if member is not None:
            representative[f"g{i}"] = member

    def make(optimizer):
        factors = []
        for group in optimizer.param_groups:
            prefix = str(group.get("name", "")).split("-")[0]
            name = representative.get(prefix, names[0])
            factors.append(lambda t, name=name: s.lr_factor(name, t))
        return torch.optim.lr_scheduler.LambdaLR(optimizer, factors)

    return make


def ds_config(s):
    ls = s.loss_scaler
    zero = {"stage": s.stage, "reduce_bucket_size": s.reduce_bucket_size,
            "allgather_bucket_size": s.allgather_bucket_size, "contiguous_gradients": s.contiguous_gradients,
            "overlap_comm": False, "reduce_scatter": False}   # ZeRO-3 refuses Muon with reduce-scatter
    if s.stage == 3:
        zero.update({"stage3_param_persistence_threshold": 0, "stage3_prefetch_bucket_size": s.allgather_bucket_size})
        del zero["allgather_bucket_size"]
    params = {"lr": s.lr, "momentum": s.momentum, "weight_decay": s.weight_decay, "ns_method": s.ns_method,
              "adam_lr": s.adam["lr"], "betas": list(s.adam["betas"]), "eps": s.adam["eps"],
              "torch_adam": True}   # torch's AdamW for the aux group: no JIT-built kernel
    if s.per_head:
        params["per_head_muon"] = True
    cfg = {"train_micro_batch_size_per_gpu": s.micro_batch, "gradient_accumulation_steps": s.gas,
           "train_batch_size": s.global_batch, "gradient_clipping": float(s.clip["max_norm"]),
           "steps_per_print": 1 << 30, "zero_optimization": zero,
           "optimizer": {"type": "Muon", "params": params}}
    cfg = merged(cfg, engine_path_config(s))
    if s.param_dtype == "fp16":
        cfg["fp16"] = {"enabled": True, "initial_scale_power": ls["initial_scale_power"],
                       "loss_scale_window": ls["scale_window"], "hysteresis": ls["hysteresis"],
                       "min_loss_scale": ls["min_scale"],
                       "loss_scale": 0 if ls["type"] == "dynamic" else float(2 ** ls["initial_scale_power"])}
    elif s.param_dtype == "bf16":
        cfg["bf16"] = {"enabled": True}
    return cfg


# ---------------------------------------------------------------- reading state back

def loss_scale(engine):
    opt = engine.optimizer
    for attr in ("cur_scale", "loss_scale"):
        value = getattr(opt, attr, None)
        if isinstance(value, (int, float)) or torch.is_tensor(value):
            return float(value)
    scaler = getattr(opt, "loss_scaler", None)
    return float(getattr(scaler, "cur_scale", 1.0)) if scaler is not None else 1.0


def _flat_momenta_12(engine, named):
    """ZeRO-1/2 keep Muon momentum as one flat buffer per group, laid out like the params of this
    rank's partition (whole params, a straddling one included). {param index: full momentum} for
    the Muon params this rank holds."""
    opt = engine.optimizer
    index_of = {id(p): i for i, (_, p) in enumerate(named)}
    out = {}
    for gi, group in enumerate(getattr(opt, "params_in_partition", None) or []):
        flat = opt.optimizer.param_groups[gi]["params"][0]
        buf = opt.optimizer.state.get(flat, {}).get("momentum_buffer")
        offset = 0
        for q in group:
            if buf is not None and id(q) in index_of and getattr(q, "use_muon", False):
                out[index_of[id(q)]] = buf.narrow(0, offset, q.numel()).detach().float().cpu().clone()
            offset += q.numel()
    return out


def _muon_momenta_12(engine, named):
    """Every Muon param's momentum at ZeRO-1/2, collected on rank 0 from the ranks that hold it.
    A param held by two ranks (it straddles their partitions) must hold the same momentum on both:
    DeepSpeed keeps a full copy on each; a disagreement is raised, never averaged away."""
    gathered = ranks.gather_to_rank0(_flat_momenta_12(engine, named))
    if gathered is None:
        return None
    merged = {}
    for r, momenta in enumerate(gathered):
        for i, m in momenta.items():
            if i in merged and not torch.equal(torch.nan_to_num(merged[i][1], 1.0, 2.0, 3.0),
                                               torch.nan_to_num(m, 1.0, 2.0, 3.0)):
                raise RuntimeError(f"{named[i][0]}: Muon momentum differs between ranks {merged[i][0]} and {r}")
            merged.setdefault(i, (r, m))
    return {i: m for i, (_, m) in merged.items()}


def read_state(engine, named, tags):
    """The state after a step, on rank 0 (None elsewhere). Collective: every rank calls it."""
    from deepspeed.utils import safe_get_full_fp32_param, safe_get_full_optimizer_state
    stage = engine.zero_optimization_stage()
    # BF16_Optimizer (ZeRO-1 with fp32 accumulation) keeps momentum in its flat fp32 state, mapped
    # per param like the Adam moments: the collective getter reads it
    flat_12 = stage in (1, 2) and type(engine.optimizer).__name__ != "BF16_Optimizer"
    momenta_12 = _muon_momenta_12(engine, named) if flat_12 else None
    keep = ranks.rank() == 0
    values = _values if keep else (lambda t: None)
    out = []
    for i, ((name, p), tag) in enumerate(zip(named, tags)):
        weight = safe_get_full_fp32_param(p) if stage > 0 else None
        entry = {"weight": values(weight if weight is not None else p)}   # stage 0: the param itself
        keys = [("momentum_buffer", "momentum")] if tag["use_muon"] else [("exp_avg", "adam_m"), ("exp_avg_sq", "adam_v")]
        for key, field in keys:
            value = None
            if stage == 0:
                value = engine.optimizer.state.get(p, {}).get(key) if hasattr(engine.optimizer, "state") else None
            elif key == "momentum_buffer" and flat_12:
                value = (momenta_12 or {}).get(i)
            else:   # collective; a state not created yet (before step 0) or not mapped (DeepSpeed
                #   raises "not found in optimizer state fragment") fails the local lookup that
                #   precedes the collective, alike on every rank
                try:
                    value = safe_get_full_optimizer_state(p, key)
                except Exception:
                    value = None
            if value is not None:
                entry[field] = values(value)
        out.append(entry)
    return out if keep else None


def _values(t):
    flat = t.detach().float().cpu().reshape(-1).numpy().astype(np.float64)
    return [float(v) if np.isfinite(v) else ("nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")) for v in flat]


# ---------------------------------------------------------------- one scenario

def make_batch(s, step, micro_step, device, dtype):
    samples = [s.global_sample(micro_step, ranks.rank(), i) for i in range(s.micro_batch)]
    batch = {}
    for p in s.params:
        x = torch.from_numpy(data.inputs(s.seed, p, step, samples)).to(device=device, dtype=dtype)
        y = torch.from_numpy(data.targets(s.seed, p, step, samples)).to(device=device, dtype=dtype)
        batch[p.index] = (x, y)
    return batch


def install_injections(s, named, clock):
    """Overflow injections as gradient hooks: element `index` of the param's gradient becomes inf/nan."""
    handles = []
    for inj in s.overflow:
        if inj.get("rank", 0) >= ranks.world_size():
            raise Unsupported(f"overflow injection on rank {inj.get('rank', 0)} at dp {ranks.world_size()}")
        if inj.get("rank", 0) != ranks.rank():
            continue
        index = [i for i, (n, _) in enumerate(named) if n == inj["param"]][0]
        value = float("inf") if inj.get("value", "inf") == "inf" else float("nan")

        def hook(grad, inj=inj, value=value):
            if (clock["step"], clock["micro_step"]) != (inj.get("step", 0), inj.get("micro_step", 0)):
                return grad
            grad = grad.clone()
            grad.view(-1)[int(inj.get("index", 0))] = value
            return grad

        handles.append(named[index][1].register_hook(hook))
    return handles


def _synchronize():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


class Run:
    """One engine built from a scenario, with its counters; `train` runs a range of steps."""

    def __init__(self, s, deepspeed, extra_config, device):
        self.s, self.device = s, device
        cfg = merged(ds_config(s), extra_config)
        with deepspeed.zero.Init(config_dict_or_path=cfg, enabled=s.stage == 3 and s.zero_init):
            model = ScenarioModel(s)
        if s.per_head:
            model.config = head_config(s)
        self.engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=param_groups_for(s, model),
                                                    lr_scheduler=lr_scheduler_for(s, model), config=cfg)
        self.named = list(self.engine.module.named_parameters())   # the trace lists params in this order
        if sorted(n for n, _ in self.named) != sorted(p.name for p in s.params):
            raise RuntimeError("the module's parameter names differ from the scenario's")
        self.tags = [{"name": n, "use_muon": bool(getattr(p, "use_muon", False)),
                      "num_heads": int(getattr(p, "muon_num_heads", None) or 0)} for n, p in self.named]
        self.counter = NsCounter(self.named)
        self.counter.install(at_update_entry=s.compile)
        self.gathers = GatherTimer(ranks.world_size(), _synchronize)
        self.gathers.install()
        self.clock = {"step": 0, "micro_step": 0}
        self.hooks = install_injections(s, self.named, self.clock)
        self.step_seconds, self.calls_by_rank = [], []
        self.lrs = []   # per step, the rate of each DeepSpeed param group as the step starts

    def train(self, first, last):
        """Steps first..last-1; the step records on rank 0 (an empty list elsewhere)."""
        s, engine, device = self.s, self.engine, self.device
        dtype = _TORCH_DTYPE[s.param_dtype]
        steps = []
        for t in range(first, last):
            self.clock["step"] = t
            self.counter.reset_step()
            scale = loss_scale(engine)
            self.lrs.append({str(g.get("name", i)): float(g["lr"]) for i, g in enumerate(engine.optimizer.param_groups)})
            skipped_before = int(getattr(engine, "skipped_steps", 0))
            losses = []
            ranks.barrier(device)
            _synchronize()
            begin = time.perf_counter()
            for k in range(s.gas):
                self.clock["micro_step"] = k
                loss = engine(make_batch(s, t, k, device, dtype))
                losses.append(float(loss.detach().float()))
                engine.backward(loss)
                # a scheduler steps after each applied step; indexing it by t keeps a skipped step counted
                engine.step(lr_kwargs={"epoch": t + 1} if engine.lr_scheduler is not None else None)
            _synchronize()
            self.step_seconds.append(time.perf_counter() - begin)
            skipped = int(getattr(engine, "skipped_steps", 0)) > skipped_before
            mine = [self.counter.calls.get(i, 0) for i in range(len(self.named))] + [self.counter.unattributed]
            per_rank = ranks.gather_to_rank0(mine)
            loss = ranks.mean_over_ranks(sum(losses) / len(losses), device)
            state = read_state(engine, self.named, self.tags)
            if per_rank is None:
                continue
            self.calls_by_rank.append(per_rank)
            steps.append({"step": t, "skipped": skipped, "loss": loss, "loss_scale": scale,
                          "loss_scale_after": loss_scale(engine),
                          "ns_calls": [sum(r[i] for r in per_rank) for i in range(len(self.named))],
                          "ns_unattributed": sum(r[-1] for r in per_rank),
                          "params": state})
        return steps

    def close(self):
        """Uninstalls the counters; the summaries on rank 0 (None elsewhere). Collective; once."""
        if self.engine is None:
            return self.summary
        self.counter.uninstall()
        self.gathers.uninstall()
        for h in self.hooks:
            h.remove()
        summary = {"heads": ranks.gather_to_rank0(dict(self.counter.heads)),
                   "dtypes": ranks.gather_to_rank0(sorted(self.counter.dtypes)),
                   "gathers": ranks.gather_to_rank0(self.gathers.summary())}
        if hasattr(self.engine, "destroy"):   # DeepSpeed's own teardown (releases the Muon gather caches)
            self.engine.destroy()
        self.engine = None
        self.summary = summary if ranks.rank() == 0 else None
        return self.summary


def run_scenario(s, deepspeed, extra_config, phase=None):
    cross_dp = bool(s.checkpoint) and s.resumed().dp != s.dp
    if cross_dp and phase is None:
        raise Unsupported(f"checkpoint.resume.dp {s.resumed().dp}: another process world; run it as two launches, "
                          "--checkpoint-phase save then resume (scripts/deepspeed-run-cpu.sh does)")
    check_runnable(s.resumed() if cross_dp and phase == "resume" else s, deepspeed)
    device = torch.device("cuda", ranks.local_rank()) if DEVICE == "cuda" else torch.device("cpu")
    if cross_dp:
        return (save_phase if phase == "save" else resume_phase)(s, deepspeed, extra_config, device)
    run = Run(s, deepspeed, extra_config, device)
    initial = read_state(run.engine, run.named, run.tags)
    checkpoint_details = None
    try:
        if s.checkpoint:
            steps, run, checkpoint_details = checkpoint_cycle(s, deepspeed, extra_config, device, run)
        else:
            steps = run.train(0, s.steps)
    finally:
        summary = run.close()
    if ranks.rank() != 0:
        return None
    return trace_body(s, run, summary, initial, steps, extra_config, checkpoint_details)


def trace_body(s, run, summary, initial, steps, extra_config, checkpoint_details):
    tags = run.tags
    if checkpoint_details:
        exported_alike(initial, steps)
    ns_dtype = sorted({d for ds in summary["dtypes"] for d in ds})
    dtypes = {"param": s.param_dtype, "grad_accum": s.grad_accum_dtype, "comm": s.comm_dtype, "master": "fp32",
              "ns": _DTYPE_NAME.get(ns_dtype[0], ns_dtype[0]) if len(ns_dtype) == 1 else
              ("fp16" if s.ns_method == "gram" else "bf16")}
    for heads in summary["heads"]:
        for i, h in heads.items():
            tags[i]["ns_heads_seen"] = h
    details = {"world_size": ranks.world_size(), "step_seconds": [round(x, 6) for x in run.step_seconds],
               "lr_by_group": run.lrs,
               "ns_calls_by_rank": [[r[:-1] for r in step] for step in run.calls_by_rank],
               "muon_gathers_by_rank": summary["gathers"]}
    if extra_config:
        details["deepspeed_config_extra"] = extra_config
    if checkpoint_details:
        details["checkpoint"] = checkpoint_details
    return {"dtypes": dtypes, "tags": tags, "initial": initial, "steps": steps}, details


def exported_alike(initial, steps):
    """Keeps a state field of a param only where every step (and the initial state) has it.

    DeepSpeed's getters can start answering mid-run: after load_checkpoint, ZeRO-1/2 link the
    Adam moments they did not expose before. A field the trace shows at some steps only would
    read as "not exported" at the others, a failure of the adapter, not of DeepSpeed."""
    records = [initial] + [st["params"] for st in steps]
    for i in range(len(initial)):
        for field in ("momentum", "adam_m", "adam_v"):
            if not all(field in rec[i] for rec in records[1:]):
                for rec in records:
                    rec[i].pop(field, None)


# ---------------------------------------------------------------- checkpoint cycle (issue 25)

def checkpoint_cycle(s, deepspeed, extra_config, device, run):
    """Steps 0..k, engine.save_checkpoint, the engine torn down, a fresh one built (at resume.stage
    when given) and engine.load_checkpoint, then steps k+1..; a resume at another stage goes
    through ds_to_universal and load_universal. Returns (steps, the run that finished, details).
    A resume at another dp needs another process world: scripts/deepspeed-run-cpu.sh runs those as
    two launches (--checkpoint-phase save, then resume)."""
    k = int(s.checkpoint["save_after_step"])
    after = s.resumed()
    steps = run.train(0, k + 1)
    root = checkpoint_root(s, device)
    tag, universal = save_checkpoint(run, root, k, convert=after.stage != s.stage)
    run.close()
    resumed = Run(after, deepspeed, merged(extra_config or {}, {"checkpoint": {"load_universal": True}}
                                           if universal else {}), device)
    resumed.engine.load_checkpoint(universal or root, tag=tag, load_optimizer_states=True,
                                   load_lr_scheduler_states=True)
    resumed.counter.heads.update(run.counter.heads)
    resumed.counter.dtypes |= run.counter.dtypes
    steps += resumed.train(k + 1, s.steps)
    resumed.step_seconds = run.step_seconds + resumed.step_seconds
    resumed.lrs = run.lrs + resumed.lrs
    resumed.calls_by_rank = run.calls_by_rank + resumed.calls_by_rank
    return steps, resumed, {"saved_after_step": k, "resumed_dp": after.dp, "resumed_stage": after.stage,
                            "universal": bool(universal), "tag": tag}


class PhaseDone(Exception):
    """The save launch of a cross-dp checkpoint scenario finished; the resume launch writes the trace."""


def save_phase(s, deepspeed, extra_config, device):
    """Launch 1 of a resume at another dp: steps 0..k at dp, save, ds_to_universal, and the
    trace so far (rank 0) in ROOT/partial.json for the resume launch."""
    k = int(s.checkpoint["save_after_step"])
    root = checkpoint_root(s, device)
    run = Run(s, deepspeed, extra_config, device)
    try:
        initial = read_state(run.engine, run.named, run.tags)
        steps = run.train(0, k + 1)
        save_checkpoint(run, root, k, convert=True)
    except Exception as e:   # the resume launch reports it (it writes the trace)
        if ranks.rank() == 0:
            os.makedirs(root, exist_ok=True)
            with open(os.path.join(root, "partial.json"), "w") as f:
                json.dump({"error": f"save launch at dp {s.dp}: {type(e).__name__}: {e}"}, f)
        raise
    finally:
        summary = run.close()
    if ranks.rank() == 0:
        with open(os.path.join(root, "partial.json"), "w") as f:
            json.dump({"initial": initial, "steps": steps, "step_seconds": run.step_seconds, "lrs": run.lrs,
                       "calls_by_rank": run.calls_by_rank, "summary": summary}, f)
    raise PhaseDone(f"saved after step {k} at dp {s.dp} -> {root}")


def resume_phase(s, deepspeed, extra_config, device):
    """Launch 2: a fresh engine at resume.dp loads the universal checkpoint of launch 1 and runs
    steps k+1..; the trace is launch 1's steps followed by these."""
    k = int(s.checkpoint["save_after_step"])
    after = s.resumed()
    root = os.path.join(os.environ.get("MUONCHECK_CHECKPOINTS", "/tmp/muoncheck-checkpoints"), s.name)
    with open(os.path.join(root, "partial.json")) as f:
        partial = json.load(f)
    if "error" in partial:
        raise RuntimeError(partial["error"])
    run = Run(after, deepspeed, merged(extra_config or {}, {"checkpoint": {"load_universal": True}}), device)
    try:
        run.engine.load_checkpoint(root + "-universal", tag=f"step{k}", load_optimizer_states=True,
                                   load_lr_scheduler_states=True)
        steps = run.train(k + 1, s.steps)
    finally:
        summary = run.close()
    if ranks.rank() != 0:
        return None
    # ns_calls_by_rank keeps each step's own ranks (dp before the save, resume.dp after)
    run.step_seconds = partial["step_seconds"] + run.step_seconds
    run.lrs = partial["lrs"] + run.lrs
    run.calls_by_rank = partial["calls_by_rank"] + run.calls_by_rank
    before = partial["summary"]
    summary = {"heads": [{int(i): h for i, h in heads.items()} for heads in before["heads"]] + summary["heads"],
               "dtypes": before["dtypes"] + summary["dtypes"], "gathers": summary["gathers"]}
    return trace_body(s, run, summary, partial["initial"], partial["steps"] + steps, extra_config,
                      {"saved_after_step": k, "saved_dp": s.dp, "resumed_dp": after.dp, "resumed_stage": after.stage,
                       "universal": True, "tag": f"step{k}", "launches": 2})


def checkpoint_root(s, device):
    root = os.path.join(os.environ.get("MUONCHECK_CHECKPOINTS", "/tmp/muoncheck-checkpoints"), s.name)
    if ranks.rank() == 0 and os.path.isdir(root):
        import shutil
        shutil.rmtree(root)
    ranks.barrier(device)
    return root


def save_checkpoint(run, root, k, convert):
    """engine.save_checkpoint after step k; with `convert`, ds_to_universal on rank 0 as DeepSpeed's
    own script runs it. Returns (tag, the universal folder or None)."""
    tag = f"step{k}"
    run.engine.save_checkpoint(root, tag=tag)
    if not convert:
        return tag, None
    universal = root + "-universal"
    if ranks.rank() == 0:
        import subprocess
        done = subprocess.run([sys.executable, "-m", "deepspeed.checkpoint.ds_to_universal", "--input_folder",
                               os.path.join(root, tag), "--output_folder", os.path.join(universal, tag),
                               "--inject_missing_state"], capture_output=True, text=True)
        if done.returncode != 0:
            last = [line for line in done.stderr.splitlines() if line.strip()][-1:] or ["(no output)"]
            ok = torch.tensor([0])
        else:
            ok = torch.tensor([1])
    else:
        ok = torch.tensor([1])
    ok = ok.to(run.device)
    torch.distributed.broadcast(ok, 0)   # every rank raises alike, or none does
    if not int(ok):
        raise RuntimeError("ds_to_universal failed: " + (last[0] if ranks.rank() == 0 else "see rank 0"))
    if ranks.rank() == 0:
        with open(os.path.join(universal, "latest_universal"), "w") as f:
            f.write(tag)
    ranks.barrier(run.device)
    return tag, universal


def merged(base, extra):
    """base with extra deep-merged in (a scenario's DeepSpeed-only settings, ds-config/NAME.json)."""
    out = dict(base)
    for key, value in (extra or {}).items():
        out[key] = merged(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


def extra_config_for(path):
    """scenarios/deepspeed/ds-config/NAME.json beside the scenario: DeepSpeed settings muoncheck's
    scenario format has no field for (parameter_alignment, ...), recorded in the trace's details."""
    name = os.path.splitext(os.path.basename(path))[0]
    extra = os.path.join(os.path.dirname(os.path.abspath(path)), "ds-config", name + ".json")
    if not os.path.exists(extra):
        return None
    with open(extra) as f:
        return json.load(f)


def compile_state():
    import torch._dynamo
    return "disabled (TORCH_COMPILE_DISABLE=1)" if torch._dynamo.config.disable else "enabled"


def trace_for(s, deepspeed, body=None, unsupported=None, error=None):
    trace = {"format": TRACE_FORMAT,
             "implementation": {"name": "deepspeed", "version": deepspeed.__version__,
                                "details": {"torch": torch.__version__,
                                            "device": torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu",
                                            "gpus": torch.cuda.device_count() if DEVICE == "cuda" else 0,
                                            "nccl": ranks.nccl_version() if DEVICE == "cuda" else None,
                                            "adapter": "adapters/deepspeed/run_deepspeed.py",
                                            "torch_compile": compile_state()}},
             "scenario": {"name": s.name, "json": s.raw}}
    if unsupported:
        trace["unsupported"] = unsupported
    if error:
        trace["error"] = error
    if body:
        trace.update(body[0])
        trace["implementation"]["details"].update(body[1])
    return trace


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--out", required=True, help="folder the traces go to (<scenario>.trace.json)")
    ap.add_argument("--checkpoint-phase", choices=("save", "resume"),
                    help="a checkpoint scenario resuming at another dp: this launch's half (save at dp, resume at "
                         "resume.dp); the trace is written by the resume launch")
    args = ap.parse_args(argv)
    ds_coverage.start()   # before deepspeed is imported (MUONCHECK_COVERAGE=DIR, else nothing)
    try:
        return run_all(args)
    finally:
        ds_coverage.stop()
        # every rank saved its coverage before any exits: torchrun ends the others when one fails
        if torch.distributed.is_initialized():
            torch.distributed.barrier()


def run_all(args):
    import deepspeed
    if DEVICE == "cuda":
        torch.cuda.set_device(ranks.local_rank())
    deepspeed.init_distributed(dist_backend="nccl" if DEVICE == "cuda" else "gloo")
    os.makedirs(args.out, exist_ok=True)
    failures = 0
    for path in args.scenarios:
        s = muoncheck_scenario.load(path)
        start = time.time()
        try:
            body = run_scenario(s, deepspeed, extra_config_for(path), args.checkpoint_phase)
            trace, status = (trace_for(s, deepspeed, body=body) if body else None), "ran"
        except PhaseDone as e:
            trace, status = None, str(e)
            if ranks.rank() == 0:
                print(f"{s.name}: {status}", flush=True)
        except Unsupported as e:
            trace, status = trace_for(s, deepspeed, unsupported=str(e)), "UNSUPPORTED: " + str(e)
        except Exception as e:   # one scenario's crash must not lose the others' traces
            import traceback
            traceback.print_exc()
            trace, status = trace_for(s, deepspeed, error=f"{type(e).__name__}: {e}"), f"ERROR: {e}"
            failures += 1
        if ranks.rank() == 0 and trace is not None:
            trace.setdefault("implementation", {}).setdefault("details", {})["wall_seconds"] = round(time.time() - start, 2)
            out = os.path.join(args.out, f"{s.name}.trace.json")
            with open(out, "w") as f:
                json.dump(trace, f)
            print(f"{s.name}: {status} in {time.time() - start:.1f} s -> {out}", flush=True)
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
