"""DeepSpeed's training state read back after a step, for the trace: the fp32 master weights, the
Muon momentum and the Adam moments where DeepSpeed exposes them, and the loss scale.

Each rank reads the fragments it holds where DeepSpeed's full-tensor getters
(`deepspeed.utils.safe_get_full_fp32_param`, `safe_get_full_optimizer_state`) read them — a
param's `_hp_mapping` at ZeRO-1/2 and under BF16_Optimizer, its part of the fp32 partition at
ZeRO-3 — and one gather brings every rank's fragments to rank 0, which assembles each tensor: the
getters are one collective per tensor and key, a quarter of a case's time at dp 2 on two CPU
cores. Reading through the same mappings keeps what the getters show, DeepSpeed's mapping defects
included (known defect round-robin-hp-mapping). An element two ranks hold must agree and
every element must be held by some rank; either failure is raised on every rank.
Collective: every rank calls read_state; rank 0 gets the state, the others None.
"""
import numpy as np
import torch

from adapters.common import ranks
from adapters.common.trace import tensor_values

# A rank's report for one tensor: a list of (first element, fp32 values) fragments, or this marker
# where the rank holds part of the tensor but has no such state (DeepSpeed's getter raises there)
UNREADABLE = "unreadable"
# what each trace field is, in the messages of a failed assembly
_FIELD_TEXT = {"weight": "fp32 master weight", "momentum": "Muon momentum", "adam_m": "Adam first moment",
               "adam_v": "Adam second moment"}


def loss_scale(engine):
    opt = engine.optimizer
    for attr in ("cur_scale", "loss_scale"):
        value = getattr(opt, attr, None)
        if isinstance(value, (int, float)) or torch.is_tensor(value):
            return float(value)
    scaler = getattr(opt, "loss_scaler", None)
    return float(getattr(scaler, "cur_scale", 1.0)) if scaler is not None else 1.0


def _host_values(t):
    """A tensor's elements as a flat fp32 numpy array on the host: what the gather pickles (an array
    pickles as its raw bytes; a torch tensor goes through torch.save, far slower per fragment)."""
    return t.detach().reshape(-1).float().cpu().numpy()


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
                out.setdefault(index_of[id(q)], []).append((0, _host_values(buf.narrow(0, offset, q.numel()))))
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
                out.setdefault(index_of[id(q)], []).append((start, _host_values(buf.narrow(0, dest, n))))


def _mapped_fragments(p, key):
    """ZeRO-1/2 and BF16_Optimizer: the part of p's master weight (key None) or of its optimizer
    state `key` this rank's partition holds, read where get_full_hp_param (utils/tensor_fragment.py)
    reads it: the mapping's hp fragment, placed at its lp_fragment_address. [] where this rank holds
    none of p (`_hp_mapping` None: the getter's zeros); UNREADABLE where it holds part of p but no
    `key` state (the getter raises "not found in optimizer state fragment": before the first step,
    or a group whose state DeepSpeed did not link)."""
    mapping = p._hp_mapping
    if mapping is None:
        return []
    try:
        hp = mapping.get_hp_fragment(key)
    except Exception:
        return UNREADABLE
    address = mapping.lp_fragment_address
    if hp.numel() != address.numel:
        raise RuntimeError(f"the hp fragment has {hp.numel()} elements, its lp address {address.numel}")
    return [(int(address.start), _host_values(hp))]


def _partition_fragments(p, key):
    """ZeRO-3: p's part of this rank's fp32 partition (key None) or of optimizer state `key`, read by
    get_local_fp32_param, which reads what get_full_hp_param all-gathers (stage3.py): rank r of p's
    partition group holds elements [r·P, (r+1)·P) of p, P the partition's size; the padding past
    p's last element is left out. UNREADABLE where the state is not created (a KeyError on every
    rank alike); None where p has no fp32 copy (not trained)."""
    opt = p._z3_optimizer
    try:
        local = opt.get_local_fp32_param(p, key)
    except Exception:
        if key is None:
            raise
        return UNREADABLE
    if local is None:
        return None
    start = opt._get_param_partition_rank(p) * local.numel()
    n = max(0, min(local.numel(), _full_numel(p) - start))
    return [(start, _host_values(local.narrow(0, 0, n)))]


def _state_keys(tag):
    return [("momentum_buffer", "momentum")] if tag["use_muon"] else [("exp_avg", "adam_m"), ("exp_avg_sq", "adam_v")]


def _reader(p):
    """How this rank reads p's fragments past stage 0, or None where DeepSpeed's optimizer holds no
    copy of p (no mapping, not partitioned: the getters return None)."""
    if hasattr(p, "ds_id"):
        return _partition_fragments
    if hasattr(p, "_hp_mapping"):
        return _mapped_fragments
    return None


def _local_report(engine, named, tags, flat_12):
    """{(param index, field): fragments or UNREADABLE} for what this rank holds; a field no rank
    reports is absent from the trace. `flat_12`: ZeRO-1/2's Muon momentum comes from the group's
    flat buffer (laid out by whole params, not like the fp32 partition the mapping addresses)."""
    report = {}
    if flat_12:
        for i, fragments in _flat_momenta_12(engine, named).items():
            report[(i, "momentum")] = fragments
    for i, ((_, p), tag) in enumerate(zip(named, tags)):
        read = _reader(p)
        if read is None:
            # the module's own copy, rank 0's, as the getters' None left it
            report[(i, "weight")] = [(0, _host_values(p))] if ranks.rank() == 0 else []
            continue
        weight = read(p, None)
        if weight is None:   # ZeRO-3, not trained: the module's copy, as above
            weight = [(0, _host_values(p))] if ranks.rank() == 0 else []
        report[(i, "weight")] = weight
        for key, field in _state_keys(tag):
            if key == "momentum_buffer" and flat_12:
                continue
            fragments = read(p, key)
            if fragments is not None:
                report[(i, field)] = fragments
    return report


