"""muon-optimizer's known defects and their fixes (reports/muon-optimizer-upstream/): each a runtime
replacement in the `muon` module, applied before a case that asks for it and reverted after it."""
import torch
import torch.distributed as dist

from ..plugin import Fix


def _replace(obj, name, new):
    old = getattr(obj, name)
    setattr(obj, name, new)
    return lambda: setattr(obj, name, old)


def _matrix_view_update():
    """muon_update flattens only 4-D updates (3-D ones go to NS batched), scales by the layer shape's
    last two dimensions, and hands back the flattened shape: use the (rows, prod(rest)) view throughout."""
    import muon

    def muon_update(grad, momentum, beta=0.95, ns_steps=5, nesterov=True):
        momentum.lerp_(grad, 1 - beta)
        update = grad.lerp_(momentum, beta) if nesterov else momentum
        view = update.reshape(len(update), -1)
        out = muon.zeropower_via_newtonschulz5(view, steps=ns_steps) * max(1, view.size(0) / view.size(1)) ** 0.5
        return out.reshape(grad.shape)
    return _replace(muon, "muon_update", muon_update)


def _owner_broadcast():
    """Muon / MuonWithAuxAdam gather each chunk of W params with one all_gather, which needs one shape
    per chunk and a chunk padded to W: broadcast each param from the rank that stepped it instead."""
    import muon

    def muon_group(opt, group):
        world, rank = dist.get_world_size(), dist.get_rank()
        for i, p in enumerate(group["params"]):
            if i % world == rank:
                state = opt.state[p]
                if len(state) == 0:
                    state["momentum_buffer"] = torch.zeros_like(p)
                update = muon.muon_update(p.grad, state["momentum_buffer"], beta=group["momentum"])
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(update.reshape(p.shape), alpha=-group["lr"])
        for i, p in enumerate(group["params"]):
            dist.broadcast(p.data, src=i % world)

    def step(original):
        @torch.no_grad()
        def fixed(self, *args):
            muon_groups = [g for g in self.param_groups if g.get("use_muon", True)]
            for g in muon_groups:
                muon_group(self, g)
            if len(muon_groups) < len(self.param_groups):   # MuonWithAuxAdam: its AdamW groups as shipped
                saved = self.param_groups
                self.param_groups = [g for g in saved if not g.get("use_muon", True)]
                try:
                    original(self)
                finally:
                    self.param_groups = saved
        return fixed
    reverts = [_replace(cls, "step", step(cls.step)) for cls in (muon.Muon, muon.MuonWithAuxAdam)]
    return lambda: [r() for r in reverts]


FIXES = {f.id: f for f in (
    Fix("muon-optimizer-matrix-view-update", "3-D and 4-D weights: NS of the (rows, prod(rest)) view, its scale, "
        "the update reshaped back", _matrix_view_update),
    Fix("muon-optimizer-owner-broadcast", "each param broadcast from the rank that stepped it (any shapes, any count)",
        _owner_broadcast))}
