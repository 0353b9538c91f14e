"""Fixes of known DeepSpeed defects, applied for one case on request (adapters/deepspeed/known_defects.json
names them; adapters/common/fixes.py applies and reverts them). Each is a function of the original
that returns its replacement, and says where its change comes from: the upstream pull request's
change where there is one, else ours.
"""
import torch


def stage0_runs_newton_schulz(original_step):
    """DeepSpeed PR #8442 (fixes #8441; in 0.19.8): at stage 0 MuonWithAuxAdam.step holds the weight
    itself, not a flat ZeRO partition, so nothing has orthogonalised its gradient and 0.19.6 steps
    it as SGD. The PR runs muon_update there for every parameter of 2 or more dims; 0.19.6's step
    then applies weight decay and the step size to it as before (p.add_(p.grad)), so the update is
    written into p.grad before the original step runs. muon_update is looked up in original_muon at
    each step, not when this fix is applied: a fix of original_muon.muon_update applied after this
    one (rank3-batched-ns) must reach stage 0 too, whatever order the fixes come in."""
    import deepspeed.runtime.zero.muon.original_muon as original_muon

    @torch.no_grad()
    def step(self, closure=None, step_id=None):
        muon_update = original_muon.muon_update
        for group in self.param_groups:
            if not group["use_muon"]:
                continue
            for p in group["params"]:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
                if p.dim() < 2:   # a flat ZeRO partition: its ZeRO optimizer ran Muon already
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["momentum_buffer"] = torch.zeros_like(p)
                update = muon_update(p.grad, state["momentum_buffer"], beta=group["momentum"],
                                     ns_method=group.get("ns_method", "gram"),
                                     is_expert_group=getattr(p, "is_expert_group", False))
                p.grad.copy_(update.reshape(p.shape))
        return original_step(self, closure=closure, step_id=step_id)

    return step


def tag_by_layer_shape(original_set_optimizer_flags):
    """DeepSpeed PR #8438 (in 0.19.8): under zero.Init a partitioned parameter's data is a flat
    placeholder (shape (0,)), its layer's shape is ds_shape, so 0.19.6's `p.ndim >= 2` tags no
    parameter for Muon. The PR reads the layer's shape; here the original runs with each
    parameter's ndim read from ds_shape for the duration of the call."""

    def set_optimizer_flags(config_class, model):
        original_set_optimizer_flags(config_class, model)
        for name, p in model.named_parameters():
            ds_shape = getattr(p, "ds_shape", None)
            if ds_shape is None or getattr(p, "use_muon", None) is None:
                continue
            is_matrix = len(tuple(ds_shape)) >= 2
            setattr(p, "use_muon", is_matrix and not any(k in name.lower() for k in ("embed", "lm_head")))

    return set_optimizer_flags


def stage0_forwards_num_heads(original_step):
    """DeepSpeed PR #8612 (open; for 0.19.8): MuonWithAuxAdam.step calls muon_update without
    num_heads, so at stage 0 a per-head projection is orthogonalised whole while ZeRO-1/2/3 pass
    muon_num_heads. The PR forwards the tag at that call site; here the module's muon_update is
    bound, for the duration of the step, to a version that reads each gradient's parameter's tag."""
    import deepspeed.runtime.zero.muon.muon_optimizer as mo

    def step(self, closure=None, step_id=None):
        heads = {}
        for group in self.param_groups:
            if group.get("use_muon"):
                for p in group["params"]:
                    if p.grad is not None:
                        heads[id(p.grad)] = getattr(p, "muon_num_heads", None)
        plain = mo.muon_update

        def muon_update(grad, momentum, *args, **kwargs):
            if kwargs.get("num_heads") is None and heads.get(id(grad)) is not None:
                kwargs["num_heads"] = heads[id(grad)]
            return plain(grad, momentum, *args, **kwargs)

        mo.muon_update = muon_update
        try:
            return original_step(self, closure=closure, step_id=step_id)
        finally:
            mo.muon_update = plain

    return step


def link_hp_in_flat_order(original_link_all_hp_params):
    """Ours (no upstream change yet; reports/deepspeed/upstream/round-robin-hp-mapping.md): ZeRO-1/2
    lay the flat buffer out in `round_robin_bit16_groups` order (round_robin_gradients reorders it,
    and since PR #8277 per-param padding shifts it), and `round_robin_bit16_offsets` records where
    each param starts. `_link_all_hp_params` passes those offsets to link_hp_params only when some
    padding is non-zero; otherwise `_init_lp_to_hp_mapping` walks `bit16_groups` (model order) with
    running offsets, so with round_robin_gradients every param is mapped to another param's span of
    the fp32 partition (0.19.6 alike: it has no offsets and always walks model order):
    safe_get_full_fp32_param / safe_get_full_optimizer_state return the wrong
    elements (and checkpoint paths built on _hp_mapping read and write them). The training itself
    (the flat partitions) is untouched. The fix links in the flat buffer's order
    (round_robin_bit16_groups), with the real offsets where there is padding."""
    import deepspeed.comm as dist
    from deepspeed.runtime.zero import stage_1_and_2 as s12

    def _link_all_hp_params(self):
        if self.cpu_offload:
            self._get_offload_gradient_dict()
        for i, _ in enumerate(self.optimizer.param_groups):
            partition_id = dist.get_rank(group=self.real_dp_process_group[i])
            partition_size = self.bit16_groups_flat[i].numel() // dist.get_world_size(
                group=self.real_dp_process_group[i])
            kwargs, lp_list = {}, self.round_robin_bit16_groups[i]   # the flat buffer's order
            if any(getattr(self, "round_robin_bit16_padding", [[0]] * (i + 1))[i]):
                # 0.19.8 with per-param padding: the original already passes the real offsets
                offset_by_param = {id(p): off for p, off in zip(self.round_robin_bit16_groups[i],
                                                               self.round_robin_bit16_offsets[i])}
                lp_list = self.bit16_groups[i]
                kwargs["param_offsets"] = [offset_by_param[id(p)] for p in lp_list]
            s12.link_hp_params(lp_param_list=lp_list,
                               flat_hp_partition=self.single_partition_of_fp32_groups[i],
                               gradient_dict=self.averaged_gradients,
                               offload_gradient_dict=self.offload_gradient_dict,
                               use_offload=self.cpu_offload,
                               param_group_index=i,
                               partition_start=partition_id * partition_size,
                               partition_size=partition_size,
                               dp_group=self.real_dp_process_group[i],
                               **kwargs)

    return _link_all_hp_params


def bf16_optimizer_forwards_num_heads(original_prepare):
    """Ours (the call site PR #8612 leaves out, reports/deepspeed/upstream/bf16-optimizer-per-head-dropped.md):
    BF16_Optimizer._prepare_muon_updates (ZeRO-1 with bf16 params and fp32 gradient accumulation)
    calls muon_update(grad, momentum, beta=..., ns_method=...) without num_heads, so a per-head
    projection is orthogonalised whole. The method imports muon_update from original_muon at each
    call; for the duration of the call that name is bound to a version that adds the tag of the
    parameter each call is for, in the order the method visits them (layout['local_matrices'] of
    each Muon group)."""
    import deepspeed.runtime.zero.muon.original_muon as om

    def _prepare_muon_updates(self):
        order = []
        for gi, group in enumerate(self.optimizer.param_groups):
            if group.get("use_muon", False):
                params = self.bf16_groups[gi]
                order += [getattr(params[entry[0]], "muon_num_heads", None)
                          for entry in self._muon_exchange_layouts[gi]["local_matrices"]]
        heads = iter(order)
        plain = om.muon_update

        def muon_update(grad, momentum, *args, **kwargs):
            n = next(heads, None)
            if kwargs.get("num_heads") is None and n is not None:
                kwargs["num_heads"] = n
            return plain(grad, momentum, *args, **kwargs)

        om.muon_update = muon_update
        try:
            return original_prepare(self)
        finally:
            om.muon_update = plain

    return _prepare_muon_updates


def _all_reduced_sum(value, group):
    """`value` summed over `group`, reduced on the accelerator's device (an offloaded partition's
    sum is on the CPU, which NCCL cannot reduce)."""
    import deepspeed.comm as dist
    from deepspeed.accelerator import get_accelerator
    on_device = value.to(get_accelerator().current_device_name())
    dist.all_reduce(on_device, group=group)
    return on_device


def _clip_factor(self, squares):
    """step()'s clip factor for the all-reduced sum of squares of the loss-scaled gradient: 1 / clip
    with clip = (norm / loss_scale + 1e-6) / clip_grad where that is above 1; None where the clip does
    not bind or the norm is not finite (the step is then skipped for overflow)."""
    import math
    norm = math.sqrt(float(squares)) / float(self.loss_scale)
    if not math.isfinite(norm) or (norm + 1e-6) / self.clip_grad <= 1.0:
        return None
    return self.clip_grad / (norm + 1e-6)


def _compact_partitions(self):
    """At the accumulation boundary, this rank's reduced gradient partitions of the groups DeepSpeed
    keeps in its compact fp32 buffer (0.19.8: bf16 params accumulating in fp32, groups without Muon);
    none where the version has no such buffer."""
    uses_compact = getattr(self, "_use_compact_grad_partition_buffer", None)
    if uses_compact is None or not self.is_gradient_accumulation_boundary():
        return []
    return [g for i in range(len(self.bit16_groups)) if uses_compact(i)
            for g in (self.averaged_gradients.get(i) or []) if g is not None and not getattr(g, "_zero_padding", False)]


