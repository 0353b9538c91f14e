"""The training loop muoncheck runs for an engine plugin (adapters/plugin.py, EnginePlugin): the
plugin builds its engine around the scenario's model; muoncheck feeds each rank its SPEC samples
micro-step by micro-step, injects the scenario's overflows, counts NS calls (the plugin's
`ns_functions`), records collectives (the engine's own recorder where it has one, else every
collective torch dispatches), reads the state back after every step (the engine's `read_state`,
else its optimizer states through the plugin's `state_keys`), digests each rank's replicated
state, and runs a checkpoint scenario's save / rebuild / load cycle.
"""
import hashlib
import os
import shutil
import struct
import tempfile
import time

import torch

from .common import optimizer_trace, ranks, state_fields
from .common import trace as trace_doc
from .common.collectives import CollectiveRecorder
from .common.model import ScenarioModel, make_batch
from .common.ns_counter import NsCounter
from .plugin import PluginError, Unsupported

_TORCH_DTYPE = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
_DTYPE_NAME = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def install_injections(s, named, clock):
    """Overflow injections as gradient hooks: element `index` of the param's gradient becomes inf/nan."""
    handles = []
    for inj in s.overflow:
        if inj["rank"] >= ranks.world_size():
            raise Unsupported(f"overflow injection on rank {inj['rank']} at dp {ranks.world_size()}")
        if inj["rank"] != ranks.rank():
            continue
        index = [i for i, (n, _) in enumerate(named) if n == inj["param"]][0]
        value = float("inf") if inj["value"] == "inf" else float("nan")

        def hook(grad, inj=inj, value=value):
            if (clock["step"], clock["micro_step"]) != (inj["step"], inj["micro_step"]):
                return grad
            grad = grad.clone()
            grad.view(-1)[int(inj["index"])] = value
            return grad

        handles.append(named[index][1].register_hook(hook))
    return handles


