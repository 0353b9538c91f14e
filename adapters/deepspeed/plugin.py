"""DeepSpeed's Muon under ZeRO as an engine plugin: DeepSpeed builds its engine from the scenario
and the drawn configuration (engine_config.py), muoncheck runs the loop (adapters/engine_loop.py)
and reads the state back where DeepSpeed's full-tensor getters read it (state_readback.py).

Its space is DeepSpeed's own config: the ZeRO stage; the precision path (fp32, bf16 with fp32
master and accumulation — BF16_Optimizer at ZeRO-1, ZeRO-2's fp32 accumulation —, bf16 with bf16
accumulation, fp16 with a static or a dynamic scaler); communication_data_type; optimizer offload;
contiguous_gradients, overlap_comm, reduce_scatter, round_robin_gradients and the bucket sizes;
gradient_clipping; the config scheduler; Muon's ns_method and per-head split; gas and micro-batch;
a checkpoint save/load. Field knobs map onto the scenario; engine knobs (overlap_comm,
reduce_scatter, round_robin_gradients) must not change the result beyond rounding. A combination
DeepSpeed cannot run as the scenario says is declined with the knob that causes it.
"""
import functools
import os
import sys

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")   # see adapters/common/ns_counter.py
if os.environ.get("MUONCHECK_DEVICE", "cpu") == "cpu":
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.setdefault("DS_BUILD_OPS", "0")
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:   # the DeepSpeed adapter's modules import each other flat
    sys.path.insert(0, _HERE)

from ..plugin import Decline, Engine, EnginePlugin, Knob, Unsupported  # noqa: E402
import schedulers  # noqa: E402
from schedulers import SCHEDULERS  # noqa: E402

_BIG = 500000000
_BUCKETS = [_BIG, 2, 8, 64, 1024]   # DeepSpeed asserts multiples of its 4-byte alignment in 16-bit elements

PRECISIONS = {
    "fp32": {"engine.param_dtype": "fp32", "loss_scaler.type": "none"},
    "bf16_fp32_master": {"engine.param_dtype": "bf16", "loss_scaler.type": "none"},
    "bf16": {"engine.param_dtype": "bf16", "loss_scaler.type": "none"},
    "fp16_static": {"engine.param_dtype": "fp16", "loss_scaler.type": "static"},
    "fp16_dynamic": {"engine.param_dtype": "fp16", "loss_scaler.type": "dynamic"},
}