def clip_raw_gradient_before_muon(original_epilogue):
    """After DeepSpeed PR #7776 (open; for #8439): at ZeRO-1/2 Muon runs inside get_flat_partition,
    called by independent_gradient_partition_epilogue at the accumulation boundary, before step()
    takes the global norm and clips; so the momentum takes the unclipped gradient and the clip norm
    is taken over the orthogonalised updates. The PR clips the raw gradient before muon_update and
    keeps step() from clipping a second time. Here the epilogue runs with get_flat_partition
    deferred (each group's accumulated gradients kept), the global norm of the raw gradients of this
    rank's partitions is all-reduced over the data-parallel group, every group's gradients are
    scaled by the clip factor (step()'s formula: (norm / loss_scale + 1e-6) / clip_grad, at least 1),
    and then get_flat_partition (Muon included) runs on them; the groups 0.19.8 keeps in its compact
    fp32 partition buffer (bf16 params accumulating in fp32, groups without Muon) join the norm and
    the scaling. step() then runs with clip_grad 0 for that step (it still unscales the loss scale),
    installed below as an instance attribute."""

    def epilogue(self, *args, **kwargs):
        if not self.clip_grad or self.clip_grad <= 0.0 or self.cpu_offload:
            return original_epilogue(self, *args, **kwargs)
        deferred = {}
        real = type(self).get_flat_partition

        def defer(tensor_list, first_offset, partition_size, dtype, device, param_group_idx,
                  return_tensor_list=False):
            deferred[param_group_idx] = (self.all_grad_tensors[param_group_idx], tensor_list, first_offset,
                                         partition_size, dtype, device, return_tensor_list)
            return None

        self.get_flat_partition = defer
        try:
            result = original_epilogue(self, *args, **kwargs)
        finally:
            del self.get_flat_partition
        # every rank joins the norm's all-reduce, one whose partitions hold nothing included (else
        # the ranks that do wait in it for ever at dp > 1)
        device = next(iter(deferred.values()))[5] if deferred else getattr(self, "device", "cpu")
        sq = torch.zeros((), dtype=torch.float64, device=device)
        for grads, tensor_list, first_offset, partition_size, *_ in deferred.values():
            if not tensor_list:
                continue
            flat = torch.cat([g.reshape(-1).to(torch.float64) for g in grads])
            sq += flat.narrow(0, int(first_offset), int(min(partition_size, flat.numel() - first_offset))).pow(2).sum()
        # bf16 params accumulating in fp32: a group without Muon keeps this rank's reduced partition in
        # a compact fp32 buffer (averaged_gradients), never through get_flat_partition; it is clipped too
        compact = _compact_partitions(self)
        for g in compact:
            sq += g.to(device=device, dtype=torch.float64).pow(2).sum()
        # in fp64, which the collective recorder leaves out: the fix's norm is not a gradient of
        # DeepSpeed's to judge by the communication dtype
        sq = _all_reduced_sum(sq, self.dp_process_group)
        if not deferred and not compact:
            return result
        factor = _clip_factor(self, sq)
        for g in compact if factor is not None else []:
            g.mul_(factor)
        for i, (grads, tensor_list, first_offset, partition_size, dtype, device, rtl) in deferred.items():
            if factor is not None and grads is not None:
                for g in grads:
                    g.mul_(factor)
            self.all_grad_tensors[i] = grads
            self.averaged_gradients[i] = real(self, tensor_list, first_offset, partition_size, dtype=dtype,
                                              device=device, param_group_idx=i, return_tensor_list=rtl)
            self.all_grad_tensors[i] = None
        if "step" not in self.__dict__:
            cls_step = type(self).step

            def step_once_unclipped(*a, **k):
                del self.step
                saved, self.clip_grad = self.clip_grad, 0.0
                try:
                    return cls_step(self, *a, **k)
                finally:
                    self.clip_grad = saved

            self.step = step_once_unclipped
        return result

    return epilogue


def _update_as_matrix(original_muon_update, ndim):
    """muon_update run on the (rows, rest) views of an `ndim`-D gradient and momentum (both written in
    place, as before), its update viewed back to the gradient's shape; any other call as shipped."""

    def muon_update(grad, momentum, *args, **kwargs):
        if (grad.ndim == ndim and not kwargs.get("is_expert_group", False) and kwargs.get("num_heads") is None
                and len(args) < 4 and grad.is_contiguous() and momentum.is_contiguous()
                and momentum.numel() == grad.numel()):
            rows = grad.shape[0]
            update = original_muon_update(grad.view(rows, -1), momentum.view(rows, -1), *args, **kwargs)
            return update.reshape(grad.shape)
        return original_muon_update(grad, momentum, *args, **kwargs)

    return muon_update


def muon_update_viewed_back(original_muon_update):
    """Ours (no upstream change yet; reports/deepspeed/upstream/conv-weight-muon-update-shape.md):
    muon_update views a 4-D (conv) update as a matrix for Newton-Schulz and never views it back, so
    0.19.8's overflow guard (torch.where against the 4-D gradient, from PR #8435) raises or
    broadcasts, 0.19.6's ZeRO-3 copy_ back into the gradient raises, and the aspect-ratio scale is
    taken from the kernel's (kh, kw) instead of the matrix view's. The fix runs the original on the
    (out, in*kh*kw) views of the gradient and the momentum (both written in place, as before) and
    returns the update viewed back to the gradient's shape, so the scale and the guard see the
    matrix and the caller gets the parameter's shape."""

    return _update_as_matrix(original_muon_update, ndim=4)


def _clip_raw_partitions_then(original_muon_step, raw_partitions):
    """`original_muon_step` (the method that runs Muon's momentum and Newton–Schulz on the raw
    gradient partitions, before step() takes the clip norm) preceded by the clip of PR #7776's
    order: the global norm of the raw partitions (`raw_partitions(self)`, this rank's), summed over
    the data-parallel group, every partition scaled by step()'s factor ((norm / loss_scale + 1e-6) /
    clip_grad, at least 1); this step's unscale_and_clip_grads then only unscales. Without binding
    clipping the method runs as shipped."""

    def muon_step(self, *args, **kwargs):
        if not self.clip_grad or self.clip_grad <= 0.0:
            return original_muon_step(self, *args, **kwargs)
        parts = [g for g in raw_partitions(self) if g is not None]
        device = parts[0].device if parts else self.device
        sq = torch.zeros((), dtype=torch.float64, device=device)
        for g in parts:
            sq += g.to(torch.float64).pow(2).sum()
        # every rank joins, one without partitions included; fp64, which the collective recorder
        # leaves out: the fix's norm is not a gradient of DeepSpeed's to judge by its dtype
        sq = _all_reduced_sum(sq, self.dp_process_group)
        factor = _clip_factor(self, sq)
        for g in parts if factor is not None else []:
            g.mul_(factor)
        if "unscale_and_clip_grads" not in self.__dict__:
            unscale_and_clip = type(self).unscale_and_clip_grads

            def unscale_only(*a, **k):
                saved, self.clip_grad = self.clip_grad, 0.0
                try:
                    return unscale_and_clip(self, *a, **k)
                finally:
                    self.clip_grad = saved

            self.unscale_and_clip_grads = unscale_only
        return original_muon_step(self, *args, **kwargs)

    # the same clip around another Muon step: a later fix that replaces the method outright
    # (offload_muon_gathers_ns_input_in_comm_dtype) keeps this one, in either order
    muon_step._muoncheck_rewrap = lambda inner: _clip_raw_partitions_then(inner, raw_partitions)
    return muon_step


def zero3_clip_raw_gradient_before_muon(original_apply):
    """Ours, PR #7776's order (for #8439) at ZeRO-3 without offload: step() runs
    _apply_muon_to_accumulated_grads on the raw accumulated partitions (averaged_gradients) and only
    then takes the norm and clips, so the momentum takes the unclipped gradient and the clip norm
    is over the orthogonalised updates. With optimizer offload the method hands over to
    _apply_muon_updates_cpu_offload (zero_offload_clip_raw_gradient_before_muon)."""
    clipped = _clip_raw_partitions_then(
        original_apply, lambda self: [g for grads in self.averaged_gradients.values() for g in (grads or [])])

    def _apply_muon_to_accumulated_grads(self):
        return (original_apply if self.offload_optimizer or not self.use_muon else clipped)(self)

    return _apply_muon_to_accumulated_grads


def zero_offload_clip_raw_gradient_before_muon(original_apply):
    """Ours, PR #7776's order (for #8439) under optimizer offload, at ZeRO-1/2 and ZeRO-3 alike:
    step() runs _apply_muon_updates_cpu_offload on the fp32 gradient partitions (the offloaded
    master's .grad) before it takes the norm and clips."""
    def raw_partitions(self):
        masters = getattr(self, "single_partition_of_fp32_groups", None)   # ZeRO-1/2
        if masters is None:
            masters = self.fp32_partitioned_groups_flat                    # ZeRO-3
        return [m.grad for m in masters]

    return _clip_raw_partitions_then(original_apply, raw_partitions)


