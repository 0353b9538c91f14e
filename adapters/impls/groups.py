"""Param groups as a user writes them: one group per rate and decay, not one per parameter.

muoncheck hands a plugin one group per parameter, in the scenario's order of that kind. Optimizers
that split work across ranks within a group (muon-optimizer's Muon, pytorch-optimizer's
DistributedMuon) would then run every parameter on rank 0; merged groups keep the split a user's
model gets. Parameters merge only when their rate is the same at every step (same lr scale, decay
and schedule): muoncheck sets a group's rate from its first parameter before every step."""
import json


def rate(ps):
    """What must be alike for two parameters to share a group: decay, lr scale and schedule."""
    return ps.weight_decay, ps.lr_scale, json.dumps(ps.lr_schedule, sort_keys=True)


def merged(groups, specs):
    """`groups` and their parameters' scenario entries (`specs`, same order) -> merged groups."""
    out, keys = [], []
    for g, ps in zip(groups, specs):
        key = (g["lr"], g["weight_decay"], *rate(ps))
        if key in keys:
            out[keys.index(key)]["params"].extend(g["params"])
        else:
            keys.append(key)
            out.append({**g, "params": list(g["params"])})
    return out


def of_kind(s, use_muon):
    return [p for p in s.params if p.use_muon == use_muon]


# NS observations the packages need beyond the generic counter (adapters/common/ns_counter.py).

class ClampNorm:
    """An NS observer (`ns_observers`) for a package whose NS divides by max(‖U‖, 1e-7) where the
    semantics divide by ‖U‖ + 1e-7: both divisors from the call's own input, rounded to the
    scenario's ns_dtype (`plugin.ns_dtype`, set by its factory); where they differ (an fp32 NS of a
    matrix whose norm is below about 1.7) the run is declined after the fact."""

    def __init__(self, plugin):
        self.plugin, self.calls, self.differing = plugin, 0, []

    def __call__(self, G, out, *args, **kwargs):
        import torch
        from torch.utils._python_dispatch import _disable_current_modes
        name = getattr(self.plugin, "ns_dtype", "fp32")
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(name, torch.float32)
        with torch.no_grad(), _disable_current_modes():   # our gather of a DTensor input: not the package's collective
            n = (G.full_tensor() if hasattr(G, "full_tensor") else G).detach().float().norm()
            clamped, added = n.clamp(min=1e-7).to(dtype), (n + 1e-7).to(dtype)
        self.calls += 1
        if not torch.equal(clamped, added):
            self.differing.append(f"NS input norm {float(n):.3e} ({name}): max(n, 1e-7) and n + 1e-7 differ in {name}")


def clamp_norm(plugin):
    return [ClampNorm(plugin)]


def count_by_shape(counter, scenario):
    """NS calls attributed by matrix shape, for an optimizer that stacks same-shape matrices into one
    batched call and whose NS caller holds a stale `p` (pytorch-optimizer's Muon, foreach or DTensor
    path): each matrix of a call is one call of the first Muon parameter of that shape (transposed or
    not) not yet counted this step — the optimizer walks its groups' params in order, and its foreach
    batch stacks a tall matrix transposed beside wide ones of that shape (keyed by (min, max) under
    use_adjusted_lr); a matrix no such parameter is left for is unattributed (a second NS shows). DistributedMuon's calls
    of one matrix are the counter's own (its caller's `p` is the param it steps)."""
    import types
    muon, single = {i for i, p in enumerate(scenario.params) if p.use_muon}, counter._record
    distributed = (getattr(scenario, "config", None) or {}).get("class") == "DistributedMuon"

    def record(self, G, out):
        if G.ndim != 3 and distributed:
            return single(G, out)
        self.dtypes.add(str(out.dtype).replace("torch.", ""))
        rows, cols, batch = int(G.shape[-2]), int(G.shape[-1]), int(G.shape[0]) if G.ndim == 3 else 1
        both = {*self.shapes.get((rows, cols), []), *self.shapes.get((cols, rows), [])}   # a batch holds either
        candidates = sorted(i for i in both if i in muon)
        free = [i for i in candidates if self.calls.get(i, 0) == 0][:batch]
        for index in free:
            self.calls[index] = self.calls.get(index, 0) + 1
            self.heads[index] = 0
        self.unattributed += batch - len(free)
    counter._record = types.MethodType(record, counter)
