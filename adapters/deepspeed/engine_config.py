"""The DeepSpeed engine a scenario asks for: which scenarios this adapter declines (and why), the
DeepSpeed config (ZeRO, dtypes, loss scaler, Muon and its aux Adam, the engine path: offload,
BF16_Optimizer), the model_parameters groups and the per-group LambdaLR, and the DeepSpeed-only
settings a scenario carries beside it (scenarios/deepspeed/ds-config/NAME.json).
"""
import json
import os
import tempfile
import types

import torch

from adapters.common import ranks


from adapters.plugin import Unsupported  # noqa: E402,F401  (a valid scenario DeepSpeed cannot run as written)


_QUERY_LEAVES = ("q_proj", "query", "wq")
_KV_LEAVES = ("k_proj", "v_proj", "key", "value", "wk", "wv")


def _leaf(name):
    return name.split(".")[-2] if "." in name else name


def head_config(scenario):
    """The HF-style config DeepSpeed's per-head tagging reads (num heads, kv heads, head dim)."""
    if scenario.preset:
        pre = scenario.preset
        return types.SimpleNamespace(num_attention_heads=pre["heads"], num_key_value_heads=pre["kv_heads"],
                                     hidden_size=pre["hidden"], head_dim=pre["hidden"] // pre["heads"])
    q = [p for p in scenario.params if _leaf(p.name) in _QUERY_LEAVES and p.num_heads]
    kv = [p for p in scenario.params if _leaf(p.name) in _KV_LEAVES and p.num_heads]
    if not q:
        raise Unsupported("optimizer.per_head: DeepSpeed derives head counts from a model config; this scenario names no "
                          "query projection with num_heads")
    head_dim = q[0].rows // q[0].num_heads
    return types.SimpleNamespace(num_attention_heads=q[0].num_heads,
                                 num_key_value_heads=kv[0].num_heads if kv else q[0].num_heads,
                                 hidden_size=q[0].cols, head_dim=head_dim)


def check_head_split(s):
    """Declines a per-head scenario whose heads DeepSpeed would split otherwise. DeepSpeed splits
    only the projections named as query, key or value (deepspeed/__init__.py _classify_leaf), and
    only when the rows are exactly the model config's head count times its head width (_confirm):
    the query's heads, or the key/value heads, of the query's width (head_config). Every other
    matrix, an output projection included, is orthogonalised whole. The scenario's num_heads must
    say the same, else the oracle judges another split than the one DeepSpeed runs."""
    if s.preset:
        return
    cfg = head_config(s)   # raises when no query projection says the head count
    for p in s.params:
        if not p.use_muon:
            continue
        leaf = _leaf(p.name)
        heads = cfg.num_attention_heads if leaf in _QUERY_LEAVES else cfg.num_key_value_heads if leaf in _KV_LEAVES else 0
        split = heads if heads and p.rows == heads * cfg.head_dim else 0
        if (p.num_heads or 0) != split:
            does = (f"splits it into {split} heads of {cfg.head_dim} rows" if split else "orthogonalises it whole" +
                    ("" if heads else f" (it splits only query, key and value projections by heads; {leaf} is none)"))
            raise Unsupported(f"optimizer.per_head: {p.name} has num_heads {p.num_heads or 0} over {p.rows} rows; "
                              f"DeepSpeed {does}")


def check_runnable(s, deepspeed):
    if s.dp != ranks.world_size():
        raise Unsupported(f"engine.dp {s.dp}: this launch has {ranks.world_size()} process(es), one per GPU; "
                          f"scripts/deepspeed-run.sh starts dp-{s.dp} scenarios under torchrun --nproc-per-node {s.dp}")
    if s.momentum_form != "ema" or not s.nesterov:
        raise Unsupported("DeepSpeed's Muon is EMA momentum with Nesterov only")
    if s.ns_steps != 5 or s.ns_coefficients is None or [round(c, 4) for c in s.ns_coefficients] != [3.4445, -4.775, 2.0315]:
        raise Unsupported("DeepSpeed's Muon has fixed NS steps (5) and coefficients")
    if s.scale_rule != "deepspeed":
        raise Unsupported(f"scale_rule {s.scale_rule}: DeepSpeed scales by sqrt(max(1, rows/cols))")
    check_engine_path(s)
    if s.per_head and not hasattr(deepspeed, "resolve_per_head_muon_after_sharding"):
        raise Unsupported(f"optimizer.per_head: DeepSpeed {deepspeed.__version__} has no per-head Muon")
    if s.per_head:
        check_head_split(s)
    if s.param_dtype == "fp16" and s.loss_scaler["type"] == "none":
        raise Unsupported("fp16 without a loss scaler: DeepSpeed's fp16 always scales")
    if s.loss_scaler["type"] != "none" and s.param_dtype != "fp16":
        raise Unsupported("a loss scaler needs fp16 params in DeepSpeed")


def check_engine_path(s):
    """Declines the dtype / offload / checkpoint / compile combinations this launch cannot run."""
    import torch._dynamo
    if s.compile == bool(torch._dynamo.config.disable):
        raise Unsupported(f"engine.compile {str(s.compile).lower()}: this launch has torch.compile "
                          f"{'disabled' if s.compile else 'enabled'} (TORCH_COMPILE_DISABLE is read at start-up); "
                          "compile scenarios run in their own launch with TORCH_COMPILE_DISABLE=0 "
                          "(scripts/deepspeed-run-cpu.sh groups them)")
    mixed = s.grad_accum_dtype != s.param_dtype or s.comm_dtype != s.param_dtype
    if mixed and not (bf16_optimizer_path(s) or zero2_fp32_accumulation_path(s)):
        raise Unsupported("grad_accum_dtype / comm_dtype other than param_dtype: DeepSpeed's such paths are "
                          "BF16_Optimizer (bf16 params, fp32 grad_accum_dtype and comm_dtype, ZeRO-1, no offload) "
                          "and ZeRO-2's fp32 gradient accumulation (bf16 params, fp32 grad_accum_dtype and comm_dtype)")
    if s.offload_optimizer != "none" and s.stage not in (1, 2, 3):
        raise Unsupported("engine.offload_optimizer: DeepSpeed offloads the optimizer only under ZeRO")
    if bf16_optimizer_path(s):
        # BF16_Optimizer.__init__ (0.19.8 runtime/bf16_optimizer.py:60-66) raises for a Muon param
        # that is not a 2-D matrix: a limit DeepSpeed states, not a defect to judge
        odd = [p.name for p in s.params if p.use_muon and len(p.shape) != 2]
        if odd:
            raise Unsupported(f"grad_accum_dtype fp32 with bf16 params at ZeRO-1 (BF16_Optimizer): DeepSpeed's BF16 "
                              f"Muon supports dense 2-D matrices only, not {odd[0]} {s.params[[p.name for p in s.params].index(odd[0])].shape}")
    if s.offload_optimizer == "nvme" and s.stage != 3:
        raise Unsupported("engine.offload_optimizer nvme: DeepSpeed swaps the optimizer state to a file only at "
                          "ZeRO-3 (ZeRO-1/2 keep an nvme-offloaded optimizer in host memory, as for cpu)")
    if s.checkpoint and s.overflow:
        raise Unsupported("checkpoint with overflow injections: not mapped by this adapter")
    ls = s.loss_scaler
    if s.param_dtype == "fp16" and ls["type"] == "dynamic" and float(ls["min_scale"]) != int(ls["min_scale"]):
        raise Unsupported(f"loss_scaler.min_scale {ls['min_scale']}: DeepSpeed's fp16.min_loss_scale is an integer")
    if s.stage == 0 and s.clip["max_norm"] > 0 and s.clip["mode"] == "update":
        raise Unsupported("optimizer.clip.mode update at stage 0: the mode is DeepSpeed's ZeRO clipping (norm over the "
                          "Muon updates); stage 0 clips the raw gradients before the optimizer runs (raw_grad)")
    if s.overflow and s.param_dtype == "fp32":
        raise Unsupported("overflow injection at fp32: DeepSpeed checks gradients for overflow only under fp16 or bf16 "
                          "(engine._configure_zero_optimizer sets check_grad_overflow False for fp32; stage 0 steps "
                          "the optimizer unchecked), so a non-finite gradient is applied by design, not skipped")
    if s.lr_schedule["shape"] != "constant" or any("lr_schedule" in g for g in s.groups):
        if s.loss_scaler["type"] == "dynamic":
            raise Unsupported("lr_schedule with a dynamic loss scaler: DeepSpeed steps the scheduler only after an "
                              "applied step; this adapter does not re-index it over skipped steps")


def bf16_optimizer_path(s):
    """DeepSpeed picks BF16_Optimizer for bf16 params with fp32 gradient accumulation at ZeRO-1
    without offload (engine._do_optimizer_sanity_check); its gradient all-reduce is then fp32."""
    return (s.param_dtype == "bf16" and s.grad_accum_dtype == "fp32" and s.comm_dtype == "fp32" and s.stage == 1
            and s.offload_optimizer == "none")


def zero2_fp32_accumulation_path(s):
    """ZeRO-2 with bf16 params accumulates the gradients in fp32 (data_types.grad_accum_dtype) and
    reduces them in communication_data_type fp32."""
    return s.param_dtype == "bf16" and s.grad_accum_dtype == "fp32" and s.comm_dtype == "fp32" and s.stage == 2


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


def with_swap_folders(cfg, s):
    """cfg with a swap folder for every offload (optimizer or param) to device nvme that names none:
    MUONCHECK_NVME/<scenario> (scripts/deepspeed-run-cpu.sh sets it), else a fresh temporary folder.
    DeepSpeed's swapper files go there (one folder per rank inside it), through its async_io op;
    where that op cannot be built (libaio-dev missing) the scenario is declined."""
    zero = cfg.get("zero_optimization", {})
    offloads = [k for k in ("offload_optimizer", "offload_param") if zero.get(k, {}).get("device") == "nvme"]
    if not offloads:
        return cfg
    from deepspeed.accelerator import get_accelerator
    if not get_accelerator().create_op_builder("AsyncIOBuilder").is_compatible(verbose=False):
        raise Unsupported(f"{' and '.join(offloads)} to nvme: DeepSpeed's async_io op cannot be built on this "
                          "machine (it needs libaio-dev)")
    base = os.environ.get("MUONCHECK_NVME")
    folder = os.path.join(base, s.name) if base else tempfile.mkdtemp(prefix=f"muoncheck-nvme-{s.name}-")
    os.makedirs(folder, exist_ok=True)
    zero = dict(zero)
    for key in offloads:
        zero[key] = {"nvme_path": folder, **zero[key]}
    return {**cfg, "zero_optimization": zero}


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
                       # an int in DeepSpeed's config (pydantic); only a dynamic scaler reads it
                       "min_loss_scale": int(ls["min_scale"]) if ls["type"] == "dynamic" else 1,
                       "loss_scale": 0 if ls["type"] == "dynamic" else float(2 ** ls["initial_scale_power"])}
    elif s.param_dtype == "bf16":
        cfg["bf16"] = {"enabled": True}
    return cfg


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
    if not os.path.exists(extra) and "." in name:   # a variant (`muoncheck variants`: NAME.gas1.json) takes its scenario's
        extra = os.path.join(os.environ.get("MUONCHECK_DS_CONFIG", "scenarios/deepspeed/ds-config"), name.split(".")[0] + ".json")
    if not os.path.exists(extra):
        return None
    with open(extra) as f:
        return json.load(f)