class DeepSpeedMuon(EnginePlugin):
    name = "deepspeed"
    title = "deepspeed"
    ns_functions = [("deepspeed.runtime.zero.muon.original_muon", "zeropower_via_newtonschulz5"),
                    ("deepspeed.runtime.zero.muon.original_muon", "zeropower_via_gram_newtonschulz")]
    knobs = [
        Knob("stage", [1, 0, 2, 3], fields={s: {"engine.stage": s} for s in (1, 0, 2, 3)}, doc="zero_optimization.stage"),
        Knob("precision", list(PRECISIONS), fields=PRECISIONS,
             doc="fp32 | bf16 with fp32 master and accumulation | bf16 with bf16 accumulation | fp16 static | fp16 dynamic"),
        Knob("communication_data_type", ["default", "fp32", "bf16"],
             doc="communication_data_type (default: DeepSpeed's, the param dtype; fp32 for bf16_fp32_master)"),
        Knob("offload_optimizer", ["none", "cpu"], fields={"none": {"engine.offload_optimizer": None},
                                                           "cpu": {"engine.offload_optimizer": "cpu"}}),
        Knob("contiguous_gradients", [True, False], fields={v: {"engine.contiguous_gradients": v} for v in (True, False)}),
        Knob("overlap_comm", [False, True], doc="zero_optimization.overlap_comm"),
        Knob("reduce_scatter", [False, True], doc="zero_optimization.reduce_scatter"),
        Knob("round_robin_gradients", [False, True], doc="zero_optimization.round_robin_gradients"),
        Knob("reduce_bucket_size", _BUCKETS, fields={b: {"engine.reduce_bucket_size": b} for b in _BUCKETS}, open=True),
        Knob("allgather_bucket_size", _BUCKETS, fields={b: {"engine.allgather_bucket_size": b} for b in _BUCKETS}, open=True),
        Knob("gradient_clipping", [0.0, 1.0, 0.05], fields={c: {"optimizer.clip.max_norm": c} for c in (0.0, 1.0, 0.05)}, open=True),
        Knob("scheduler", SCHEDULERS, doc="the DeepSpeed config's scheduler.type with this plugin's parameters "
                                          "(schedulers.py; OneCycle without cycle_momentum), the scenario's "
                                          "lr_schedule its table; none: the scenario's schedule as a client LambdaLR"),
        Knob("ns_method", ["gram", "standard"],
             fields={m: {"optimizer.ns_method": m} for m in ("gram", "standard")},
             doc="optimizer.ns_method; the NS dtype is the accelerator's (to_scenario)"),
        Knob("per_head", [False, True], fields={v: {"optimizer.per_head": v} for v in (False, True)}),
        Knob("gas", [1, 2, 3], fields={g: {"engine.gas": g} for g in (1, 2, 3)}, open=True),
        Knob("micro_batch", [1, 2], fields={m: {"engine.micro_batch": m} for m in (1, 2)}, open=True),
        Knob("checkpoint", ["none", "save_load"], doc="engine.save_checkpoint after a step, a fresh engine load_checkpoint-ed"),
        Knob("compile", [False], fields={False: {"engine.compile": None}},
             doc="torch.compile of Muon's update: off (TORCH_COMPILE_DISABLE is read at start-up)"),
        Knob("muon", ["deepspeed"], fields={"deepspeed": {
            "optimizer.momentum_form": "ema", "optimizer.nesterov": True, "optimizer.ns_steps": 5,
            "optimizer.ns_coefficients": [3.4445, -4.775, 2.0315], "optimizer.scale_rule": "deepspeed"}},
             doc="what DeepSpeed's Muon fixes: EMA momentum with Nesterov, 5 quintic NS steps, sqrt(max(1, rows/cols))"),
    ]

    def version(self):
        import deepspeed
        return deepspeed.__version__

    def init_process_group(self, backend):
        import deepspeed
        deepspeed.init_distributed(dist_backend=backend)

    def to_scenario(self, config, scenario_json):
        from .. import space
        config = space.full_config(self, config)
        out = super().to_scenario(config, scenario_json)
        e, o = out["engine"], out["optimizer"]
        param = e["param_dtype"]
        accum = "fp32" if config["precision"] == "bf16_fp32_master" else param
        comm = {"default": accum}.get(config["communication_data_type"], config["communication_data_type"])
        e["grad_accum_dtype"], e["comm_dtype"] = accum, comm
        o["ns_dtype"] = _ns_compute_dtype(o["ns_method"])
        clip = o.setdefault("clip", {})
        if float(clip.get("max_norm") or 0.0) > 0.0:
            # gradient_clipping clips the gradient (DeepSpeed's config reference); ZeRO's norm taken
            # over the Muon updates is DeepSpeed #8439, judged as a defect, not drawn as a semantics
            clip["mode"] = "raw_grad"
        if e.get("stage") != 3:   # deepspeed.zero.Init partitions at construction: ZeRO-3 only
            e["zero_init"] = False
        # the knobs set gas and the steps: an injection or a save past them would make the scenario invalid
        out["overflow"] = [i for i in out.get("overflow", []) if int(i.get("micro_step", 0)) < int(e.get("gas", 1))
                           and int(i.get("step", 0)) < int(out.get("steps", 3))]
        if param == "fp16":
            ls = out.setdefault("loss_scaler", {})
            if ls.get("type") == "static":
                ls["initial_scale_power"] = ls.get("initial_scale_power", 16)
        if config["checkpoint"] == "save_load":
            # the step count first: the scheduler's table (and its total_num_steps) must cover every step
            # the run takes, and a checkpoint needs two
            out["steps"] = max(2, int(out.get("steps", 3)))
        if config["scheduler"] != "none":
            _map_scheduler(config["scheduler"], out)
        if config["checkpoint"] == "save_load":
            out["checkpoint"] = {"save_after_step": out["steps"] - 2}
        else:
            out.pop("checkpoint", None)
        return out

    def from_scenario(self, scenario_json):
        config = super().from_scenario(scenario_json)
        e = scenario_json.get("engine", {})
        param = e.get("param_dtype", "fp32")
        accum = e.get("grad_accum_dtype", param)
        comm = e.get("comm_dtype", param)
        if param == "bf16" and accum == "fp32":
            config["precision"] = "bf16_fp32_master"
        elif param != accum:
            raise Unsupported(f"engine.grad_accum_dtype {accum} with param_dtype {param}: DeepSpeed accumulates "
                              "in the param dtype or, for bf16, in fp32", knob="precision")
        config["communication_data_type"] = "default" if comm == accum else comm
        if comm not in ("fp32", "bf16", accum):
            raise Unsupported(f"engine.comm_dtype {comm}: not a communication_data_type this plugin draws",
                              knob="communication_data_type")
        config["checkpoint"] = "save_load" if scenario_json.get("checkpoint") else "none"
        return config

    def declines_here(self, s, config):
        if s.param_dtype == "fp16" and not _accelerator_has_fp16():
            return Decline("precision", f"{config['precision']}: DeepSpeed's {_device()} accelerator has no fp16")
        return None

    def declines(self, s, config):
        if config["scheduler"] != "none":
            reason = _scheduler_gap(s, config["scheduler"])
            if reason:
                return Decline("scheduler", f"scheduler.type {config['scheduler']}: {reason}")
        if config["reduce_scatter"] and s.stage == 3:
            return Decline("reduce_scatter", "zero_optimization.reduce_scatter at stage 3: DeepSpeed's ZeRO-3 refuses "
                                             "Muon with reduce_scatter")
        if config["reduce_scatter"] and config["offload_optimizer"] != "none" and _refuses_reduce_scatter_offload():
            return Decline("reduce_scatter", "zero_optimization.reduce_scatter with offload_optimizer: this DeepSpeed "
                                             "refuses Muon with both (offload keeps only partition slices)")
        if config["overlap_comm"] and s.stage == 0:
            return Decline("overlap_comm", "zero_optimization.overlap_comm at stage 0: no ZeRO optimizer to overlap")
        if s.checkpoint and s.resumed().dp != s.dp:
            return Decline("checkpoint", f"checkpoint.resume.dp {s.resumed().dp}: another process world")
        try:
            import deepspeed
            _check_all_but_world(s, deepspeed)   # the world this worker has is case.run's to check
        except Unsupported as e:
            return Decline(e.knob or _knob_of(str(e)), str(e))
        return None

    def install_ns_counter(self, counter, scenario):
        if scenario.compile:
            counter.install_at_update_entry()
        else:
            super().install_ns_counter(counter, scenario)

    def details(self, scenario, config):
        import torch._dynamo
        return {"torch_compile": "disabled (TORCH_COMPILE_DISABLE=1)" if torch._dynamo.config.disable else "enabled"}

    def build(self, scenario, model, device):
        return DeepSpeedEngine(scenario, model, device)


