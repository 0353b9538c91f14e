"""The muoncheck-trace/2 fields the torch adapter adds (docs/trace-format.md): every rank's
collective log with each collective's purpose, digests of each rank's replicated state, the NS
calls as events with the rank that made them, and the step's reduced gradient.

Purposes, from where the collective ran (the adapter knows; torch does not say):
- forward/backward: an all-gather is a `param_gather` (FSDP2 unsharding params), every reduction a
  `grad_reduce` (FSDP2's reduce-scatter, DDP's buckets), also of one element: a model of one 1×1
  weight has a one-element bucket;
- clipping (the loop's clip_grad_norm_, `where() == "clip"`): every collective is a `scalar` (norms;
  under FSDP2 the vector of per-parameter norms is reduced whole);
- the optimizer step (Muon, AdamW): inside torch's NS function (the NS counter's depth)
  an `ns_internal` (FSDP2: DTensor's partial products and redistributions of the NS iterate, in
  the NS dtype; with `ns_scalars` — a plugin whose NS normalizes in fp32 before casting — an
  fp32 one-element reduction there is a `scalar`, the norm, and an fp32 all-gather a `muon_gather`,
  the NS input gathered before the cast, in the comm dtype); outside it a one-element reduction is a
  `scalar` (norms); an all-gather, under DDP a `muon_exchange` (an optimizer that splits its
  parameters over ranks gathers the weights it stepped, fp32 masters with the NS result applied
  unrounded: muon-optimizer's Muon, pytorch-optimizer's DistributedMuon), under FSDP2 (`sharded`) a `muon_gather` (an optimizer gathering a sharded
  update whole before its NS: pytorch-optimizer's Muon, DTensor.full_tensor()); any other
  collective a `grad_reduce` (none is expected: AdamW and Muon's momentum work on local shards).
Phases: every micro-step but the last is `micro_step`; the last one (its backward syncs the
gradients) and the optimizer step are `boundary`.

Replicated state (the digest, 16 hex digits of sha256): under DDP each rank's whole local state —
module params, fp32 masters, every optimizer state tensor; under FSDP2 params, gradients and
optimizer state are shards, so only what FSDP2 leaves whole: the optimizers' non-DTensor state
(AdamW's step counts) and the groups' lr. Never a gathered tensor: gathering makes ranks agree by
construction. Only the state of parameters every rank holds state for (`held`): an optimizer that
splits its parameters over ranks (muon-optimizer's Muon, pytorch-optimizer's DistributedMuon) keeps a
parameter's momentum on the rank that stepped it alone — not replicated state; the trace reads it
there (adapters/optimizer_loop.py's read_state).
"""
import hashlib
import struct

import torch

from . import ranks


def classify(counter, where, ns_scalars=False, sharded=False, ns_dtype=None):
    """The recorder's purpose function: `where()` is "train" or "step"; `counter` is the NsCounter;
    `ns_dtype` the scenario's ("bf16", ...): with `ns_scalars`, an all-gather inside NS in another
    dtype is the NS input gathered before its cast (a `muon_gather`, due in the comm dtype), not the
    iterate (pytorch-optimizer's gram path normalizes in fp32 and casts to fp16 after the gather)."""
    def purpose(kind, elements, dtype=None):
        if where() == "train":
            return "param_gather" if kind == "all_gather" else "grad_reduce"
        if where() == "clip":   # the loop's clip_grad_norm_: norms
            return "scalar"
        if counter.inside > 0:
            if ns_scalars and dtype == "fp32":   # its fp32 normalization: the norm, or the input gathered before the cast
                return "scalar" if elements <= 1 else ("muon_gather" if kind == "all_gather" else "ns_internal")
            if ns_scalars and kind == "all_gather" and elements > 1 and ns_dtype and dtype and dtype != ns_dtype:
                return "muon_gather"
            return "ns_internal"
        if elements <= 1:
            return "scalar"
        if kind == "all_gather":
            return "muon_gather" if sharded else "muon_exchange"
        return "grad_reduce"
    purpose.wants_dtype = True
    return purpose


def _is_dtensor(t):
    return hasattr(t, "full_tensor")


def held_everywhere(params, opts):
    """{id(param)} of the params every rank holds optimizer state for (one collective)."""
    have = [any(len(o.state.get(p, {})) > 0 for o in opts) for p in params]
    return {id(p) for p, all_have in zip(params, ranks.all_ranks_true(have)) if all_have}


def replicated_digest(par, opts, held=None):
    """This rank's digest of what DDP/FSDP2 keep alike on every rank after a step (see above);
    `held`: the params whose optimizer state is digested (None: every one)."""
    h = hashlib.sha256()

    def add(t):
        if torch.is_tensor(t) and not _is_dtensor(t):
            h.update(t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())

    if par.mode == "ddp":
        for p in par.module_params:
            add(p)
        for m in par.masters or []:
            add(m)
    for opt in opts:
        for g in opt.param_groups:
            h.update(struct.pack("<d", float(g["lr"])))
            for p in g["params"]:
                if held is not None and id(p) not in held:
                    continue
                for key in sorted(opt.state.get(p, {})):
                    add(opt.state[p][key])
    h.update(struct.pack("<d?", 1.0, False))   # the loss scale and skip flag: torch has no scaler, never skips
    return h.hexdigest()[:16]


def ns_events(ns_by_rank):
    """[{param, rank, heads}] from each rank's per-param NS counts and its unattributed count."""
    out = []
    for r, counts in enumerate(ns_by_rank):
        for i, n in enumerate(counts[:-1]):
            out += [{"param": i, "rank": r, "heads": 0}] * n
        out += [{"param": -1, "rank": r, "heads": 0}] * counts[-1]
    return out


def rank_blocks(tags, recorder, digests):
    """The trace's "ranks" on rank 0 (None elsewhere). Collective: every rank calls it."""
    return ranks.gather_to_rank0({"tags": tags, "collectives": recorder.log, "digests": digests})