class _DispatchRecorder:
    """The project's recorder (common/collectives.py) behind the engine-recorder interface."""

    def __init__(self, counter):
        self.where = "train"
        self.exporting = False

        def purpose(kind, elements):
            if self.exporting:
                return "state_export"
            if counter.inside > 0:
                return "ns_internal"
            if self.where == "train":
                return "param_gather" if kind in ("all_gather", "gather") else "grad_reduce"
            return "scalar" if elements <= 1 else ("weight_sync" if kind == "all_gather" else "grad_reduce")

        self.mode = CollectiveRecorder(purpose)

    log = property(lambda self: self.mode.log)
    step = property(lambda self: self.mode.step, lambda self, v: setattr(self.mode, "step", v))
    phase = property(lambda self: self.mode.phase, lambda self, v: setattr(self.mode, "phase", v))

    def install(self):
        pass

    def uninstall(self):
        pass

    def active(self):
        return self.mode


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Leg:
    """One engine over a range of steps (a checkpoint scenario has two) with its watchers."""

    def __init__(self, plugin, s, device, previous=None):
        self.s, self.device, self.plugin = s, device, plugin
        made = []   # seconds building the scenario's model: ours, not the engine's

        def model():
            begin = time.perf_counter()
            m = ScenarioModel(s)
            made.append(time.perf_counter() - begin)
            return m
        begin = time.perf_counter()
        self.engine = plugin.build(s, model, device)
        self.setup_seconds = time.perf_counter() - begin - sum(made)   # the engine's own construction
        named = list(self.engine.named_parameters())
        if sorted(n for n, _ in named) != sorted(p.name for p in s.params):
            raise PluginError(f"plugin {plugin.name!r}: build(): the engine's parameter names differ from the scenario's")
        self.named = named
        self.tags = self.engine.tags() or [{"name": n, "use_muon": ps.use_muon, "num_heads": 0}
                                           for n, ps in zip((n for n, _ in named), self._scenario_order())]
        self.counter = NsCounter(named, muon=[i for i, t in enumerate(self.tags) if t.get("use_muon")])
        plugin.install_ns_counter(self.counter, s)
        own = self.engine.collectives()
        self.recorder = own if own is not None else _DispatchRecorder(self.counter)
        self.recorder.install()
        self.clock = {"step": 0, "micro_step": 0}
        self.hooks = install_injections(s, named, self.clock)
        self.step_seconds, self.calls_by_rank, self.digests = [], [], []
        self.ns_counts = []      # this rank's NS calls per step of this leg, gathered by close()
        self.losses = []         # this rank's mean micro-batch loss per step of this leg, gathered by close()
        self.awaiting = []       # rank 0's step records of this leg, their loss and NS fields filled by close()
        if previous is not None:
            self.step_seconds, self.calls_by_rank = list(previous.step_seconds), list(previous.calls_by_rank)
            self.digests = list(previous.digests)
            self.recorder.log[:0] = previous.recorder.log
            self.counter.heads.update(previous.counter.heads)
            self.counter.dtypes |= previous.counter.dtypes
        self.summary = None

    def _scenario_order(self):
        by_name = {p.name: p for p in self.s.params}
        return [by_name[n] for n, _ in self.named]

    def _mode(self):
        return self.recorder.active() if hasattr(self.recorder, "active") else _Nothing()

    def read_state(self):
        self.recorder.exporting = True
        try:
            with self._mode():
                state = self.engine.read_state()
            if state is None and ranks.rank() == 0:   # raised at the next settle, after the read-back's own error
                ranks.defer(PluginError(f"plugin {self.plugin.name!r}: the engine's read_state() returned nothing"))
            return state
        finally:
            self.recorder.exporting = False

    def train(self, first, last):
        s, engine, device, recorder = self.s, self.engine, self.device, self.recorder
        dtype = _TORCH_DTYPE[s.param_dtype]
        steps = []
        for t in range(first, last):
            self.clock["step"] = recorder.step = t
            self.counter.reset_step()
            scale = engine.loss_scale()
            engine.start_step(t)
            losses = []
            ranks.settle(device)   # the ranks aligned before the step's clock starts; the last read-back's verdict
            if device.type == "cuda":
                torch.cuda.synchronize()
            begin = time.perf_counter()
            skipped = False
            for k in range(s.gas):
                self.clock["micro_step"] = k
                recorder.phase = "boundary" if k == s.gas - 1 else "micro_step"
                if isinstance(recorder, _DispatchRecorder):
                    recorder.where = "train"
                with self._mode():
                    losses.append(float(engine.micro_step(make_batch(s, t, k, device, dtype), k, k == s.gas - 1)))
            if isinstance(recorder, _DispatchRecorder):
                recorder.where = "step"
            recorder.phase = "boundary"
            with self._mode():
                skipped = bool(engine.step(t))
            if device.type == "cuda":
                torch.cuda.synchronize()
            self.step_seconds.append(time.perf_counter() - begin)
            self.ns_counts.append([self.counter.calls.get(i, 0) for i in range(len(self.named))] + [self.counter.unattributed])
            self.losses.append(sum(losses) / len(losses))
            state = self.read_state()
            after = engine.loss_scale()
            self.digests.append(engine.digest(after, skipped) or self._digest(after, skipped))
            counters = engine.scaler_counters()
            if ranks.rank() != 0:
                continue
            steps.append({"step": t, "skipped": skipped, "loss": None, "loss_scale": scale, "loss_scale_after": after,
                          "ns_calls": None, "ns_unattributed": None, "ns_events": None,
                          "params": state, **({"scaler": counters} if counters else {})})
        ranks.settle(device)
        self.awaiting += steps
        return steps

    def _fill_gathered_fields(self, counts, losses):
        """The loss and NS fields of this leg's step records (rank 0), from each rank's NS calls per
        step (`counts`: per param, then the unattributed ones) and its loss per step (the step's loss
        is their mean over the ranks). Gathered once at close rather than after every step, as each
        gather is a synchronisation of the ranks."""
        for record, per_rank, loss_per_rank in zip(self.awaiting, zip(*counts), zip(*losses)):
            record["loss"] = sum(loss_per_rank) / len(loss_per_rank)
            per_rank = [list(r) for r in per_rank]
            self.calls_by_rank.append(per_rank)
            record.update({"ns_calls": [sum(r[i] for r in per_rank) for i in range(len(self.named))],
                           "ns_unattributed": sum(r[-1] for r in per_rank),
                           "ns_events": self._ns_events(per_rank)})
        self.awaiting = []

    def _ns_events(self, per_rank):
        """Each rank's calls as events, so that a call replicated on two ranks is told from one
        rank's second call; a call's head count is its param's tag (the counter sees no argument)."""
        events = optimizer_trace.ns_events(per_rank)
        for e in events:
            if e["param"] >= 0:
                e["heads"] = int(self.tags[e["param"]].get("num_heads") or 0)
        return events

    def _digest(self, scale, skipped):
        h = hashlib.blake2b(digest_size=8)
        if self.s.stage < 3:
            for _, p in self.named:
                h.update(p.detach().contiguous().view(torch.uint8).cpu().numpy().tobytes())
        h.update(struct.pack("<d?", float(scale), bool(skipped)))
        return h.hexdigest()

    def _gathered_summary(self):
        """Each rank's heads and dtypes NS saw, its NS calls and losses per step of this leg and its /2 block
        (tags, collectives, digests), as lists over the ranks on rank 0 (None elsewhere): one gather
        rather than one per part, as each is a synchronisation of the ranks."""
        mine = {"heads": dict(self.counter.heads), "dtypes": sorted(self.counter.dtypes), "ns_counts": self.ns_counts,
                "losses": self.losses, "ranks": {"tags": [dict(t) for t in self.tags], "collectives": self.recorder.log,
                          "digests": self.digests}}
        every = ranks.gather_to_rank0(mine)
        return {part: [r[part] for r in every] if every is not None else None for part in mine}

    def close(self):
        """Uninstalls the watchers, tears the engine down; the summaries on rank 0. Collective; once."""
        if self.engine is None:
            return self.summary
        self.recorder.uninstall()
        self.counter.uninstall()
        for h in self.hooks:
            h.remove()
        details = self.engine.details() or {}
        summary = self._gathered_summary()
        summary["details"] = details
        counts, losses = summary.pop("ns_counts"), summary.pop("losses")
        if counts is not None:
            self._fill_gathered_fields(counts, losses)
        begin = time.perf_counter()
        self.engine.close()
        self.setup_seconds += time.perf_counter() - begin   # and its teardown
        self.engine = None
        self.summary = summary if ranks.rank() == 0 else None
        return self.summary