def _map_scheduler(name, out):
    """The scenario a config scheduler runs: its rates as a table schedule (schedulers.py); an
    absolute scheduler's one rate for the Muon and the AdamW groups alike."""
    o = out["optimizer"]
    out["steps"] = max(int(out.get("steps", 3)), schedulers.MIN_STEPS.get(name, 0))
    if name in schedulers.ABSOLUTE:
        # the base's Muon rate is R; a base that names none gets R written out
        reference = float(o.setdefault("lr", schedulers.REFERENCE_LR))
        o.setdefault("adam", {})["lr"] = reference
    o["lr_schedule"] = {"shape": "table", "factors": schedulers.factors(name, out["steps"])}


def _scheduler_gap(s, name):
    """Why the scenario cannot run under DeepSpeed's config scheduler `name`, else None."""
    if s.loss_scaler["type"] == "dynamic" or s.overflow:
        return ("DeepSpeed steps a config scheduler only after an applied step, so a skipped step (an overflow "
                "injection, a dynamic loss scaler) does not advance it, while the scenario's schedule counts every "
                "step (docs/semantics.md §5)")
    if any(float(g.get("lr_scale", 1.0)) != 1.0 or "lr_schedule" in g for g in s.groups):
        return ("a group's lr_scale or own lr_schedule: the config scheduler writes the same rate (or ratio) into "
                "every DeepSpeed param group")
    if name in schedulers.ABSOLUTE and float(s.adam["lr"]) != s.lr:
        return (f"optimizer.adam.lr {s.adam['lr']} beside optimizer.lr {s.lr}: {name} writes one absolute rate into "
                "the Muon and the AdamW groups alike")
    return None


