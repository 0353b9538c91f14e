"""muon-optimizer's known defects' fixes (reports/muon-optimizer/upstream/), as the registry
adapters/muon-optimizer/known_defects.json names them: each a function of the original that returns
its replacement (adapters/common/fixes.py applies it before a case that asks for it, reverts it after).
The two muon_update fixes each handle one rank and leave the others to the original, so a failure is
attributed to the defect of its own shape."""
import functools

import torch
import torch.distributed as dist


def _matrix_view(original, ndim):
    """The update of a `ndim`-D weight: NS of its (rows, prod(rest)) view, scaled by that view's
    shape, reshaped back; every other rank goes to the original (`__wrapped__`: a second fix of the same
    function checks its `expects` line against the package's source)."""
    @functools.wraps(original)
    def muon_update(grad, momentum, beta=0.95, ns_steps=5, nesterov=True):
        if grad.ndim != ndim:
            return original(grad, momentum, beta=beta, ns_steps=ns_steps, nesterov=nesterov)
        import muon
        momentum.lerp_(grad, 1 - beta)
        update = grad.lerp_(momentum, beta) if nesterov else momentum
        view = update.reshape(len(update), -1)
        out = muon.zeropower_via_newtonschulz5(view, steps=ns_steps) * max(1, view.size(0) / view.size(1)) ** 0.5
        return out.reshape(grad.shape)
    return muon_update


def conv_matrix_view(original):
    """4-D (conv) weights: 0.1.0 flattens them for NS but scales by kh/kw and returns the flat update."""
    return _matrix_view(original, 4)


def rank3_matrix_view(original):
    """3-D weights: 0.1.0 hands them to NS as a batch of slices."""
    return _matrix_view(original, 3)


def owner_broadcast(original):
    """Muon.step / MuonWithAuxAdam.step gather each chunk of W params with one all_gather (one shape per
    chunk needed; the last chunk padded to len % W, not W): each param is broadcast from the rank that
    stepped it instead; MuonWithAuxAdam's AdamW groups run as shipped."""
    @torch.no_grad()
    def step(self, *args):
        import muon
        world, rank = dist.get_world_size(), dist.get_rank()
        muon_groups = [g for g in self.param_groups if g.get("use_muon", True)]
        for group in muon_groups:
            for i, p in enumerate(group["params"]):
                if i % world == rank:
                    state = self.state[p]
                    if len(state) == 0:
                        state["momentum_buffer"] = torch.zeros_like(p)
                    update = muon.muon_update(p.grad, state["momentum_buffer"], beta=group["momentum"])
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                    p.add_(update.reshape(p.shape), alpha=-group["lr"])
            for i, p in enumerate(group["params"]):
                dist.broadcast(p.data, src=i % world)
        if len(muon_groups) < len(self.param_groups):
            saved = self.param_groups
            self.param_groups = [g for g in saved if not g.get("use_muon", True)]
            try:
                original(self)
            finally:
                self.param_groups = saved
    return step
