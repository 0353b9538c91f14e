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
    written into p.grad before the original step runs."""
    from deepspeed.runtime.zero.muon.original_muon import muon_update

    @torch.no_grad()
    def step(self, closure=None, step_id=None):
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
