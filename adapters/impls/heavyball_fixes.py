"""heavyball's known defects' fixes (reports/heavyball/upstream/), as the registry
adapters/heavyball/known_defects.json names them: each a function of the original that returns its
replacement (adapters/common/fixes.py applies it before a case that asks for it, reverts it after).
Each changes only the line at fault and leaves every other path to the shipped code, so a failing
case is attributed to the defect of its own line."""
import functools

import torch


def ns_input_round_to_nearest(original):
    """heavyball/utils.py, zeropower_via_newtonschulz5:
    `x = G if G.dtype == torch.float64 else stochastic_round_(G)` rounds the normalized NS input to
    bf16 stochastically, drawing from torch's global generator, so the update depends on the random
    stream and every step advances the caller's generator. The replacement rounds it to nearest
    (`G.to(torch.bfloat16)`, what the semantics' NS dtype cast does); the normalization, the five
    quintic iterations and the cast back are the shipped ones, line for line."""
    @functools.wraps(original)
    def zeropower_via_newtonschulz5(G, steps=5, eps=1e-7):
        assert G.ndim >= 2
        assert steps == 5
        G = G / G.norm(dim=(-2, -1), keepdim=True).clamp(min=eps)
        x = G if G.dtype == torch.float64 else G.to(torch.bfloat16)
        if G.size(-2) > G.size(-1):
            x = x.mT
        for a, b, c in [
            (4.0848, -6.8946, 2.9270),
            (3.9505, -6.3029, 2.6377),
            (3.7418, -5.5913, 2.3037),
            (2.8769, -3.1427, 1.2046),
            (2.8366, -3.0525, 1.2012),
        ]:
            s = x @ x.mT
            y = c * s
            y.diagonal(dim1=-2, dim2=-1).add_(b)
            y = y @ s
            y.diagonal(dim1=-2, dim2=-1).add_(a)
            x = y @ x
        if G.size(-2) > G.size(-1):
            x = x.mT
        return x.to(G.dtype)
    return zeropower_via_newtonschulz5


def _reduce_dtypes():
    """{id(sharded parameter): the dtype FSDP2 reduces its gradient in}."""
    from ..common.fsdp2_params import fsdp_params, reduce_dtype
    return {id(p.sharded_param): reduce_dtype(p) for p in fsdp_params()}


def update_gathered_in_reduce_dtype(original):
    """heavyball/chainable.py, TagGuard._call, the needs_full_param path:
    `full_update = _full_tensor(update)`, `full_grad = _full_tensor(grad)`,
    `full_param = _full_tensor(param)` all-gather the update, the gradient and the parameter of every
    sharded matrix whole, in fp32, on every rank, before orthogonalize_update (Muon's only
    needs_full_param function), which reads the update alone. The replacement, for
    orthogonalize_update under FSDP2: the update alone is gathered, cast to the dtype FSDP2 reduces
    that parameter's gradient in (the comm dtype) for the gather and back to the update's dtype
    after, so NS normalizes the gathered values as heavyball does; the gradient and the parameter
    stay local shards. The result is written back to the local shard as shipped
    (_write_full_tensor). Every other function (those that read the full gradient or parameter),
    error-correcting (`_ecc`) state, or a DTensor FSDP2 does not own goes to the original."""
    @functools.wraps(original)
    def _call(self, state, group, update, grad, param, vars, *args, **kwargs):
        from heavyball import chainable, utils
        orthogonalize = chainable.orthogonalize_update.get_fn()
        if (not getattr(self, "needs_full_param", False) or self.get_fn() is not orthogonalize
                or not any(isinstance(v, utils.DTensor) for v in (*update, *grad, *param))
                or any(getattr(v, "_ecc", None) is not None for v in update)):
            return original(self, state, group, update, grad, param, vars, *args, **kwargs)
        dtypes = _reduce_dtypes()
        if any(isinstance(u, utils.DTensor) and id(p) not in dtypes for u, p in zip(update, param)):
            return original(self, state, group, update, grad, param, vars, *args, **kwargs)
        full_update = [u.to(dtypes[id(p)]).full_tensor().to(u.dtype) if isinstance(u, utils.DTensor) else u
                       for u, p in zip(update, param)]
        result = self.fn(state, group, full_update, grad, param, *args, **kwargs)
        if result is chainable._SKIP:
            for target, source in zip(update, full_update, strict=True):
                chainable._write_full_tensor(target, source)
            return result
        if result is None:
            return None
        return [chainable._write_full_tensor(target, source) for target, source in zip(update, result, strict=True)]
    return _call
