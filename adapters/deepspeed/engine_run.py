"""One DeepSpeed engine built from a scenario, with everything that watches it: the NS counter, the
Muon gather timer, the /2 collective recorder (trace_v2.py) and the overflow injections.
`Run.train(first, last)` runs a range of steps and returns their records; a checkpoint cycle
(checkpoint_cycle.py) builds a second Run that loads the first one's checkpoint and continues it.
"""
import time

import torch

from adapters.common import ranks
from adapters.common.model import ScenarioModel, make_batch
from adapters.common.ns_counter import NsCounter
from engine_config import (Unsupported, ds_config, head_config, lr_scheduler_for, merged, param_groups_for,
                           with_swap_folders)
from gather_timer import GatherTimer
from state_readback import loss_scale, read_state
import trace_v2

_TORCH_DTYPE = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


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


class Run:
    """The engine of scenario `s` on `device`. With `load_from` (folder, tag), the engine loads
    that checkpoint (optimizer and scheduler states) before anything is recorded."""

    def __init__(self, s, deepspeed, extra_config, device, load_from=None):
        self.s, self.device = s, device
        cfg = with_swap_folders(merged(ds_config(s), extra_config), s)
        with deepspeed.zero.Init(config_dict_or_path=cfg, enabled=s.stage == 3 and s.zero_init):
            model = ScenarioModel(s)
        if s.per_head:
            model.config = head_config(s)
        self.engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=param_groups_for(s, model),
                                                    lr_scheduler=lr_scheduler_for(s, model), config=cfg)
        self.summary = None
        if load_from:
            self.engine.load_checkpoint(load_from[0], tag=load_from[1], load_optimizer_states=True,
                                        load_lr_scheduler_states=True)
        self.named = list(self.engine.module.named_parameters())   # the trace lists params in this order
        if sorted(n for n, _ in self.named) != sorted(p.name for p in s.params):
            raise RuntimeError("the module's parameter names differ from the scenario's")
        self.tags = [{"name": n, "use_muon": bool(getattr(p, "use_muon", False)),
                      "num_heads": int(getattr(p, "muon_num_heads", None) or 0)} for n, p in self.named]
        self.counter = NsCounter(self.named, muon=[i for i, t in enumerate(self.tags) if t["use_muon"]])
        if s.compile:
            self.counter.install_at_update_entry()
        else:
            self.counter.install()
        self.gathers = GatherTimer(ranks.world_size(), self._synchronize)
        self.gathers.install()
        self.recorder = trace_v2.CollectiveRecorder()   # /2: collectives, digests, scaler counters
        self.recorder.install()
        self.clock = {"step": 0, "micro_step": 0}
        self.hooks = install_injections(s, self.named, self.clock)
        self.step_seconds, self.calls_by_rank, self.digests = [], [], []
        self.lrs = []   # per step, the rate of each DeepSpeed param group as the step starts

    def continues(self, previous):
        """This run goes on where `previous` (torn down after its checkpoint) stopped: its step
        times, rates, NS calls, heads and dtypes seen, collectives and digests come first."""
        self.step_seconds, self.lrs = list(previous.step_seconds), list(previous.lrs)
        self.calls_by_rank, self.digests = list(previous.calls_by_rank), list(previous.digests)
        self.recorder.log = list(previous.recorder.log)
        self.counter.heads.update(previous.counter.heads)
        self.counter.dtypes |= previous.counter.dtypes

    def _synchronize(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def read_state(self):
        """The state now (rank 0; None elsewhere); a collective DeepSpeed issues inside it is
        recorded as state_export (the read-back's own gather is torch.distributed's, not logged)."""
        self.recorder.exporting = True
        try:
            return read_state(self.engine, self.named, self.tags)
        finally:
            self.recorder.exporting = False

    def train(self, first, last):
        """Steps first..last-1; the step records on rank 0 (an empty list elsewhere)."""
        s, engine, device, recorder = self.s, self.engine, self.device, self.recorder
        dtype = _TORCH_DTYPE[s.param_dtype]
        steps = []
        for t in range(first, last):
            self.clock["step"] = recorder.step = t
            self.counter.reset_step()
            scale = loss_scale(engine)
            self.lrs.append({str(g.get("name", i)): float(g["lr"]) for i, g in enumerate(engine.optimizer.param_groups)})
            skipped_before = int(getattr(engine, "skipped_steps", 0))
            losses = []
            ranks.barrier(device)
            self._synchronize()
            begin = time.perf_counter()
            for k in range(s.gas):
                self.clock["micro_step"] = k
                loss = engine(make_batch(s, t, k, device, dtype))
                losses.append(float(loss.detach().float()))
                recorder.in_backward = True
                engine.backward(loss)
                recorder.in_backward = False
                recorder.in_step, recorder.phase = True, "boundary" if k == s.gas - 1 else "micro_step"
                # a scheduler steps after each applied step; indexing it by t keeps a skipped step counted
                engine.step(lr_kwargs={"epoch": t + 1} if engine.lr_scheduler is not None else None)
                recorder.in_step, recorder.phase = False, "micro_step"
            self._synchronize()
            self.step_seconds.append(time.perf_counter() - begin)
            skipped = int(getattr(engine, "skipped_steps", 0)) > skipped_before
            mine = [self.counter.calls.get(i, 0) for i in range(len(self.named))] + [self.counter.unattributed]
            per_rank = ranks.gather_to_rank0(mine)
            loss = ranks.mean_over_ranks(sum(losses) / len(losses), device)
            state = self.read_state()
            self.digests.append(trace_v2.replicated_digest(engine, self.named, loss_scale(engine), skipped))
            counters = trace_v2.scaler_counters(engine)
            if per_rank is None:
                continue
            self.calls_by_rank.append(per_rank)
            steps.append({"step": t, "skipped": skipped, "loss": loss, "loss_scale": scale,
                          "loss_scale_after": loss_scale(engine),
                          "ns_calls": [sum(r[i] for r in per_rank) for i in range(len(self.named))],
                          "ns_unattributed": sum(r[-1] for r in per_rank),
                          "params": state, **({"scaler": counters} if counters else {})})
        return steps

    def close(self):
        """Uninstalls the watchers and tears the engine down; the summaries on rank 0 (None
        elsewhere): heads and dtypes NS saw, Muon gathers, the /2 per-rank blocks. Collective; once."""
        if self.engine is None:
            return self.summary
        # in the reverse order of install: the recorder wraps the gather timer's wrappers of the same
        # deepspeed.comm functions, so undoing the timer first would leave one more timer per run
        # (a resident worker's ZeRO-3 gathers then nest a thousand deep: RecursionError)
        self.recorder.uninstall()
        self.gathers.uninstall()
        self.counter.uninstall()
        for h in self.hooks:
            h.remove()
        summary = {"heads": ranks.gather_to_rank0(dict(self.counter.heads)),
                   "dtypes": ranks.gather_to_rank0(sorted(self.counter.dtypes)),
                   "gathers": ranks.gather_to_rank0(self.gathers.summary()),
                   "ranks": trace_v2.rank_blocks([dict(t) for t in self.tags], self.recorder, self.digests)}
        if hasattr(self.engine, "destroy"):   # DeepSpeed's own teardown (releases the Muon gather caches)
            self.engine.destroy()
        self.engine = None
        self.summary = summary if ranks.rank() == 0 else None
        return self.summary