def _offload_muon_step_in_comm_dtype(self, muon_update, gather, batches, per_head, finite_guard):
    """ZeRO-1/2's Muon step under optimizer offload with Newton-Schulz's input gathered in
    communication_data_type (offload_muon_gathers_ns_input_in_comm_dtype says why and how): each rank
    advances its own slice of the momentum and forms the Nesterov blend in fp32, the blend travels
    in the communication dtype, Newton-Schulz runs on the gathered blend (muon_update with beta 0),
    and each rank writes its slice of the update and momentum back. `gather(batch, group_idx,
    [buffer], process_group, device)` assembles full matrices from the partitions, `batches(params,
    element_size)` groups the Muon params; `per_head` forwards num_heads (a muon_update that has
    it); `finite_guard` keeps the momentum and the gradient where the gathered blend is not finite,
    as 0.19.8's muon_update does (0.19.6's has no such guard)."""
    from deepspeed.accelerator import get_accelerator
    import deepspeed.comm as dist
    from deepspeed.runtime.zero.utils import get_norm_dtype

    device = get_accelerator().current_device_name()
    wire = self.communication_data_type
    for group_idx, muon_params, process_group, rank, partition_size, local_grad, momentum, _ in \
            _offloaded_muon_groups(self, dist):
        loss_scale = float(self.loss_scale)
        og = self.optimizer.param_groups[group_idx]
        beta = og["momentum"]
        ns_input = torch.zeros(partition_size, dtype=wire, device=local_grad.device)
        for batch in batches(muon_params, local_grad.element_size()):
            mine = {}
            for param in batch:
                param_id = self.get_param_id(param)
                if rank not in self.param_to_partition_ids[group_idx][param_id]:
                    continue
                src = int(self.grad_start_offset[group_idx][rank][param_id])
                dst = int(self.grad_partition_insertion_offset[group_idx][rank][param_id])
                n = int(min(param.numel() - src, partition_size - dst))
                if n <= 0:
                    continue
                grad = local_grad.narrow(0, dst, n)
                if loss_scale != 1.0:
                    grad = grad / loss_scale
                advanced = momentum.narrow(0, dst, n).lerp(grad, 1 - beta)   # muon_update's momentum step
                ns_input.narrow(0, dst, n).copy_(grad.lerp(advanced, beta))   # and its Nesterov blend
                mine[param_id] = (src, dst, n, grad, advanced)
            gathered = gather(batch, group_idx, [ns_input], process_group, device)
            for param, blend in zip(batch, gathered):
                blend = blend.to(local_grad.dtype)
                finite = torch.isfinite(blend).all()   # before muon_update, which blends in place
                heads = {"num_heads": getattr(param, "muon_num_heads", None)} if per_head else {}
                update = muon_update(blend, torch.zeros_like(blend), 0.0, ns_method=og.get("ns_method", "gram"),
                                     is_expert_group=getattr(param, "is_expert_group", False), **heads)
                param_id = self.get_param_id(param)
                if param_id not in mine:
                    continue
                src, dst, n, grad, advanced = mine[param_id]
                local_update = update.reshape(-1).narrow(0, src, n)
                kept = momentum.narrow(0, dst, n)
                if finite_guard:
                    kept.copy_(torch.where(finite.to(kept.device), advanced, kept))
                    local_update = torch.where(finite, local_update, grad.to(update.device))
                else:
                    kept.copy_(advanced)
                scaled = local_update * loss_scale if loss_scale != 1.0 else local_update
                local_grad.narrow(0, dst, n).copy_(scaled.to(local_grad.dtype))
                self.norm_for_param_grads[param_id] = scaled.to(get_norm_dtype()).norm(2)


def offload_muon_gathers_ns_input_in_comm_dtype(original_apply):
    """Ours. 0.19.8's ZeRO-1/2 under optimizer offload (_apply_muon_updates_cpu_offload) all-gathers
    each Muon matrix's fp32 gradient partition, and from step 1 on its fp32 momentum partition in the
    same buffer, in fp32 (_muon_all_gather_partitions sends in flat_buffers[0].dtype), whatever
    communication_data_type says, then advances the momentum on the gathered copy and copies its own
    slice back. The momentum step (lerp) and the Nesterov blend are elementwise, so here each rank
    does them on its own slice in fp32 (the state never travels and is never rounded) and gathers
    only the blend, Newton-Schulz's input, in communication_data_type: one buffer of the
    communication dtype instead of one or two of fp32. Newton-Schulz then runs as shipped on the
    gathered blend taken back to fp32 (muon_update with beta 0 returns NS(blend) times the scale,
    per-head / expert / conv handling included). The step is kept only where the gathered blend is
    finite (muon_update's guard on the full gradient); otherwise the slice keeps the gradient, as
    the shipped guard returns it. The write-back (loss scale, norm_for_param_grads) is the shipped
    one. Unproven at fp16 (no fp16 on DeepSpeed's CPU accelerator): the blend is gathered unscaled,
    so elements below fp16's normal range lose precision (Newton-Schulz normalises by the Frobenius
    norm, so only the small elements' share is affected). Applied after a fix that wraps the
    shipped method and says how to wrap another (`_muoncheck_rewrap`:
    offload-clip-muon-momentum-unclipped), it is wrapped the same way; applied before, that fix
    wraps it."""

    @torch.no_grad()
    def _apply_muon_updates_cpu_offload(self):
        from deepspeed.runtime.zero.muon.muon_optimizer import MuonWithAuxAdam
        if not isinstance(self.optimizer, MuonWithAuxAdam):
            return
        from deepspeed.runtime.zero.muon.original_muon import muon_update
        _offload_muon_step_in_comm_dtype(self, muon_update, self._muon_all_gather_partitions, self._muon_param_batches,
                                         per_head=True, finite_guard=True)

    from ..common import fixes
    rewrap = getattr(original_apply, "_muoncheck_rewrap", None)
    # the earlier fix's clip, built anew around this step, counts as that fix's code running
    return fixes.counted_for(original_apply, rewrap(_apply_muon_updates_cpu_offload)) if rewrap else _apply_muon_updates_cpu_offload


def link_each_group_once_stepped(original_lazy_init):
    """Ours (reports/deepspeed/upstream/zero12-param-groups-state-unlinked.md): ZeRO-1/2's
    _optimizer_step(group_no) steps one param group and then links the optimizer state of every
    group to its params' hp mappings, once (`_hp_optimizer_states_linked`). After the first group's
    step the other groups have no state yet, so their params' mappings keep an empty fragment for
    good and safe_get_full_optimizer_state raises "not found in optimizer state fragment" for every
    param outside the first group. The fix links each group once it has state, and sets the flag
    when every group is linked."""
    from deepspeed.utils.mixed_precision_linkage import lazy_init_hp_params_optimizer_state

    def _lazy_init_hp_params_optimizer_state(self):
        if self._hp_optimizer_states_linked:
            return
        linked = self.__dict__.setdefault("_hp_groups_linked", set())
        for i, _ in enumerate(self.optimizer.param_groups):
            flat = self.single_partition_of_fp32_groups[i]
            if i in linked or not self.optimizer.state.get(flat):
                continue
            lazy_init_hp_params_optimizer_state(self.bit16_groups[i], flat, self.optimizer.state)
            linked.add(i)
        self._hp_optimizer_states_linked = len(linked) == len(self.optimizer.param_groups)

    return _lazy_init_hp_params_optimizer_state


def muon_update_rank3_as_matrix(original_muon_update):
    """Ours (reports/deepspeed/upstream/rank3-batched-ns.md): muon_update views only a 4-D update
    as a matrix; a 3-D one (a conv1d weight, out × in × k) reaches Newton–Schulz whole, which
    treats its first dimension as a batch and orthogonalizes each (in × k) slice on its own, and
    the aspect-ratio scale is taken from (in, k). The fix runs the original on the (out, in·k)
    views of the gradient and the momentum (both written in place, as before) and returns the
    update viewed back to the gradient's shape."""

    return _update_as_matrix(original_muon_update, ndim=3)


def unfused_init_without_step(original_initialize_optimizer_states):
    """Ours (reports/deepspeed/upstream/stage0-16bit-init-step.md; the same change as open PR #5104,
    "Remove optimizer step on initialization", which names ZeRO-1/2/3 only): at stage 0 with bf16 or
    fp16 params FP16_UnfusedOptimizer's constructor sets every gradient to zero and calls
    self.optimizer.step(), so Adam's step counter is 1 before training (first update 0.735 of lr for
    betas (0.9, 0.95)) and AdamW's (and 0.19.8's stage-0 Muon's) weight decay is applied once. The
    fix leaves the wrapped optimizer fresh: its state is created lazily at the first real step, as
    torch's optimizers and ZeRO-1/2 (stage_1_and_2.py) do."""

    def initialize_optimizer_states(self):
        return None

    return initialize_optimizer_states


MUON_TAGS = ("use_muon", "muon_num_heads", "is_expert_group")   # what MuonWithAuxAdam.step reads off a param


def unfused_masters_keep_muon_tags(original_init):
    """Ours: at stage 0 with bf16 or fp16 params FP16_UnfusedOptimizer steps fp32 copies
    (`p.clone().float().detach()`), which carry none of the Muon tags set on the model's params, so
    MuonWithAuxAdam.step reads no muon_num_heads (or is_expert_group) off them and orthogonalises a
    per-head projection whole, PR #8612's forwarding included. The fix copies the tags onto each
    fp32 copy after the constructor made them."""

    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        for low, masters in zip(self.fp16_groups, self.fp32_groups):
            for p, master in zip(low, masters):
                for tag in MUON_TAGS:
                    if hasattr(p, tag):
                        setattr(master, tag, getattr(p, tag))

    return __init__


