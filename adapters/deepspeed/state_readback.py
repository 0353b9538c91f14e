"""DeepSpeed's training state read back after a step, for the trace: the fp32 master weights, the
Muon momentum and the Adam moments where DeepSpeed exposes them, and the loss scale. Every read is
collective (all ranks call DeepSpeed's full-tensor getters in the same order); rank 0 keeps the
values.
"""
import torch

from adapters.common import ranks
from adapters.common.trace import tensor_values


def loss_scale(engine):
    opt = engine.optimizer
    for attr in ("cur_scale", "loss_scale"):
        value = getattr(opt, attr, None)
        if isinstance(value, (int, float)) or torch.is_tensor(value):
            return float(value)
    scaler = getattr(opt, "loss_scaler", None)
    return float(getattr(scaler, "cur_scale", 1.0)) if scaler is not None else 1.0


def _flat_momenta_12(engine, named):
    """ZeRO-1/2 keep Muon momentum as one flat buffer per group. {param index: [(start, values)]}:
    the fragments of each Muon param's momentum this rank holds, `start` its first element."""
    opt = engine.optimizer
    index_of = {id(p): i for i, (_, p) in enumerate(named)}
    out = {}
    if getattr(opt, "cpu_offload", False):
        _offloaded_fragments(opt, index_of, out)
        return out
    # on the device: laid out like the params of this rank's partition, whole params (a
    # straddling one included)
    for gi, group in enumerate(getattr(opt, "params_in_partition", None) or []):
        flat = opt.optimizer.param_groups[gi]["params"][0]
        buf = opt.optimizer.state.get(flat, {}).get("momentum_buffer")
        offset = 0
        for q in group:
            if buf is not None and id(q) in index_of and getattr(q, "use_muon", False):
                out.setdefault(index_of[id(q)], []).append((0, buf.narrow(0, offset, q.numel()).detach().float().cpu().clone()))
            offset += q.numel()
    return out


def _offloaded_fragments(opt, index_of, out):
    """With optimizer offload the buffer is laid out like this rank's fp32 partition: a param that
    straddles two partitions has a fragment on each (stage_1_and_2.py, _apply_muon_updates_cpu_offload)."""
    import torch.distributed as dist
    for gi, group in enumerate(opt.round_robin_bit16_groups):
        flat = opt.single_partition_of_fp32_groups[gi]
        buf = opt.optimizer.state.get(flat, {}).get("momentum_buffer")
        if buf is None:
            continue
        rank = dist.get_rank(group=opt.real_dp_process_group[gi])
        size = int(opt.partition_size[gi])
        for q in group:
            pid = opt.get_param_id(q)
            if id(q) not in index_of or not getattr(q, "use_muon", False) or rank not in opt.param_to_partition_ids[gi][pid]:
                continue
            start = int(opt.grad_start_offset[gi][rank][pid])
            dest = int(opt.grad_partition_insertion_offset[gi][rank][pid])
            n = int(min(q.numel() - start, size - dest))
            if n > 0:
                out.setdefault(index_of[id(q)], []).append((start, buf.narrow(0, dest, n).detach().float().cpu().clone()))


def _muon_momenta_12(engine, named):
    """Every Muon param's momentum at ZeRO-1/2, assembled on rank 0 from the fragments the ranks
    hold. Where two ranks hold the same element (a full copy of a straddling param on each) they
    must agree: a disagreement is raised, never averaged away; so is an element no rank holds.
    Raised on every rank (the check runs on rank 0; the others would otherwise go on into the next
    collective alone and hang)."""
    gathered = ranks.gather_to_rank0(_flat_momenta_12(engine, named))
    result, error = None, None
    if gathered is not None:
        try:
            result = _join_momenta(named, gathered)
        except RuntimeError as e:
            error = e
    ranks.raise_together(error)
    return result


def _join_momenta(named, gathered):
    full, owner = {}, {}
    for r, fragments in enumerate(gathered):
        for i, parts in fragments.items():
            p = named[i][1]
            if i not in full:
                full[i] = torch.zeros(p.numel(), dtype=torch.float32)
                owner[i] = torch.full((p.numel(),), -1, dtype=torch.int64)
            for start, values in parts:
                span = slice(start, start + values.numel())
                held = owner[i][span] >= 0
                if held.any() and not torch.equal(torch.nan_to_num(full[i][span][held], 1.0, 2.0, 3.0),
                                                  torch.nan_to_num(values[held], 1.0, 2.0, 3.0)):
                    raise RuntimeError(f"{named[i][0]}: Muon momentum differs between ranks "
                                       f"{int(owner[i][span][held][0])} and {r}")
                full[i][span] = values
                owner[i][span] = r
    missing = [named[i][0] for i in full if (owner[i] < 0).any()]
    if missing:
        raise RuntimeError(f"{', '.join(missing)}: part of the Muon momentum is held by no rank")
    return {i: full[i].view(named[i][1].shape) for i in full}