def _check_all_but_world(s, deepspeed):
    """engine_config.check_runnable as if this process world had the scenario's dp."""
    import engine_config as ec
    from adapters.common import ranks
    world = ranks.world_size
    ranks.world_size = lambda: s.dp
    try:
        ec.check_runnable(s, deepspeed)
    finally:
        ranks.world_size = world


@functools.lru_cache(maxsize=None)
def _refuses_reduce_scatter_offload():
    """0.19.6's ZeRO-1/2 raise for Muon with reduce_scatter and optimizer offload; 0.19.8 runs them."""
    import inspect
    from deepspeed.runtime.zero import stage_1_and_2
    return "Muon with reduce scatter does not support optimizer offload" in inspect.getsource(stage_1_and_2)


def _device():
    return os.environ.get("MUONCHECK_DEVICE", "cpu")


def _ns_compute_dtype(method):
    """The dtype DeepSpeed's Newton–Schulz runs in on this accelerator: gram in fp16, standard in bf16,
    each in fp32 where the accelerator lacks it (the CPU accelerator has no fp16). Without DeepSpeed
    here (a mapping that runs nothing, e.g. designing a suite) the GPU's choice."""
    try:
        from deepspeed.accelerator import get_accelerator
    except ImportError:
        return "fp16" if method == "gram" else "bf16"
    if method == "gram":
        return "fp16" if get_accelerator().is_fp16_supported() else "fp32"
    return "bf16" if get_accelerator().is_bf16_supported() else "fp32"


def _accelerator_has_fp16():
    from deepspeed.accelerator import get_accelerator
    return bool(get_accelerator().is_fp16_supported())


# The knob a decline of engine_config.check_runnable is counted under, by the field its reason starts with.
_REASON_KNOBS = [("engine.dp", None), ("engine.compile", "compile"), ("grad_accum_dtype", "communication_data_type"),
                 ("engine.offload_optimizer", "offload_optimizer"), ("optimizer.per_head", "per_head"),
                 ("fp16", "precision"), ("a loss scaler", "precision"), ("loss_scaler", "precision"),
                 ("optimizer.clip.mode", "gradient_clipping"), ("overflow", "precision"),
                 ("lr_schedule", "precision"), ("checkpoint", "checkpoint"), ("DeepSpeed's Muon", "muon"),
                 ("scale_rule", "muon")]


def _knob_of(reason):
    return next((knob for prefix, knob in _REASON_KNOBS if reason.startswith(prefix)), None)


def engine_knob_config(s, config):
    """The DeepSpeed config the engine knobs add to engine_config.ds_config(s): the ZeRO switches,
    the config scheduler (its reference rate the scenario's Muon lr, its length the scenario's steps)."""
    out = {}
    if config.get("scheduler", "none") != "none":
        out["scheduler"] = schedulers.config(config["scheduler"], s.steps, s.lr)
    zero = {}
    if config.get("overlap_comm"):
        zero["overlap_comm"] = True
    if config.get("reduce_scatter"):
        zero["reduce_scatter"] = True
    if config.get("round_robin_gradients"):
        zero["round_robin_gradients"] = True
    if zero:
        out["zero_optimization"] = zero
    return out