def zero3_muon_momentum_kept_on_skip(original_apply):
    """Ours (reports/deepspeed/upstream/zero3-bf16-skipped-step-muon-momentum.md; the same effect as
    0.19.8's staged momentum at ZeRO-1/2, `_commit_muon_momentum`): with bf16 params ZeRO-3's step()
    checks no raw gradient for overflow (the check runs only for fp16), runs
    _apply_muon_to_accumulated_grads, which writes every Muon parameter's new momentum into the
    optimizer state, and only then finds the norm non-finite and skips the step. muon_update's
    guard is per tensor, so every other Muon matrix keeps the discarded gradient in its momentum.
    The fix keeps a copy of each momentum buffer (the optimizer state's "momentum_buffer", held in
    memory: offload keeps its own) before Muon runs, and the step's
    _loss_scale_update_and_overflow_cleanup (bound once on the instance) puts it back when the step
    is skipped. (step() itself is wrapped by instrument_w_nvtx, whose source is not step's.)"""

    def _apply_muon_to_accumulated_grads(self):
        saved = []
        for state in self.optimizer.state.values():
            buf = state.get("momentum_buffer") if isinstance(state, dict) else None
            if torch.is_tensor(buf):
                saved.append((buf, buf.detach().clone()))
        result = original_apply(self)
        if saved and "_loss_scale_update_and_overflow_cleanup" not in self.__dict__:
            cleanup = type(self)._loss_scale_update_and_overflow_cleanup

            def cleanup_once(*a, **k):
                del self._loss_scale_update_and_overflow_cleanup
                skipped = cleanup(self, *a, **k)
                if skipped or self.overflow:
                    for buf, copy in saved:
                        buf.data.copy_(copy)
                return skipped

            self._loss_scale_update_and_overflow_cleanup = cleanup_once
        return result

    return _apply_muon_to_accumulated_grads


def muon_momentum_unscaled(original_get_flat_partition):
    """Ours (no upstream change; reports/deepspeed/upstream/fp16-muon-momentum-loss-scaled.md): under
    fp16 ZeRO-1/2 run muon_update (inside get_flat_partition, at the accumulation boundary) on the
    gradient as it is, still multiplied by the loss scale S, so the momentum is kept in loss-scaled
    units and is never rescaled when the dynamic scaler changes S. Newton-Schulz normalises, so the
    update is the same either way. For the duration of the call muon_update (original_muon's,
    which 0.19.8 imports at each call, and the binding 0.19.6's stage_1_and_2 took at import) is
    bound to a version that divides the gradient by the current loss scale first. ZeRO-1/2 without
    offload only (ZeRO-3's _muon_update_sub_group and the offload paths are not covered)."""
    import deepspeed.runtime.zero.muon.original_muon as om
    import deepspeed.runtime.zero.stage_1_and_2 as s12

    def get_flat_partition(self, *args, **kwargs):
        scale = float(self.loss_scale)
        if scale == 1.0:
            return original_get_flat_partition(self, *args, **kwargs)
        plain_om, plain_s12 = om.muon_update, getattr(s12, "muon_update", None)

        def unscaled(plain):
            def muon_update(grad, momentum, *a, **k):
                grad.div_(scale)
                return plain(grad, momentum, *a, **k)
            return muon_update

        om.muon_update = unscaled(plain_om)
        if plain_s12 is not None:   # 0.19.6's binding, maybe replaced by another fix: wrap what is there
            s12.muon_update = unscaled(plain_s12)
        try:
            return original_get_flat_partition(self, *args, **kwargs)
        finally:
            om.muon_update = plain_om
            if plain_s12 is not None:
                s12.muon_update = plain_s12

    return get_flat_partition


def unscale_by_scale_before_growth(original_step):
    """Ours, the order open PR #8588's 2026-09-21 comment describes for FP16_Optimizer
    (reports/deepspeed/upstream/scale-growth-unscales-by-new-scale.md): ZeRO-1/2's step() calls
    _update_scale(overflow) — which on the scale_window-th good step doubles the scale — before
    unscale_and_clip_grads divides the gradients by self.loss_scale, so on a growth step the
    gradients computed at S are divided by 2S (half the step with clipping off or not binding).
    The fix defers a good step's scale update to the end of step(), so everything in the step sees
    the scale its gradients were computed at; an overflow's back-off runs where it did. ZeRO-1/2
    only (ZeRO-3's and stage 0's wrappers have the same order and are not covered)."""

    def step(self, closure=None):
        deferred = []
        update_scale = type(self)._update_scale

        def _update_scale(has_overflow):
            if has_overflow:
                return update_scale(self, has_overflow)
            deferred.append(has_overflow)

        self._update_scale = _update_scale
        try:
            result = original_step(self, closure=closure)
        finally:
            del self._update_scale
        for has_overflow in deferred:
            update_scale(self, has_overflow)
        return result

    return step


def _reduce_bucket_ranges(params, limit):
    """[start, end) ranges of consecutive ZeRO-3 params, each holding at most `limit` elements (one
    param at least), as PR #8600 chunks its per-step all-gathers by reduce_bucket_size."""
    start = 0
    while start < len(params):
        end, numel = start, 0
        while end < len(params) and (end == start or numel + params[end].ds_numel <= limit):
            numel += params[end].ds_numel
            end += 1
        yield start, end
        start = end


def _pr8600_muon_update_sub_group(self, i, group_items, communication_data_type):
    """DeepSpeed PR #8600's _muon_update_sub_group, as back-ported to 0.19.6
    (adapters/deepspeed/patches/pr-8600-backport.diff): Muon in place on full-shape gradients
    `(param, dest_offset, grad)` of sub-group i, round-robin over the ranks, momentum written back."""
    import math
    import deepspeed.comm as dist
    import deepspeed.runtime.zero.stage3 as s3
    params = [param for param, _, _ in group_items]
    grads = [grad for _, _, grad in group_items]
    if not params:
        return
    flat = self.fp32_partitioned_groups_flat[i]
    swappable = self._swappable_optimizer_subgroup(i) and not self.save_muon_momentum_buffer_in_memory
    if swappable:
        self.optimizer_swapper.swap_in_optimizer_state(parameter=flat)
    if self.save_muon_momentum_buffer_in_memory:
        state_buffer = self.muon_momentum_buffer_partitioned_groups_flat[i]
    else:
        if "momentum_buffer" not in self.optimizer.state.get(flat, {}):
            self._create_momentum_buffer(self.fp16_partitioned_groups_flat_numel[i], i, flat.ds_id)
        state_buffer = self.optimizer.state[flat]["momentum_buffer"]
    momentum_buffer = [state_buffer.narrow(0, dest_offset, param.partition_numel()).clone()
                       for param, dest_offset, _ in group_items]
    gathered = self._partitioned_buffers_all_gather(params, momentum_buffer, communication_data_type)
    process_group = self._get_sub_group_process_group(i)
    world_sz = dist.get_world_size(process_group)
    rank = dist.get_rank(process_group)
    # as the PR: each round's tensors gathered as they are, unless zero3-muon-gather-mixed-shapes is applied
    all_gather = _padded_all_gather(dist.all_gather) if _pads_mixed_rounds(type(self)) else dist.all_gather
    grads_pad = grads + [torch.empty_like(grads[-1])] * ((world_sz - len(grads) % world_sz) % world_sz)
    gathered_pad = gathered + [torch.empty_like(gathered[-1])] * ((world_sz - len(gathered) % world_sz) % world_sz)
    grad_handles, momentum_handles = [], []
    for base_i in range(len(params))[::world_sz]:
        if base_i + rank < len(params):
            # the param this call is for, bound as DeepSpeed's loop binds it: the NS counter names a
            # call by the nearest frame's `param` (a stale one of the same shape would be misnamed)
            param = params[base_i + rank]  # noqa: F841
            g = grads_pad[base_i + rank]
            m = gathered_pad[base_i + rank]
            update = s3.muon_update(g, m, beta=self.muon_beta, ns_method=getattr(self, 'muon_ns_method', 'gram'))
            g.data.copy_(update, non_blocking=False)
        grad_handles.append(all_gather(grads_pad[base_i:base_i + world_sz], grads_pad[base_i + rank],
                                       group=process_group, async_op=True))
        momentum_handles.append(all_gather(gathered_pad[base_i:base_i + world_sz], gathered_pad[base_i + rank],
                                           group=process_group, async_op=True))
    for handle in momentum_handles:
        handle.wait()
    for idx, (param, dest_offset, grad) in enumerate(group_items):
        chunk_sz = math.ceil(grad.numel() / world_sz)
        start_offset = rank * chunk_sz
        end_offset = start_offset + chunk_sz
        if end_offset > grad.numel():
            buffer_to_update = torch.zeros(chunk_sz, device=grad.device, dtype=self.gradient_accumulation_dtype)
            buffer_to_update[:grad.numel() - start_offset] = gathered[idx].view(-1).data[start_offset:grad.numel()]
        else:
            buffer_to_update = gathered[idx].view(-1).data[start_offset:end_offset]
        if self.save_muon_momentum_buffer_in_memory:
            self.muon_momentum_buffer_partitioned_groups_flat[i].narrow(0, dest_offset, param.partition_numel()).data.copy_(
                buffer_to_update, non_blocking=False)
            self.optimizer.state[flat]["momentum_buffer"] = self.muon_momentum_buffer_partitioned_groups_flat[i]
        else:
            self.optimizer.state[flat]["momentum_buffer"].narrow(0, dest_offset, param.partition_numel()).data.copy_(
                buffer_to_update, non_blocking=False)
    if swappable:
        self.optimizer_swapper.swap_out_optimizer_state(parameter=flat)
    for handle in grad_handles:
        handle.wait()