def _checkpoint_root(s, device):
    base = os.environ.get("MUONCHECK_CHECKPOINTS")
    if ranks.rank() == 0:
        root = os.path.join(base, s.name) if base else tempfile.mkdtemp(prefix=f"muoncheck-ckpt-{s.name}-")
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
    else:
        root = None
    if ranks.world_size() > 1:   # rank 0 decides; every rank needs the path
        import torch.distributed as dist
        out = [root]
        dist.broadcast_object_list(out, src=0)
        root = out[0]
    return root


def run(plugin, s, details, device):
    """The trace body on rank 0 (None elsewhere). Raises Unsupported, PluginError or the engine's error."""
    if s.dp != ranks.world_size():
        raise Unsupported(f"engine.dp {s.dp}: this worker has {ranks.world_size()} process(es)")
    if s.checkpoint and s.resumed().dp != s.dp:
        raise Unsupported(f"checkpoint.resume.dp {s.resumed().dp}: a resume at another dp needs another process "
                          "world; the resident worker has one")
    s.resume_from = None
    with ranks.deferred_verdicts():
        return _run_legs(plugin, s, details, device)


def _run_legs(plugin, s, details, device):
    leg = Leg(plugin, s, device)
    setup = 0.0
    cycle = None
    try:
        with ranks.raised_noted():   # before close()'s collectives, which a rank that raised alone would hang in
            initial = leg.read_state()
            if s.checkpoint:
                k = int(s.checkpoint["save_after_step"])
                steps = leg.train(0, k + 1)
                root = _checkpoint_root(s, device)
                begin = time.perf_counter()
                saved = leg.engine.save_checkpoint(root, f"step{k}")
                setup += time.perf_counter() - begin   # the implementation's own save, as its load is in the next build
                leg.close()
                setup += leg.setup_seconds
                after = s.resumed()
                after.config, after.resume_from = getattr(s, "config", {}), saved
                previous, leg = leg, None
                leg = Leg(plugin, after, device, previous)
                steps += leg.train(k + 1, s.steps)
                cycle = {"saved_after_step": k, "resumed_dp": after.dp, "resumed_stage": after.stage}
            else:
                steps = leg.train(0, s.steps)
    finally:
        summary = leg.close() if leg is not None else None
        setup += leg.setup_seconds if leg is not None else 0.0
    if ranks.rank() != 0:
        return None
    tags = leg.tags
    ns_dtype = sorted({d for ds in summary["dtypes"] for d in ds})
    for heads in summary["heads"]:
        for i, h in heads.items():
            tags[i]["ns_heads_seen"] = h
    details.update({"world_size": ranks.world_size(), "step_seconds": [round(x, 6) for x in leg.step_seconds],
                    "engine_setup_seconds": round(setup, 6),
                    "ns_calls_by_rank": [[r[:-1] for r in step] for step in leg.calls_by_rank]})
    details.update(summary["details"])
    if cycle:
        details["checkpoint"] = cycle
    dtypes = {"param": s.param_dtype, "grad_accum": s.grad_accum_dtype, "comm": s.comm_dtype, "master": "fp32",
              "ns": _DTYPE_NAME.get(ns_dtype[0], ns_dtype[0]) if len(ns_dtype) == 1 else s.ns_dtype}
    as_values = lambda st: [{k: trace_doc.tensor_values(v) if torch.is_tensor(v) else v for k, v in e.items()}   # noqa: E731
                            for e in st]
    steps = [dict(x, params=as_values(x["params"])) for x in steps]
    initial = as_values(initial)
    state_fields.exported_alike(initial, steps)
    return {"dtypes": dtypes, "tags": tags, "initial": initial, "steps": steps, "ranks": summary["ranks"]}