class DeepSpeedEngine(Engine):
    """One DeepSpeed engine of a scenario (a checkpoint scenario's second one loads the first's save)."""

    def __init__(self, s, model_factory, device):
        import deepspeed
        import engine_config as ec
        import trace_v2
        from gather_timer import GatherTimer
        from adapters.common import ranks
        self.s, self.device, self.ranks = s, device, ranks
        resume = getattr(s, "resume_from", None)
        knobs = getattr(s, "config", {}) or {}
        cfg = ec.merged(ec.ds_config(s), engine_knob_config(s, knobs))
        # a client scheduler replaces the config's: the scenario's own schedule only without one
        self.client_schedule = knobs.get("scheduler", "none") == "none"
        if resume and resume[2]:
            cfg = ec.merged(cfg, {"checkpoint": {"load_universal": True}})
        self.config = cfg = ec.with_swap_folders(cfg, s)
        with deepspeed.zero.Init(config_dict_or_path=cfg, enabled=s.stage == 3 and s.zero_init):
            model = model_factory()
        if s.per_head:
            model.config = ec.head_config(s)
        self.engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=ec.param_groups_for(s, model),
                                                    lr_scheduler=ec.lr_scheduler_for(s, model) if self.client_schedule
                                                    else None, config=cfg)
        if resume:
            self.engine.load_checkpoint(resume[2] or resume[0], tag=resume[1], load_optimizer_states=True,
                                        load_lr_scheduler_states=True)
        self.named = list(self.engine.module.named_parameters())
        self._tags = [{"name": n, "use_muon": bool(getattr(p, "use_muon", False)),
                       "num_heads": int(getattr(p, "muon_num_heads", None) or 0)} for n, p in self.named]
        self.gathers = GatherTimer(ranks.world_size(), self._synchronize)
        self.gathers.install()
        self.recorder = trace_v2.CollectiveRecorder()
        self.trace_v2 = trace_v2
        self.lrs, self.t, self.skipped_before = [], 0, 0

    def _synchronize(self):
        import torch
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def named_parameters(self):
        return self.named

    def tags(self):
        return [dict(t) for t in self._tags]

    def collectives(self):
        return self.recorder

    def start_step(self, t):
        self.t = t
        self.skipped_before = int(getattr(self.engine, "skipped_steps", 0))
        self.lrs.append({str(g.get("name", i)): float(g["lr"]) for i, g in enumerate(self.engine.optimizer.param_groups)})

    def micro_step(self, batch, k, boundary):
        engine, rec = self.engine, self.recorder
        rec.phase = "micro_step"
        loss = engine(batch)
        rec.in_backward = True
        engine.backward(loss)
        rec.in_backward = False
        rec.in_step, rec.phase = True, "boundary" if boundary else "micro_step"
        # the client LambdaLR steps after each applied step; indexing it by t keeps a skipped step
        # counted. A config scheduler takes no `epoch` (the engine's TypeError fallback would step
        # it to iteration train_batch_size): it steps by one, as DeepSpeed drives it.
        client = self.client_schedule and engine.lr_scheduler is not None
        engine.step(lr_kwargs={"epoch": self.t + 1} if client else None)
        rec.in_step, rec.phase = False, "micro_step"
        return float(loss.detach().float())

    def step(self, t):
        return int(getattr(self.engine, "skipped_steps", 0)) > self.skipped_before

    def read_state(self):
        from state_readback import read_state
        return read_state(self.engine, self.named, self._tags)

    def loss_scale(self):
        from state_readback import loss_scale
        return loss_scale(self.engine)

    def digest(self, scale, skipped):
        return self.trace_v2.replicated_digest(self.engine, self.named, scale, skipped)

    def scaler_counters(self):
        return self.trace_v2.scaler_counters(self.engine)

    def save_checkpoint(self, folder, tag):
        import checkpoint_cycle
        k = int(tag[len("step"):])
        convert = self.s.resumed().stage != self.s.stage
        tag, universal = checkpoint_cycle.save(self, folder, k, convert=convert)
        return (folder, tag, universal)

    def details(self):
        out = {"muon_gathers_by_rank": self.ranks.gather_to_rank0(self.gathers.summary()), "lr_by_group": self.lrs,
               "deepspeed_config": self.config}
        if self.s.per_head:
            import engine_config as ec
            out["head_config"] = vars(ec.head_config(self.s))
        return out

    def close(self):
        self.gathers.uninstall()
        if hasattr(self.engine, "destroy"):   # DeepSpeed's own teardown (releases the Muon gather caches)
            self.engine.destroy()
        self.engine = None