class _Assembly:
    """One tensor built on rank 0 from the ranks' fragments, with which rank wrote each element."""

    def __init__(self, name, field, numel):
        self.name, self.field = name, field
        self.values = np.zeros(numel, dtype=np.float32)
        self.owner = np.full(numel, -1, dtype=np.int64)

    def add(self, rank, start, values):
        """Writes one fragment; an element another rank already wrote must be equal (NaN equal to
        NaN): two copies that differ are raised, never one of them kept."""
        end = start + values.size
        if start < 0 or end > self.values.size:
            raise RuntimeError(f"{self.name}: rank {rank}'s {_FIELD_TEXT[self.field]} fragment [{start}, {end}) "
                               f"lies outside its {self.values.size} elements")
        span = slice(start, end)
        held = self.owner[span] >= 0
        if held.any() and not np.array_equal(self.values[span][held], values[held], equal_nan=True):
            raise RuntimeError(f"{self.name}: {_FIELD_TEXT[self.field]} differs between ranks "
                               f"{int(self.owner[span][held][0])} and {rank}")
        self.values[span] = values
        self.owner[span] = rank

    def complete(self):
        return bool((self.owner >= 0).all())


def _full_numel(p):
    """p's element count, also where ZeRO-3 left the module only a placeholder of it."""
    return int(p.ds_numel) if hasattr(p, "ds_numel") else p.numel()


def _assemble(named, reports):
    """{(param index, field): flat fp32 values} from every rank's report, in the order the ranks
    reported them (so the first disagreement named is the first one met). A tensor some rank cannot
    read is left out, as the getters' lookup left it; one with elements no rank holds is raised,
    naming every such param."""
    unreadable = {key for report in reports for key, fragments in report.items() if isinstance(fragments, str)}
    built = {}
    for rank, report in enumerate(reports):
        for (i, field), fragments in report.items():
            if (i, field) in unreadable:
                continue
            name, p = named[i]
            assembly = built.setdefault((i, field), _Assembly(name, field, _full_numel(p)))
            for start, values in fragments:
                assembly.add(rank, int(start), values)
    for field, text in _FIELD_TEXT.items():
        missing = [a.name for (_, f), a in built.items() if f == field and not a.complete()]
        if missing:
            raise RuntimeError(f"{', '.join(missing)}: part of the {text} is held by no rank")
    return {key: a.values for key, a in built.items()}


def _checked_reports(reports, own_error):
    """The ranks' fragments, or the first rank's failure to read its own: rank 0's exception itself
    (so the case's error names it as DeepSpeed raised it), another rank's by its message."""
    if own_error is not None:
        raise own_error
    failed = [(r, x["error"]) for r, x in enumerate(reports) if x["error"]]
    if failed:
        raise RuntimeError(f"rank {failed[0][0]}: {failed[0][1]}")
    return [x["fragments"] for x in reports]


def _gathered_state(engine, named, tags, flat_12):
    """The assembled tensors on rank 0 (None elsewhere). Two collectives whatever the model: the
    gather of the ranks' reports, and the broadcast of rank 0's verdict on them, so that a failure
    (in the assembly, or in any rank's own reading) is raised on every rank instead of leaving the
    others waiting in the next collective alone."""
    own_error = None
    try:
        report = {"fragments": _local_report(engine, named, tags, flat_12), "error": None}
    except Exception as e:   # this rank still joins the gather: the others are in it
        own_error = e
        report = {"fragments": {}, "error": f"{type(e).__name__}: {e}"}
    reports = ranks.gather_to_rank0(report)
    built, error = None, None
    if reports is not None:
        try:
            built = _assemble(named, _checked_reports(reports, own_error))
        except Exception as e:
            error = e
    ranks.raise_together(error)
    return built


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


def _stage0_state(engine, named, tags):
    """Stage 0: every rank holds the whole state; rank 0 reads its own, no collective. The param
    itself, or its fp32 copy where a 16-bit wrapper steps one."""
    masters = _stage0_masters(engine)
    inner = getattr(engine.optimizer, "optimizer", engine.optimizer) if masters else engine.optimizer
    out = []
    for (_, p), tag in zip(named, tags):
        master = masters.get(id(p), p)
        entry = {"weight": tensor_values(master)}
        for key, field in _state_keys(tag):
            value = inner.state.get(master, {}).get(key) if hasattr(inner, "state") else None
            if value is not None:
                entry[field] = tensor_values(value)
        out.append(entry)
    return out


def read_state(engine, named, tags):
    """The state after a step, on rank 0 (None elsewhere). Collective: every rank calls it."""
    stage = engine.zero_optimization_stage()
    if stage == 0:
        return _stage0_state(engine, named, tags) if ranks.rank() == 0 else None
    # BF16_Optimizer (ZeRO-1 with fp32 accumulation) keeps momentum in its flat fp32 state, mapped
    # per param like the Adam moments
    flat_12 = stage in (1, 2) and type(engine.optimizer).__name__ != "BF16_Optimizer"
    built = _gathered_state(engine, named, tags, flat_12)
    if built is None:
        return None
    out = []
    for i, tag in enumerate(tags):
        entry = {"weight": tensor_values(built[(i, "weight")])}
        for _, field in _state_keys(tag):
            if (i, field) in built:
                entry[field] = tensor_values(built[(i, field)])
        out.append(entry)
    return out
