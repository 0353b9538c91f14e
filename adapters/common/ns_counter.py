"""Counts an optimizer's Newton–Schulz calls per parameter by wrapping its NS functions.

The functions are replaced by name in the module the optimizer looks them up in at call time
(`install(module, names)`; by default DeepSpeed's: `muon_update` finds them in
`deepspeed.runtime.zero.muon.original_muon`, so replacing them there sees every call, whichever
ZeRO path made it; torch.optim.Muon's `_single_tensor_muon` finds `_zeropower_via_newtonschulz`
in `torch.optim._muon`). Run with
TORCH_COMPILE_DISABLE=1: DeepSpeed decorates Muon with torch.compile, and a traced graph would
hide the Python-level call (it also saves minutes of compilation per shape).

Which parameter a call belongs to: the first caller frame (walking out from the NS function)
holding a local `param`, `p` or `tensor` that is one of the model's parameters — the names
DeepSpeed's ZeRO-1/2/3 loops and MuonWithAuxAdam use. Failing that, the one Muon-sized
parameter with that matrix shape; failing that, the call is counted as unattributed (which
`muoncheck verify` reports as a failure, never drops).
"""
import sys

_CALLER_LOCALS = ("param", "p", "tensor")
_NS_NAMES = ("zeropower_via_newtonschulz5", "zeropower_via_gram_newtonschulz")


class NsCounter:
    def __init__(self, named_params):
        self.index_of = {id(p): i for i, (_, p) in enumerate(named_params)}
        self.shapes = {}
        for i, (_, p) in enumerate(named_params):
            shape = tuple(getattr(p, "ds_shape", None) or p.shape)
            if len(shape) >= 2:
                key = (shape[0], 1 if len(shape) < 2 else int(_prod(shape[1:])))
                self.shapes.setdefault(key, []).append(i)
        self.calls = {}          # param index -> count in the current step
        self.heads = {}          # param index -> heads of the last call (0: whole matrix)
        self.unattributed = 0
        self.dtypes = set()      # dtypes the NS iteration produced (its arithmetic dtype)
        self.observers = []      # callables (G, out, *args) run after each counted call
        self._installed = []

    def reset_step(self):
        self.calls, self.unattributed = {}, 0

    def install(self, module=None, names=_NS_NAMES):
        if module is None:
            from deepspeed.runtime.zero.muon import original_muon as module
        for name in names:
            fn = getattr(module, name, None)
            if fn is not None:
                setattr(module, name, self._wrap(fn))
                self._installed.append((module, name, fn))

    def uninstall(self):
        for module, name, fn in self._installed:
            setattr(module, name, fn)
        self._installed = []

    def _wrap(self, fn):
        counter = self

        def counted(G, *args, **kwargs):
            out = fn(G, *args, **kwargs)
            counter._record(G, out)
            for observe in counter.observers:   # e.g. a check of the call's own input
                observe(G, out, *args, **kwargs)
            return out

        return counted

    def _record(self, G, out):
        self.dtypes.add(str(out.dtype).replace("torch.", ""))
        heads = int(G.shape[0]) if G.ndim == 3 else 0
        index = self._caller_param()
        if index is None:
            rows = int(G.shape[-2]) * (heads or 1)
            candidates = self.shapes.get((rows, int(G.shape[-1])), [])
            index = candidates[0] if len(candidates) == 1 else None
        if index is None:
            self.unattributed += 1
            return
        self.calls[index] = self.calls.get(index, 0) + 1
        self.heads[index] = heads

    def _caller_param(self):
        frame = sys._getframe(3)
        for _ in range(16):
            if frame is None:
                return None
            local = frame.f_locals
            for name in _CALLER_LOCALS:
                value = local.get(name)
                if value is not None and id(value) in self.index_of:
                    return self.index_of[id(value)]
            frame = frame.f_back
        return None


def _prod(xs):
    out = 1
    for x in xs:
        out *= int(x)
    return out
