"""Param groups as a user writes them: one group per rate and decay, not one per parameter.

muoncheck hands a plugin one group per parameter, in the scenario's order of that kind. Optimizers
that split work across ranks within a group (muon-optimizer's Muon, pytorch-optimizer's
DistributedMuon) would then run every parameter on rank 0; merged groups keep the split a user's
model gets. Parameters merge only when their rate is the same at every step (same lr scale, decay
and schedule): muoncheck sets a group's rate from its first parameter before every step."""
import json


def merged(groups, specs):
    """`groups` and their parameters' scenario entries (`specs`, same order) -> merged groups."""
    out, keys = [], []
    for g, ps in zip(groups, specs):
        key = (g["lr"], g["weight_decay"], ps.lr_scale, json.dumps(ps.lr_schedule, sort_keys=True))
        if key in keys:
            out[keys.index(key)]["params"].extend(g["params"])
        else:
            keys.append(key)
            out.append({**g, "params": list(g["params"])})
    return out


def of_kind(s, use_muon):
    return [p for p in s.params if p.use_muon == use_muon]