def _stage0_masters(engine):
    """Stage 0 with fp16 or bf16 params: FP16_UnfusedOptimizer (the wrapper DeepSpeed puts around
    any optimizer but FusedAdam) steps fp32 copies of the params, `fp32_groups` beside
    `fp16_groups`; its inner optimizer's state is keyed by those copies. {id(param): fp32 copy}."""
    opt = engine.optimizer
    low, high = getattr(opt, "fp16_groups", None), getattr(opt, "fp32_groups", None)
    if not low or not high:
        return {}
    return {id(lp): hp for lg, hg in zip(low, high) for lp, hp in zip(lg, hg)
            if torch.is_tensor(hp) and hp.shape == lp.shape}


def _state_keys(tag):
    return [("momentum_buffer", "momentum")] if tag["use_muon"] else [("exp_avg", "adam_m"), ("exp_avg_sq", "adam_v")]


def _lookup_fails_here(p, key):
    """Whether DeepSpeed's ZeRO-1/2 / BF16_Optimizer getter would raise on this rank before its
    collective: this rank holds a fragment of p but no `key` state for it (yet). A rank holding no
    fragment goes straight to the all-reduce, so the ranks would fall out of step (a param wholly in
    another rank's partition, e.g. before the first step creates the state)."""
    mapping = getattr(p, "_hp_mapping", None)
    if hasattr(p, "ds_id") or mapping is None:
        return False
    try:
        mapping.get_optim_state_fragment(key)
        return False
    except Exception:
        return True


def _readable_everywhere(named, tags, skip_momentum):
    """{(param index, state key): no rank's getter raises before the collective}; one collective."""
    pairs = [(i, key) for i, tag in enumerate(tags) for key, _ in _state_keys(tag)
             if not (skip_momentum and key == "momentum_buffer")]
    ok = ranks.all_ranks_true([not _lookup_fails_here(named[i][1], key) for i, key in pairs])
    return dict(zip(pairs, ok))


def read_state(engine, named, tags):
    """The state after a step, on rank 0 (None elsewhere). Collective: every rank calls it."""
    from deepspeed.utils import safe_get_full_fp32_param, safe_get_full_optimizer_state
    stage = engine.zero_optimization_stage()
    # BF16_Optimizer (ZeRO-1 with fp32 accumulation) keeps momentum in its flat fp32 state, mapped
    # per param like the Adam moments: the collective getter reads it
    flat_12 = stage in (1, 2) and type(engine.optimizer).__name__ != "BF16_Optimizer"
    momenta_12 = _muon_momenta_12(engine, named) if flat_12 else None
    masters = _stage0_masters(engine) if stage == 0 else {}
    inner = getattr(engine.optimizer, "optimizer", engine.optimizer) if masters else engine.optimizer
    keep = ranks.rank() == 0
    values = tensor_values if keep else (lambda t: None)
    readable = _readable_everywhere(named, tags, skip_momentum=flat_12) if stage > 0 else {}   # collective; read past stage 0 only
    out = []
    for i, ((name, p), tag) in enumerate(zip(named, tags)):
        # stage 0: the param itself, or its fp32 copy where a 16-bit wrapper steps one
        weight = safe_get_full_fp32_param(p) if stage > 0 else masters.get(id(p), p)
        entry = {"weight": values(weight if weight is not None else p)}
        for key, field in _state_keys(tag):
            value = None
            if stage == 0:
                value = inner.state.get(masters.get(id(p), p), {}).get(key) if hasattr(inner, "state") else None
            elif key == "momentum_buffer" and flat_12:
                value = (momenta_12 or {}).get(i)
            elif readable[(i, key)]:   # collective; a state not created yet (before step 0) or
                #   not mapped (DeepSpeed raises "not found in optimizer state fragment") fails the
                #   local lookup that precedes the collective; at ZeRO-3 alike on every rank
                try:
                    value = safe_get_full_optimizer_state(p, key)
                except Exception:
                    value = None
            if value is not None:
                entry[field] = values(value)
        out.append(entry)
    return out if keep else None
