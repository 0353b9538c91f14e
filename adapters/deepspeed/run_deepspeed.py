"""Runs muoncheck scenarios through DeepSpeed's own Muon under ZeRO and writes one trace each.

    python3 adapters/deepspeed/run_deepspeed.py --out DIR SCENARIO.json...

The model is a tree of nn.Modules whose parameters carry the scenario's names and layer shapes
(`model.layers.0.self_attn.q_proj.weight` is the `weight` of module model.layers.0.self_attn.q_proj),
so DeepSpeed's tagging reads real names; under `engine.zero_init` it is built inside
`deepspeed.zero.Init`. Each leaf computes the SPEC loss of its parameters with torch ops on the
SPEC data, so DeepSpeed's backward makes the gradients. The engine is configured from the scenario;
NS calls are counted by wrapping DeepSpeed's Newton–Schulz functions (adapters/common/ns_counter.py). After every
step the fp32 master weights (and the Muon momentum where DeepSpeed exposes it) are read back.

One process per GPU: a scenario with `engine.dp` N runs under `torchrun --nproc-per-node N`
(scripts/deepspeed-run.sh groups the scenarios by dp); rank r feeds the SPEC samples of rank r, and
rank 0 writes the one merged trace (NS calls summed over ranks, state read through DeepSpeed's
collective full-tensor getters). Trace format: docs/trace-format.md (/2: trace_v2.py adds every
rank's collectives, tags and digests and the scaler's counters; --repeat writes a second run).
"""
import argparse
import json
import os
import sys
import time
import types

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")   # see adapters/common/ns_counter.py
# MUONCHECK_DEVICE=cpu runs DeepSpeed's CPU accelerator over gloo (a smoke test without a GPU).
DEVICE = os.environ.get("MUONCHECK_DEVICE", "cuda")
if DEVICE == "cpu":
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29533")):   # torchrun sets these for dp > 1
    os.environ.setdefault(key, value)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))   # the checkout
import numpy as np  # noqa: E402
import torch  # noqa: E402

from adapters.common import datagen as data  # noqa: E402
from adapters.common.model import ScenarioModel, make_batch  # noqa: E402
from adapters.common import ranks  # noqa: E402
from adapters.common import scenario as muoncheck_scenario  # noqa: E402
from adapters.common.ns_counter import NsCounter  # noqa: E402
import trace_v2  # noqa: E402
from gather_timer import GatherTimer  # noqa: E402

TRACE_FORMAT = "muoncheck-trace/2"
_TORCH_DTYPE = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
_DTYPE_NAME = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


class Unsupported(Exception):
    """A valid scenario this adapter (or this DeepSpeed version) cannot run as written."""


# ---------------------------------------------------------------- model (adapters/common/model.py)

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
    if s.groups:
        raise Unsupported("optimizer.groups: not mapped onto DeepSpeed param groups by this adapter")
    if s.grad_accum_dtype != s.param_dtype or s.comm_dtype != s.param_dtype:
        raise Unsupported("grad_accum_dtype / comm_dtype other than param_dtype are not mapped")
    if s.per_head and not hasattr(deepspeed, "resolve_per_head_muon_after_sharding"):
        raise Unsupported(f"optimizer.per_head: DeepSpeed {deepspeed.__version__} has no per-head Muon")
    if s.param_dtype == "fp16" and s.loss_scaler["type"] == "none":
        raise Unsupported("fp16 without a loss scaler: DeepSpeed's fp16 always scales")
    if s.loss_scaler["type"] != "none" and s.param_dtype != "fp16":
        raise Unsupported("a loss scaler needs fp16 params in DeepSpeed")


def ds_config(s):
    ls = s.loss_scaler
    zero = {"stage": s.stage, "reduce_bucket_size": s.reduce_bucket_size,
            "allgather_bucket_size": s.allgather_bucket_size, "contiguous_gradients": s.contiguous_gradients,
            "overlap_comm": False, "reduce_scatter": False}   # DeepSpeed refuses Muon with reduce-scatter
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
    momenta_12 = _muon_momenta_12(engine, named) if stage in (1, 2) else None
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
            elif key == "momentum_buffer" and stage in (1, 2):
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