def _pr8600_apply_muon_to_accumulated_grads(self, only=None):
    """The per-step Muon the 0.19.6 ZeRO-3 fixes bind ahead of step()'s norm (_get_norm_groups).
    Without optimizer offload: PR #8600's _apply_muon_to_accumulated_grads (the back-port, below).
    Under offload only where a fix asked for it (`_muoncheck_offload_muon`: zero3-offload-noncontiguous-
    no-newton-schulz, zero3-offload-reduce-path-clip-muon-momentum-unclipped): Muon on the offloaded
    fp32 gradient partitions (_zero3_offload_muon_at_step). Where a clip fix asked for it
    (`_muoncheck_clip_first`: zero3-reduce-path-clip-muon-momentum-unclipped and its offload form)
    the raw partitions are clipped first, PR #7776's order (_clip_raw_partitions_then)."""
    clip_first = self.__dict__.pop("_muoncheck_clip_first", False)
    offload_muon = self.__dict__.pop("_muoncheck_offload_muon", False)
    if not self.use_muon:
        return
    if self.offload_optimizer:
        if not offload_muon:
            return
        runner = _zero3_offload_muon_at_step
        raw = lambda self: [flat.grad for flat in self.fp32_partitioned_groups_flat]   # noqa: E731
    else:
        runner = _pr8600_muon_on_accumulated_grads
        raw = lambda self: [g for grads in self.averaged_gradients.values() for g in (grads or [])]   # noqa: E731
    if clip_first:
        runner = _clip_raw_partitions_then(runner, raw)
    return runner(self, only)


def _pr8600_muon_on_accumulated_grads(self, only=None):
    """PR #8600's _apply_muon_to_accumulated_grads (back-port): once per step, per Muon sub-group,
    all-gather the accumulated gradient partitions in chunks bounded by reduce_bucket_size, run
    Muon, write each rank's slice back. `only`: the ids of the params to run it for (None: all)."""
    import deepspeed.comm as dist
    if not self.use_muon or self.offload_optimizer:
        return
    for i, all_params in enumerate(self.fp16_groups):
        if not self.sub_groups_using_muon[i] or not all_params:
            continue
        rank = dist.get_rank(group=self._get_sub_group_process_group(i))
        keep = [k for k, param in enumerate(all_params) if only is None or id(param) in only]
        if not keep:
            continue
        group = [all_params[k] for k in keep]
        partitions = [self.averaged_gradients[i][k] for k in keep]
        for start, end in _reduce_bucket_ranges(group, self.reduce_bucket_size):
            params, chunk = group[start:end], partitions[start:end]
            full_grads = self._partitioned_buffers_all_gather(params, chunk, self.communication_data_type)
            items = [(param, self.grad_position[self.get_param_id(param)][1], full_grad)
                     for param, full_grad in zip(params, full_grads)]
            _pr8600_muon_update_sub_group(self, i, items, self.communication_data_type)
            for param, partition, update in zip(params, chunk, full_grads):
                offset = rank * param.partition_numel()
                num_elements = max(0, min(param.partition_numel(), param.ds_numel - offset))
                if num_elements > 0:
                    partition.narrow(0, 0, num_elements).copy_(update.view(-1).narrow(0, offset, num_elements))


def zero3_muon_at_step(original_apply_distributed_muon_update):
    """DeepSpeed PR #8600 (fixes #8443; in 0.19.8), from our back-port onto 0.19.6
    (adapters/deepspeed/patches/pr-8600-backport.diff): 0.19.6's ZeRO-3 runs Muon in the reduce path
    (_apply_distributed_muon_update), once per bucket per micro-batch, so the momentum advances gas
    times per step on partial gradients. The PR makes the reduce path return early unless the
    optimizer is offloaded and runs Muon once per step on the accumulated gradients
    (_apply_muon_to_accumulated_grads) after the overflow check and before the norm. step() is
    wrapped by instrument_w_nvtx, so instead of replacing it the replaced reduce-path method binds
    _get_norm_groups (called only by step(), right where the PR inserts the call) once on the
    instance to run the per-step Muon first. Left out as in the back-port: #8628's padded
    all-gather, per-head, the offload path, the loss-scale bookkeeping."""

    def _apply_distributed_muon_update(self, communication_data_type, buffer_to_reduce):
        if not self.use_muon or self.offload_optimizer:
            return original_apply_distributed_muon_update(self, communication_data_type, buffer_to_reduce)
        # a step hook zero3_muon_for_noncontiguous_buckets installed first then runs every param
        self.__dict__["_muoncheck_muon_at_step_all"] = True
        if "_get_norm_groups" not in self.__dict__:
            norm_groups = type(self)._get_norm_groups

            def _get_norm_groups_after_muon(*a, **k):
                del self._get_norm_groups
                self.__dict__.pop("_muoncheck_muon_at_step_all", None)
                self.__dict__.pop("_muoncheck_unmuoned", None)
                _pr8600_apply_muon_to_accumulated_grads(self)
                return norm_groups(self, *a, **k)

            self._get_norm_groups = _get_norm_groups_after_muon
        return None

    return _apply_distributed_muon_update


class _Done:
    """The handle of a gather that finished before it returned."""

    def wait(self, *_):
        return True

    def is_completed(self):
        return True


def _padded_all_gather(all_gather):
    """DeepSpeed PR #8628's gather of one Muon round: where the round's tensors differ in shape
    (projections of two shapes side by side, or the pad that fills the last round with the last
    param's shape), each rank sends its tensor flattened into zeros of the round's largest numel
    and each output takes its own elements back. A round of one shape is gathered as shipped."""

    def gather(outputs, tensor, group=None, async_op=False):
        if all(o.shape == outputs[0].shape for o in outputs):
            return all_gather(outputs, tensor, group=group, async_op=async_op)
        local = torch.zeros(max(o.numel() for o in outputs), dtype=tensor.dtype, device=tensor.device)
        local[:tensor.numel()] = tensor.reshape(-1)
        flat = [torch.empty_like(local) for _ in outputs]
        all_gather(flat, local, group=group)
        for out, got in zip(outputs, flat):
            out.view(-1).copy_(got[:out.numel()])
        return _Done() if async_op else None

    return gather


def _pads_mixed_rounds(optimizer_class):
    """Whether zero3_muon_gathers_padded is applied: it is in the chain of fixes on
    _apply_distributed_muon_update (each fix's __wrapped__ is what it replaced), in either order
    with zero3_muon_at_step, whose per-step Muon (the back-port) then pads its rounds too."""
    from ..common import fixes
    return fixes.marked_in_chain(getattr(optimizer_class, "_apply_distributed_muon_update", None), "pads_mixed_rounds")


def zero3_muon_gathers_padded(original_apply_distributed_muon_update):
    """DeepSpeed PR #8628 (in 0.19.8): 0.19.6's ZeRO-3 Muon gathers each round of world-size
    params (one orthogonalised per rank) with dist.all_gather(grads_pad[base_i:base_i + world_sz],
    ...), whose tensors differ in shape where the round mixes projection shapes or is padded with
    the last param's shape; gloo refuses such a gather (NCCL gathers it). The PR pads every
    tensor of a mixed round to the round's largest numel. The fix gathers the same way
    (_padded_all_gather) in the reduce path and, through _pads_mixed_rounds, in the PR #8600
    back-port's per-step Muon."""
    import deepspeed.comm as dist

    def _apply_distributed_muon_update(self, communication_data_type, buffer_to_reduce):
        shipped = dist.all_gather
        dist.all_gather = _padded_all_gather(shipped)
        try:
            return original_apply_distributed_muon_update(self, communication_data_type, buffer_to_reduce)
        finally:
            dist.all_gather = shipped

    _apply_distributed_muon_update.pads_mixed_rounds = True
    return _apply_distributed_muon_update


def muon_momentum_kept_on_skip(original_update_scale):
    """Ours, the effect 0.19.8 reaches at ZeRO-1/2 by staging the momentum and committing it only
    on an applied step (`_muon_staging_momentum` / `_commit_muon_momentum`); #8435's per-tensor guard
    in muon_update (fixes #8432) covers only the tensor whose own gradient overflowed. 0.19.6's
    ZeRO-1/2 run muon_update in get_flat_partition at the accumulation boundary, before step() knows
    the step overflowed, so a skipped step advances every Muon momentum (with the overflowed
    gradient: inf, every later step skipped). step() calls _update_scale(overflow) once per step,
    right after the overflow check: the fix keeps a copy of each momentum buffer there on a good
    step and puts it back (zeros before the first good step: the buffer starts at zero) on a
    skipped one."""

    def _update_scale(self, has_overflow=False):
        committed = self.__dict__.setdefault("_muoncheck_committed_momentum", {})
        for key, state in self.optimizer.state.items():
            buf = state.get("momentum_buffer") if isinstance(state, dict) else None
            if not torch.is_tensor(buf):
                continue
            if has_overflow:
                saved = committed.get(id(key))
                if saved is not None and saved.shape == buf.shape:
                    buf.data.copy_(saved)
                else:
                    buf.data.zero_()
            else:
                committed[id(key)] = buf.detach().clone()
        return original_update_scale(self, has_overflow)

    return _update_scale


