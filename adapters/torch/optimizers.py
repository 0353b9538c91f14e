"""Optimizer factories: what the torch adapter trains the scenario's parameters with.

A factory is `factory(muon_groups, adam_groups, scenario) -> [optimizer, ...]`. Each group is a
torch param-group dict holding one parameter with the `lr` and `weight_decay` the scenario's
`optimizer.groups` give it (already applied by `muoncheck resolve`); the factory adds whatever
else its optimizers need. Pass one to the adapter as `--optimizer-factory module:attribute`.

`torch_muon` is the conforming mapping onto torch.optim.Muon + torch.optim.AdamW. The broken
ones exist to show that conformance can fail (tests/torch): `no_nesterov` switches Nesterov off
whatever the scenario says, `momentum_ignores_beta` runs Muon with momentum 0 (the buffer is the
last gradient).
"""
import torch

# scenario scale_rule -> torch's adjust_lr_fn (torch/optim/_muon.py: _adjust_lr)
ADJUST_LR_FN = {"deepspeed": "original", "moonlight": "match_rms_adamw", "spectral": "spectral_unclamped"}
NORM_EPS = 1e-7   # torch's EPS; the scenario's NS divides by ‖U‖ + 1e-7 (semantics.py checks the difference)


def muon_kwargs(s):
    """The scenario as torch.optim.Muon's keyword arguments: `torch.optim.Muon(groups, **muon_kwargs(s))`."""
    return dict(lr=s.lr, weight_decay=s.weight_decay, momentum=s.momentum, nesterov=s.nesterov,
                ns_coefficients=tuple(s.ns_coefficients), eps=NORM_EPS, ns_steps=s.ns_steps,
                adjust_lr_fn=ADJUST_LR_FN[s.scale_rule])


def adamw_kwargs(s):
    """The scenario as torch.optim.AdamW's keyword arguments (the params Muon does not take)."""
    return dict(lr=s.adam["lr"], betas=tuple(s.adam["betas"]), eps=s.adam["eps"], weight_decay=s.weight_decay)


# What each optimizer class's settings must be, by class name (conformance.py compares the
# optimizers a factory built with these before judging).
EXPECTED_KWARGS = {"Muon": muon_kwargs, "AdamW": adamw_kwargs}


def torch_muon(muon_groups, adam_groups, s, nesterov=None, momentum=None):
    out = []
    if muon_groups:
        kw = muon_kwargs(s)
        if nesterov is not None:
            kw["nesterov"] = nesterov
        if momentum is not None:
            kw["momentum"] = momentum
        out.append(torch.optim.Muon(muon_groups, **kw))
    if adam_groups:
        out.append(torch.optim.AdamW(adam_groups, **adamw_kwargs(s)))
    return out


def no_nesterov(muon_groups, adam_groups, s):
    return torch_muon(muon_groups, adam_groups, s, nesterov=False)


def momentum_ignores_beta(muon_groups, adam_groups, s):
    return torch_muon(muon_groups, adam_groups, s, momentum=0.0)


def _plain(v):
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return float(v) if hasattr(v, "item") and getattr(v, "numel", lambda: 0)() == 1 else str(v)


def described(opts, name_of):
    """What the factory built, as JSON (the trace's details; `muoncheck repro --for torch` rebuilds it):
    each optimizer's class, its defaults and its groups (the param's name, every setting but the lr,
    which follows the schedule: details.lr_by_step)."""
    return [{"class": type(o).__name__, "defaults": {k: _plain(v) for k, v in o.defaults.items()},
             "groups": [{"param": name_of[id(g["params"][0])],
                         **{k: _plain(v) for k, v in g.items() if k not in ("params", "lr")}} for g in o.param_groups]}
            for o in opts]


def load_factory(spec):
    """`module:attribute` -> the factory (the module imported as usual, from PYTHONPATH)."""
    import importlib
    module, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"--optimizer-factory {spec!r}: expected module:attribute")
    return getattr(importlib.import_module(module), attr)