def run_scenario(s, deepspeed, extra_config):
    check_runnable(s, deepspeed)
    cfg = merged(ds_config(s), extra_config)
    dtype = _TORCH_DTYPE[s.param_dtype]
    device = torch.device("cuda", ranks.local_rank()) if DEVICE == "cuda" else torch.device("cpu")
    with deepspeed.zero.Init(config_dict_or_path=cfg, enabled=s.stage == 3 and s.zero_init):
        model = ScenarioModel(s)
    if s.per_head:
        model.config = head_config(s)
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    named = list(engine.module.named_parameters())   # the trace lists params in this order, by name
    if sorted(n for n, _ in named) != sorted(p.name for p in s.params):
        raise RuntimeError("the module's parameter names differ from the scenario's")
    tags = [{"name": n, "use_muon": bool(getattr(p, "use_muon", False)),
             "num_heads": int(getattr(p, "muon_num_heads", None) or 0)} for n, p in named]
    counter = NsCounter(named)
    counter.install()
    gathers = GatherTimer(ranks.world_size(), _synchronize)
    gathers.install()
    recorder = trace_v2.CollectiveRecorder()   # /2: collectives, digests, scaler counters
    recorder.install()
    digests = []
    clock = {"step": 0, "micro_step": 0}
    hooks = install_injections(s, named, clock)
    recorder.exporting = True
    initial = read_state(engine, named, tags)
    recorder.exporting = False
    steps, step_seconds, calls_by_rank = [], [], []
    try:
        for t in range(s.steps):
            clock["step"] = t
            recorder.step = t
            counter.reset_step()
            scale = loss_scale(engine)
            skipped_before = int(getattr(engine, "skipped_steps", 0))
            losses = []
            ranks.barrier(device)
            _synchronize()
            begin = time.perf_counter()
            for k in range(s.gas):
                clock["micro_step"] = k
                loss = engine(make_batch(s, t, k, device, dtype))
                losses.append(float(loss.detach().float()))
                engine.backward(loss)
                recorder.in_step, recorder.phase = True, "boundary" if k == s.gas - 1 else "micro_step"
                engine.step()
                recorder.in_step, recorder.phase = False, "micro_step"
            _synchronize()
            step_seconds.append(time.perf_counter() - begin)
            skipped = int(getattr(engine, "skipped_steps", 0)) > skipped_before
            mine = [counter.calls.get(i, 0) for i in range(len(named))] + [counter.unattributed]
            per_rank = ranks.gather_to_rank0(mine)
            loss = ranks.mean_over_ranks(sum(losses) / len(losses), device)
            recorder.exporting = True
            state = read_state(engine, named, tags)
            recorder.exporting = False
            digests.append(trace_v2.replicated_digest(engine, named, loss_scale(engine), skipped))
            counters = trace_v2.scaler_counters(engine)
            if per_rank is None:
                continue
            calls_by_rank.append(per_rank)
            steps.append({"step": t, "skipped": skipped, "loss": loss, "loss_scale": scale,
                          "loss_scale_after": loss_scale(engine),
                          "ns_calls": [sum(r[i] for r in per_rank) for i in range(len(named))],
                          "ns_unattributed": sum(r[-1] for r in per_rank),
                          "params": state, **({"scaler": counters} if counters else {})})
    finally:
        counter.uninstall()
        gathers.uninstall()
        recorder.uninstall()
        for h in hooks:
            h.remove()
    heads_by_rank = ranks.gather_to_rank0(dict(counter.heads))
    dtypes_by_rank = ranks.gather_to_rank0(sorted(counter.dtypes))
    gathers_by_rank = ranks.gather_to_rank0(gathers.summary())
    rank_blocks = trace_v2.rank_blocks([dict(t) for t in tags], recorder, digests)
    del engine
    if ranks.rank() != 0:
        return None
    ns_dtype = sorted({d for ds in dtypes_by_rank for d in ds})
    dtypes = {"param": s.param_dtype, "grad_accum": s.grad_accum_dtype, "comm": s.comm_dtype, "master": "fp32",
              "ns": _DTYPE_NAME.get(ns_dtype[0], ns_dtype[0]) if len(ns_dtype) == 1 else
              ("fp16" if s.ns_method == "gram" else "bf16")}
    for heads in heads_by_rank:
        for i, h in heads.items():
            tags[i]["ns_heads_seen"] = h
    details = {"world_size": ranks.world_size(), "step_seconds": [round(x, 6) for x in step_seconds],
               "ns_calls_by_rank": [[r[:-1] for r in step] for step in calls_by_rank],
               "muon_gathers_by_rank": gathers_by_rank}
    if extra_config:
        details["deepspeed_config_extra"] = extra_config
    return {"dtypes": dtypes, "tags": tags, "initial": initial, "steps": steps, "ranks": rank_blocks}, details


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


def trace_for(s, deepspeed, body=None, unsupported=None, error=None):
    trace = {"format": TRACE_FORMAT,
             "implementation": {"name": "deepspeed", "version": deepspeed.__version__,
                                "details": {"torch": torch.__version__,
                                            "device": torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu",
                                            "gpus": torch.cuda.device_count() if DEVICE == "cuda" else 0,
                                            "nccl": ranks.nccl_version() if DEVICE == "cuda" else None,
                                            "adapter": "adapters/deepspeed/run_deepspeed.py",
                                            "torch_compile": "disabled (TORCH_COMPILE_DISABLE=1)"}},
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
    ap.add_argument("--repeat", action="store_true",
                    help="run each scenario a second time as well: <scenario>.repeat1.trace.json, \"repeat\": 1 "
                         "(the run muoncheck's deterministic invariant compares against)")
    args = ap.parse_args(argv)
    import deepspeed
    if DEVICE == "cuda":
        torch.cuda.set_device(ranks.local_rank())
    deepspeed.init_distributed(dist_backend="nccl" if DEVICE == "cuda" else "gloo")
    os.makedirs(args.out, exist_ok=True)
    failures = 0
    runs = [(path, repeat) for path in args.scenarios for repeat in ((0, 1) if args.repeat else (0,))]
    for path, repeat in runs:
        s = muoncheck_scenario.load(path)
        start = time.time()
        try:
            body = run_scenario(s, deepspeed, extra_config_for(path))
            trace, status = (trace_for(s, deepspeed, body=body) if body else None), "ran"
        except Unsupported as e:
            trace, status = trace_for(s, deepspeed, unsupported=str(e)), "UNSUPPORTED: " + str(e)
        except Exception as e:   # one scenario's crash must not lose the others' traces
            import traceback
            traceback.print_exc()
            trace, status = trace_for(s, deepspeed, error=f"{type(e).__name__}: {e}"), f"ERROR: {e}"
            failures += 1
        if ranks.rank() == 0 and trace is not None:
            trace.setdefault("implementation", {}).setdefault("details", {})["wall_seconds"] = round(time.time() - start, 2)
            if repeat:
                trace["repeat"] = repeat
            out = os.path.join(args.out, f"{s.name}{'.repeat1' if repeat else ''}.trace.json")
            with open(out, "w") as f:
                json.dump(trace, f)
            print(f"{s.name}: {status} in {time.time() - start:.1f} s -> {out}", flush=True)
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