def _muon_gather_partitions_0198(self, params, group_idx, flat_buffers, process_group, device):
    """0.19.8's DeepSpeedZeroOptimizer._muon_all_gather_partitions without its buffer cache: the
    full-shape tensors of `params` assembled from every rank's partition of each flat buffer."""
    import deepspeed.comm as dist
    world_size = dist.get_world_size(group=process_group)
    rank = dist.get_rank(group=process_group)
    partition_size = int(self.partition_size[group_idx])
    slices = [[] for _ in range(world_size)]
    rank_numels = [0] * world_size
    for param_index, param in enumerate(params):
        param_id = self.get_param_id(param)
        for partition_id in self.param_to_partition_ids[group_idx][param_id]:
            source_offset = int(self.grad_partition_insertion_offset[group_idx][partition_id][param_id])
            param_offset = int(self.grad_start_offset[group_idx][partition_id][param_id])
            numel = min(param.numel() - param_offset, partition_size - source_offset)
            slices[partition_id].append((param_index, source_offset, param_offset, rank_numels[partition_id], numel))
            rank_numels[partition_id] += numel
    outputs = [[torch.empty(param.shape, dtype=flat_buffers[0].dtype, device=device) for param in params]
               for _ in flat_buffers]
    if world_size == 1:
        for buffer, full in zip(flat_buffers, outputs):
            for param_index, source_offset, param_offset, _, numel in slices[rank]:
                full[param_index].view(-1).narrow(0, param_offset, numel).copy_(buffer.narrow(0, source_offset, numel))
        return outputs
    chunk = max(rank_numels)
    nb = len(flat_buffers)
    local = torch.zeros(chunk * nb, dtype=flat_buffers[0].dtype, device=device)
    for _, source_offset, _, packed_offset, numel in slices[rank]:
        for index, buffer in enumerate(flat_buffers):
            local.narrow(0, index * chunk + packed_offset, numel).copy_(buffer.narrow(0, source_offset, numel))
    gathered = torch.empty(chunk * nb * world_size, dtype=local.dtype, device=device)
    dist.all_gather_into_tensor(gathered, local, group=process_group)
    for partition_id, partition_slices in enumerate(slices):
        for param_index, _, param_offset, packed_offset, numel in partition_slices:
            for index, full in enumerate(outputs):
                src = partition_id * chunk * nb + index * chunk + packed_offset
                full[param_index].view(-1).narrow(0, param_offset, numel).copy_(gathered.narrow(0, src, numel))
    return outputs


def _offloaded_muon_groups(self, dist):
    """Under ZeRO-1/2 optimizer offload, per group holding Muon params: (group index, its Muon params,
    its process group, this rank in it, the partition size, the fp32 partition's gradient, its
    momentum_buffer in the optimizer state, whether that buffer was created zeroed just now)."""
    for group_idx, group in enumerate(self.round_robin_bit16_groups):
        muon_params = [p for p in group if getattr(p, "use_muon", False)]
        if not muon_params:
            continue
        flat_param = self.single_partition_of_fp32_groups[group_idx]
        local_grad = flat_param.grad
        state = self.optimizer.state.setdefault(flat_param, {})
        momentum = state.get("momentum_buffer")
        created = momentum is None or momentum.numel() != local_grad.numel()
        if created:
            momentum = torch.zeros_like(flat_param)
            state["momentum_buffer"] = momentum
        process_group = self.real_dp_process_group[group_idx]
        yield (group_idx, muon_params, process_group, dist.get_rank(group=process_group), int(self.partition_size[group_idx]),
               local_grad, momentum, created)


def offload_runs_newton_schulz(original_scaled_global_norm):
    """After 0.19.8's _apply_muon_updates_cpu_offload (the change open PR #8464 proposes for RFC
    #8463), written into 0.19.6 by us: with offload_optimizer, 0.19.6's ZeRO-1/2 keep the reduced
    gradients in the CPU fp32 partition and never run muon_update (get_flat_partition is the
    no-offload path), so MuonWithAuxAdam.step applies the raw flat gradient as if orthogonalised:
    0 NS calls. step() calls scaled_global_norm once, right after the overflow check; the fix first
    runs the offload Muon step there and then the original norm. That step is 0.19.8's as
    offload-muon-gather-fp32's fix corrects it (_offload_muon_step_in_comm_dtype): 0.19.8's own
    gathers Newton-Schulz's input in fp32 whatever communication_data_type says, and a fix that
    brought that defect along would leave a case it explains failing comm-dtype-respected (0.19.6
    dp-2 seed-34 cases 5, 10, 35, 45, 46, 49, 86: NEW for that alone). Per-head (num_heads) and
    0.19.8's finiteness guard are left out (0.19.6's muon_update has neither: a skipped step's
    momentum is skip-advances-muon-momentum's), so is the gather cache."""
    import deepspeed.runtime.zero.stage_1_and_2 as s12

    @torch.no_grad()
    def apply_muon(self):
        from deepspeed.runtime.zero.muon.muon_optimizer import MuonWithAuxAdam
        if not isinstance(self.optimizer, MuonWithAuxAdam):
            return
        def gather(*args):   # one buffer: its full matrices, as 0.19.8's gather returns them
            return _muon_gather_partitions_0198(self, *args)[0]
        _offload_muon_step_in_comm_dtype(self, s12.muon_update, gather, lambda params, _: [params],
                                         per_head=False, finite_guard=False)

    # 0.19.6's offload path clips the raw gradient (its step() takes the norm of the fp32 partition's
    # .grad here and clips it in unscale_and_clip_grads); Muon put ahead of that norm would take the
    # unclipped gradient into the momentum and the norm over the updates (0.19.8's
    # offload-clip-muon-momentum-unclipped, which this fix must not bring into 0.19.6): with a
    # clip, the raw partitions are clipped first (PR #7776's order) and step() then only unscales.
    clipped_muon = _clip_raw_partitions_then(
        apply_muon, lambda self: [m.grad for m in self.single_partition_of_fp32_groups])

    def scaled_global_norm(self, norm_type=2):
        from deepspeed.runtime.zero.muon.muon_optimizer import MuonWithAuxAdam
        if self.cpu_offload and isinstance(self.optimizer, MuonWithAuxAdam):
            clipped_muon(self)
        return original_scaled_global_norm(self, norm_type)

    return scaled_global_norm


def bf16_optimizer_runs_newton_schulz(original_step):
    """Ours, in place of what PR #8526 (for #8461; in 0.19.8) added to BF16_Optimizer
    (_prepare_muon_updates): 0.19.6's BF16_Optimizer (ZeRO-1, bf16 params, fp32 accumulation) hands
    MuonWithAuxAdam.step flat 1-D partitions, which its step reads as already orthogonalised, and
    nothing ran Muon: the step is SGD. The fix runs muon_update, before the original step, on the
    full fp32 gradient of every Muon matrix (fp32_groups_gradients, the reduced gradient every rank
    holds), with a full-shape fp32 momentum kept per matrix (every rank the same), and writes the
    update into the gradient in place. Not the PR's diff: 0.19.8 exchanges the matrices so each is
    orthogonalised on one rank; here every rank runs each.
    Two things the fix must not change where 0.19.6 is right: with gradient_clipping, 0.19.6's step()
    clips the raw gradient (bf16_optimizer.py:307-327); Muon ahead of that would take the unclipped
    gradient into the momentum and the clip norm over the updates (0.19.8's order, #8439), so the
    raw gradients are clipped here first, by step()'s own norm and clip, and the original step then
    runs with clip_grad 0. And the momenta live in the wrapped optimizer's state of each Muon
    group's flat partition (key "muoncheck_muon_momentum", a list of full-shape tensors, which
    _lazy_init_hp_params_optimizer_state leaves alone), so DeepSpeed's checkpoint saves and
    restores them (an attribute of the optimizer did not survive save_checkpoint/load_checkpoint:
    the resumed run restarted the momentum from zero)."""
    import deepspeed.runtime.zero.muon.original_muon as om
    from deepspeed.runtime.utils import clip_tensors_by_global_norm, get_global_norm_of_tensors

    def momenta_of(self, i, params):
        state = self.optimizer.state.setdefault(self.fp32_groups_flat_partition[i], {})
        held = state.get("muoncheck_muon_momentum")
        if held is None or len(held) != len(params):
            held = state["muoncheck_muon_momentum"] = [
                torch.zeros(p.shape, dtype=torch.float32, device=self.fp32_groups_gradients[i][0].device)
                if p is not None else torch.zeros(0) for p in params]
        return held

    def step(self, closure=None):
        muon_groups = [i for i, group in enumerate(self.optimizer.param_groups) if group.get("use_muon", False)]
        if not muon_groups:
            return original_step(self, closure=closure)
        clip = self.clip_grad
        raw_norm = None
        with torch.no_grad():
            if clip > 0.0 and not self.has_moe_layers:
                raw_norm = get_global_norm_of_tensors(input_tensors=self.get_grads_for_norm()[0], mpu=self.mpu,
                                                      norm_type=self.norm_type, use_graph=self.graph_harvesting)
                clip_tensors_by_global_norm(input_tensors=self.get_grads_for_norm(for_clipping=True), max_norm=clip,
                                            global_norm=raw_norm, mpu=self.mpu, use_graph=self.graph_harvesting)
            for i in muon_groups:
                group = self.optimizer.param_groups[i]
                params = [p if getattr(p, "use_muon", False) and p.dim() >= 2 else None for p in self.bf16_groups[i]]
                momenta = momenta_of(self, i, params)
                for j, param in enumerate(params):
                    if param is None:
                        continue
                    grad = self.fp32_groups_gradients[i][j]
                    m = momenta[j]
                    if m.dtype != torch.float32 or m.shape != param.shape:
                        m = momenta[j] = m.to(torch.float32).reshape(param.shape)
                    update = om.muon_update(grad.view(param.shape).clone(), m, beta=group["momentum"],
                                            ns_method=group.get("ns_method", "gram"),
                                            is_expert_group=getattr(param, "is_expert_group", False))
                    grad.copy_(update.reshape(grad.shape).to(grad.dtype))
        if raw_norm is None:
            return original_step(self, closure=closure)
        self.clip_grad = 0.0
        try:
            return original_step(self, closure=closure)
        finally:
            self.clip_grad = clip
            self._global_grad_norm = raw_norm

    return step


def momentum_in_grad_dtype(original_muon_update):
    """After DeepSpeed PR #8433 (fixes #7746; in 0.19.8, where ZeRO-1/2 keep the flat momentum in
    the dtype muon_update needs, `_muon_momentum_buffer`): 0.19.6's ZeRO-1/2 create the momentum in
    the gradient's dtype but a checkpoint restores it in fp32, so on resume with bf16 gradients
    momentum.lerp_(grad) raises "expected dtype float for `end` but got dtype BFloat16". The fix
    replaces the muon_update stage_1_and_2 bound at import: a momentum of another dtype than the
    gradient is brought to the gradient's dtype for the update and written back in place."""

    def muon_update(grad, momentum, *args, **kwargs):
        if momentum.dtype == grad.dtype:
            return original_muon_update(grad, momentum, *args, **kwargs)
        m = momentum.to(grad.dtype)
        update = original_muon_update(grad, m, *args, **kwargs)
        momentum.copy_(m)
        return update

    return muon_update


def compact_output_kept_when_ranges_merge(original_average_tensor):
    """Ours (0.19.8): with reduce_scatter, average_tensor walks the IPG bucket slice by slice and
    merges a slice into the range before it when both go to the same rank with the same consumers;
    a slice of a group 0.19.8 keeps in its compact fp32 partition buffer (bf16 params accumulating
    in fp32, groups without Muon) carries that buffer's slice as its output, where the reduced
    values are added. The merge tests only the new slice's output (`grad_partition_output is None`)
    and writes None as the merged range's output, so a compact slice followed by a slice without one
    (a Muon group's parameter) loses its output: the reduced gradient of that AdamW parameter never
    reaches the fp32 buffer and the step reads zeros. The fix the shipped code needs is one more
    condition on the merge, that the previous range has no output either
    (`rank_and_offsets[-1][4] is None`). Here, for the duration of the call, the slice a merge would
    drop a real output for gets a scratch output instead, so it opens a range of its own, exactly
    where the corrected condition opens one (the reduced values added to the scratch are thrown
    away; a slice after it merges into that range as before, its output then None)."""

    def average_tensor(self, tensor, communication_data_type):
        if (not getattr(self, "reduce_scatter", False) or "_get_compact_grad_partition_slice" in self.__dict__
                or not hasattr(self, "_get_compact_grad_partition_slice")):
            return original_average_tensor(self, tensor, communication_data_type)
        plain = self._get_compact_grad_partition_slice
        previous_has_output = [False]

        def compact_slice(group_idx, partition_id, param_id, num_elements):
            output = plain(group_idx, partition_id, param_id, num_elements)
            if output is None and previous_has_output[0]:
                previous_has_output[0] = False
                return torch.empty(int(num_elements), dtype=torch.float32, device=tensor.device)
            previous_has_output[0] = output is not None
            return output

        self._get_compact_grad_partition_slice = compact_slice
        try:
            return original_average_tensor(self, tensor, communication_data_type)
        finally:
            del self._get_compact_grad_partition_slice

    return average_tensor


def buckets_by_dtype(original_split_half_float_double):
    """DeepSpeed PR #8382 (in 0.19.8): stage_1_and_2.split_half_float_double sorts gradients into
    dtype buckets by legacy type strings built from the accelerator's device name,
    "torch.{device}.FloatTensor"; a CPU tensor's type() is "torch.FloatTensor" (no device part), so
    on CPU no gradient matches, buffered_reduce_fallback (ZeRO-1/2 with contiguous_gradients false)
    gets no bucket and issues no all-reduce, and every rank steps on its own gradient. The PR
    compares dtypes (strided tensors only, as a sparse gradient cannot join the dense all-reduce
    buffer); here that function replaces 0.19.6's, which buffered_reduce_fallback looks up at call
    time."""

    def split_half_float_double(tensors):
        buckets = []
        for dtype in (torch.half, torch.float, torch.double, torch.bfloat16):
            bucket = [t for t in tensors if t.dtype == dtype and t.layout == torch.strided]
            if bucket:
                buckets.append(bucket)
        return buckets

    return split_half_float_double


def zero3_muon_for_noncontiguous_buckets(original_reduce_and_partition):
    """Ours, with PR #8600's placement (Muon once per step on the accumulated gradients, the
    back-port's _apply_muon_to_accumulated_grads): 0.19.6's ZeRO-3 runs Muon only inside
    __avg_scatter_contiguous_grads (stage3.py:1772), which __reduce_and_partition_ipg_grads takes
    only `if self.contiguous_gradients and bucket.elements <= self.reduce_bucket_size and not
    self.reduce_scatter` (stage3.py:1598); every other bucket (contiguous_gradients false, or one
    parameter larger than reduce_bucket_size) goes through __avg_scatter_grads, which runs no Muon,
    and MuonWithAuxAdam.step applies the raw gradient as if orthogonalised (0 NS calls). The fix,
    for a bucket that takes that path, records its Muon params and binds _get_norm_groups (called
    only by step(), where PR #8600 runs Muon) once on the instance to run Muon for them first; a
    bucket that takes the contiguous path is left as shipped (its per-micro-batch Muon is
    zero3-muon-per-microbatch's). With that fix as well its step hook runs every Muon param (both
    set no reduce-path Muon then). Without optimizer offload only (under offload:
    zero3_offload_muon_for_noncontiguous_buckets)."""

    def reduce_and_partition(self, communication_data_type):
        if self.use_muon and not self.offload_optimizer:
            bucket = self.ipg_buckets[communication_data_type]
            contiguous = (self.contiguous_gradients and bucket.elements <= self.reduce_bucket_size
                          and not self.reduce_scatter)
            muon = [p for p in bucket.params if self.sub_groups_using_muon[self.grad_position[self.get_param_id(p)][0]]]
            if muon and not contiguous:
                _bind_muon_before_norm(self, muon)
        return original_reduce_and_partition(self, communication_data_type)

    return reduce_and_partition


def _zero3_offload_muon_at_step(self, only=None):
    """0.19.6's ZeRO-3 under optimizer offload, Muon once per step on the offloaded fp32 gradient
    partitions (fp32_partitioned_groups_flat[i].grad, the place 0.19.8's _apply_muon_updates_cpu_offload
    reads), run where PR #8600 runs it (before step()'s norm). As offload-muon-gather-fp32's fix does
    for 0.19.8's ZeRO-1/2: the momentum step and the Nesterov blend (muon_update's, elementwise) run
    on this rank's fp32 slice against the fp32 momentum in the optimizer state (never rounded to the
    communication dtype), only the blend is all-gathered, in communication_data_type and in chunks
    bounded by reduce_bucket_size, and Newton-Schulz runs as shipped on it taken back to fp32
    (muon_update with beta 0 returns NS(blend) times the scale); this rank's slice of the update is
    written back, and the norm step() takes of that param (norm_for_param_grads, recorded at the
    boundary from the raw partition) is re-taken from it, as the shipped contiguous path has it
    (Muon before partition_grads records it). `only`: the ids of the params to run it for (None:
    all). A sub-group swapped to NVMe is left as shipped (not covered)."""
    import deepspeed.comm as dist
    import deepspeed.runtime.zero.stage3 as s3
    beta = self.muon_beta
    for i, all_params in enumerate(self.fp16_groups):
        if not self.sub_groups_using_muon[i] or not all_params or self._swappable_optimizer_subgroup(i):
            continue
        flat = self.fp32_partitioned_groups_flat[i]
        if flat.grad is None:
            continue
        group = [q for q in all_params if only is None or id(q) in only]
        if not group:
            continue
        if self.save_muon_momentum_buffer_in_memory:
            state_buffer = self.muon_momentum_buffer_partitioned_groups_flat[i]
            self.optimizer.state[flat]["momentum_buffer"] = state_buffer
        else:
            if "momentum_buffer" not in self.optimizer.state.get(flat, {}):
                self._create_momentum_buffer(self.fp16_partitioned_groups_flat_numel[i], i, flat.ds_id)
            state_buffer = self.optimizer.state[flat]["momentum_buffer"]
        rank = dist.get_rank(group=self._get_sub_group_process_group(i))
        for start, end in _reduce_bucket_ranges(group, self.reduce_bucket_size):
            params = group[start:end]
            offsets = [self.grad_position[self.get_param_id(q)][1] for q in params]
            slices = [flat.grad.narrow(0, off, q.partition_numel()) for q, off in zip(params, offsets)]
            blends = []
            for q, off, g in zip(params, offsets, slices):
                m = state_buffer.narrow(0, off, q.partition_numel())
                m.lerp_(g.to(m.dtype), 1 - beta)
                blends.append(g.lerp(m.to(g.dtype), beta))   # muon_update's Nesterov blend
            gathered = self._partitioned_buffers_all_gather(params, blends, self.communication_data_type)
            for param, g, blend in zip(params, slices, gathered):   # `param`: the NS counter's name
                full = blend.to(flat.grad.dtype)
                update = s3.muon_update(full, torch.zeros_like(full), beta=0.0,
                                        ns_method=getattr(self, 'muon_ns_method', 'gram'))
                offset = rank * param.partition_numel()
                num_elements = max(0, min(param.partition_numel(), param.ds_numel - offset))
                if num_elements > 0:
                    g.narrow(0, 0, num_elements).copy_(update.reshape(-1).narrow(0, offset, num_elements))
                self.norm_for_param_grads[self.get_param_id(param)] = self._constant_buffered_norm2(
                    g.to(update.device))


def _bind_muon_before_norm(self, params=None, offload=False, clip_first=False):
    """Asks for the per-step Muon (_pr8600_apply_muon_to_accumulated_grads) ahead of step()'s norm:
    `params` (None: every Muon param) recorded where zero3_muon_at_step and
    zero3_muon_for_noncontiguous_buckets record theirs, `offload`/`clip_first` as flags for it, and
    _get_norm_groups (called only by step(), where PR #8600 runs Muon) bound once on the instance
    to run it first (the hook either of those fixes binds reads the same records)."""
    if params is None:
        self.__dict__["_muoncheck_muon_at_step_all"] = True
    else:
        self.__dict__.setdefault("_muoncheck_unmuoned", set()).update(id(p) for p in params)
    if offload:
        self.__dict__["_muoncheck_offload_muon"] = True
    if clip_first:
        self.__dict__["_muoncheck_clip_first"] = True
    if "_get_norm_groups" not in self.__dict__:
        norm_groups = type(self)._get_norm_groups

        def _get_norm_groups_after_muon(*a, **k):
            del self._get_norm_groups
            every = self.__dict__.pop("_muoncheck_muon_at_step_all", False)
            only = self.__dict__.pop("_muoncheck_unmuoned", set())
            _pr8600_apply_muon_to_accumulated_grads(self, None if every else only)
            return norm_groups(self, *a, **k)

        self._get_norm_groups = _get_norm_groups_after_muon


def _reduce_without_reduce_path_muon(original, self, communication_data_type):
    """`original` (__reduce_and_partition_ipg_grads) with the contiguous path's Muon
    (_apply_distributed_muon_update, stage3.py:1772) turned off for this call."""
    self._apply_distributed_muon_update = lambda *a, **k: None
    try:
        return original(self, communication_data_type)
    finally:
        del self._apply_distributed_muon_update


def _zero3_0196_clip_first(original_reduce_and_partition, offload):
    def reduce_and_partition(self, communication_data_type):
        if (self.use_muon and bool(self.offload_optimizer) == offload and self.clip_grad and self.clip_grad > 0.0
                and self.ipg_buckets[communication_data_type].params):
            _bind_muon_before_norm(self, None, offload=offload, clip_first=True)
            return _reduce_without_reduce_path_muon(original_reduce_and_partition, self, communication_data_type)
        return original_reduce_and_partition(self, communication_data_type)

    return reduce_and_partition


def zero3_reduce_path_clip_raw_gradient_before_muon(original_reduce_and_partition):
    """Ours, PR #7776's order (for #8439) at 0.19.6's ZeRO-3 without offload: Muon runs in the reduce
    path (_apply_distributed_muon_update from __avg_scatter_contiguous_grads, stage3.py:1772), during
    backward, before step() takes the norm (_get_norm_groups, stage3.py:2393) and clips
    (unscale_and_clip_grads, stage3.py:2701), so the momentum takes the unclipped gradient and the clip
    norm is over the orthogonalised updates. The raw gradient can only be clipped once the step's
    whole gradient is there, so with gradient_clipping on the fix turns the reduce-path Muon off and
    runs Muon once per step ahead of the norm (PR #8600's placement, the back-port's
    _apply_muon_to_accumulated_grads; this also removes zero3-muon-per-microbatch's per-micro-batch
    Muon, as PR #8600 does), the raw accumulated partitions clipped first by step()'s factor; this
    step's unscale_and_clip_grads then only unscales. Without clipping, as shipped."""
    return _zero3_0196_clip_first(original_reduce_and_partition, offload=False)


def zero3_offload_reduce_path_clip_raw_gradient_before_muon(original_reduce_and_partition):
    """Ours, PR #7776's order (for #8439) at 0.19.6's ZeRO-3 under optimizer offload: as
    zero3_reduce_path_clip_raw_gradient_before_muon, Muon moved from the reduce path to once per
    step on the offloaded fp32 gradient partitions (_zero3_offload_muon_at_step), which are
    clipped first."""
    return _zero3_0196_clip_first(original_reduce_and_partition, offload=True)


def zero3_offload_muon_for_noncontiguous_buckets(original_reduce_and_partition):
    """Ours: 0.19.6's ZeRO-3 under optimizer offload runs Muon only inside
    __avg_scatter_contiguous_grads (stage3.py:1772), taken only `if self.contiguous_gradients and
    bucket.elements <= self.reduce_bucket_size and not self.reduce_scatter` (stage3.py:1598); a bucket
    reduced by __avg_scatter_grads (contiguous_gradients false, or a parameter larger than
    reduce_bucket_size) reaches the offloaded fp32 gradient raw and MuonWithAuxAdam.step applies it
    as if orthogonalised (0 NS calls): zero3-noncontiguous-no-newton-schulz under offload. The fix
    records such a bucket's Muon params and runs Muon for them once per step, ahead of step()'s norm,
    on the offloaded fp32 partitions (_zero3_offload_muon_at_step); contiguous buckets as shipped."""

    def reduce_and_partition(self, communication_data_type):
        if self.use_muon and self.offload_optimizer:
            bucket = self.ipg_buckets[communication_data_type]
            contiguous = (self.contiguous_gradients and bucket.elements <= self.reduce_bucket_size
                          and not self.reduce_scatter)
            muon = [p for p in bucket.params if self.sub_groups_using_muon[self.grad_position[self.get_param_id(p)][0]]]
            if muon and not contiguous:
                _bind_muon_before_norm(self, muon, offload=True)
        return original_reduce_and_partition(self, communication_data_type)

    return reduce_and_partition


def _pr8440_muon_param_groups(model_parameters, optimizer_parameters):
    """PR #8440's DeepSpeedEngine._muon_param_groups (0.19.8 runtime/engine.py), re-expressed: each
    incoming param group split into its Muon and its Adam half, settings resolved
    most-specific-last (the config's shared value, then muon_lr / adam_lr, then what the group
    itself sets), a named group's halves named NAME-muon-params / NAME-adam-params."""
    halves = (("muon", True, ("lr", "momentum", "weight_decay", "ns_method"), "muon_lr"),
              ("adam", False, ("lr", "betas", "eps", "weight_decay"), "adam_lr"))
    groups, loose = [], []
    for item in model_parameters:
        (groups if isinstance(item, dict) else loose).append(item)
    if loose or not groups:
        groups.append({"params": loose})
    param_groups = []
    for index, group in enumerate(groups):
        overrides = {k: v for k, v in group.items() if k != "params"}
        trainable = [p for p in group["params"] if p.requires_grad]
        for label, use_muon, keys, lr_override in halves:
            half = [p for p in trainable if bool(p.use_muon) is use_muon]
            if not half:
                continue
            settings = {k: optimizer_parameters[k] for k in keys if k in optimizer_parameters}
            if lr_override in optimizer_parameters:
                settings["lr"] = optimizer_parameters[lr_override]
            settings.update({k: v for k, v in overrides.items() if k in keys})
            prefix = overrides.get("name") or (f"group{index}" if len(groups) > 1 else None)
            name = f"{prefix}-{label}-params" if prefix else f"{label}-params"
            param_groups.append(dict(params=half, use_muon=use_muon, name=name, **settings))
    return param_groups


def muon_keeps_param_groups(original_configure_basic_optimizer):
    """DeepSpeed PR #8440 ("Muon silently discards the param groups it is given"; in 0.19.8): 0.19.6's
    _configure_basic_optimizer flattens model_parameters into one list for Muon (runtime/engine.py
    l. 2285-2291) and rebuilds two groups, muon-params and adam-params, from the config alone
    (l. 2297-2317), so a group's own weight_decay (or lr) never reaches the optimizer: the params a
    user excluded from decay are decayed at the config's rate. The PR splits each incoming group
    into its two halves, keeping the group's settings. Here the original runs as shipped (its
    adam-optimizer choice; its MoE regrouping, repeated on the kept groups) with the engine
    module's MuonWithAuxAdam bound, for the call, to one that receives the PR's groups in place of
    the flattened ones."""
    import deepspeed.runtime.engine as engine_module

    def _configure_basic_optimizer(self, model_parameters):
        if self.optimizer_name() != engine_module.MUON_OPTIMIZER:
            return original_configure_basic_optimizer(self, model_parameters)
        model_parameters = list(model_parameters)
        shipped = engine_module.MuonWithAuxAdam
        groups = _pr8440_muon_param_groups(model_parameters, dict(self.optimizer_params() or {}))
        if self.has_moe_layers:
            from deepspeed.moe.utils import split_params_into_different_moe_groups_for_optimizer
            groups = split_params_into_different_moe_groups_for_optimizer(groups)

        def with_kept_groups(param_groups, **kwargs):
            return shipped(groups, **kwargs)

        engine_module.MuonWithAuxAdam = with_kept_groups
        try:
            return original_configure_basic_optimizer(self, model_parameters)
        finally:
            engine_module.MuonWithAuxAdam = shipped

    return _configure_basic_optimizer
