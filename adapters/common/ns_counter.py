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
DeepSpeed's ZeRO-1/2/3 loops and MuonWithAuxAdam use — when that parameter has the call's matrix
shape (an optimizer that defers its NS calls past its parameter loop leaves a stale `p` there).
Failing that, the one Muon-sized parameter with that matrix shape, or of several, the first not
yet counted this step (optimizers walk their parameters in order); failing that, the call is
counted as unattributed (which `muoncheck verify` reports as a failure, never drops).
`install_functions` (a plugin's `ns_functions`) raises when it wraps nothing.
"""
import sys

_CALLER_LOCALS = ("param", "p", "tensor")
_NS_NAMES = ("zeropower_via_newtonschulz5", "zeropower_via_gram_newtonschulz")
# Under torch.compile the NS functions run inside muon_update's compiled graph, so a Python
# wrapper around them would count only while dynamo traces. muon_update calls NS exactly once
# (whole matrix, expert batch or per-head batch), so with compile on the counter wraps
# muon_update itself, outside the graph, in every loaded deepspeed module that holds it: the one
# the 0.19.8 optimizers import it from at call time, and those that bound it at import time
# (muon_optimizer; 0.19.6's stage_1_and_2 and stage3).


class NsCounter:
    def __init__(self, named_params, muon=()):
        """`muon`: indices of the params the implementation tagged for Muon. A call no frame ties
        to a param goes to one of them before a param of the same shape that Adam steps (at stage 0
        with 16-bit params DeepSpeed steps fp32 copies, whose frames name no param of the model)."""
        self.index_of = {id(p): i for i, (_, p) in enumerate(named_params)}
        self.shapes = {}
        for i, (_, p) in enumerate(named_params):
            shape = tuple(getattr(p, "ds_shape", None) or p.shape)
            if len(shape) >= 2:
                key = (shape[0], 1 if len(shape) < 2 else int(_prod(shape[1:])))
                self.shapes.setdefault(key, []).append(i)
        self.muon = set(muon)
        self.calls = {}          # param index -> count in the current step
        self.heads = {}          # param index -> heads of the last call (0: whole matrix)
        self.unattributed = 0
        self.dtypes = set()      # dtypes the NS iteration produced (its arithmetic dtype)
        self.observers = []      # callables (G, out, *args) run after each counted call
        self.inside = 0          # > 0 while an NS call runs (a collective recorder reads it)
        self._installed = []

    def reset_step(self):
        self.calls, self.unattributed = {}, 0

    def install_functions(self, functions, who="the implementation"):
        """Wraps each (module name, attribute) of a plugin's `ns_functions` that exists; raises
        PluginError when none does — a counter that wraps nothing would report every step's NS
        calls as 0 (a false FAIL) instead of saying the plugin names the wrong function."""
        import importlib
        from ..plugin import PluginError
        missing = []
        for module_name, attr in functions:
            try:
                module = importlib.import_module(module_name)
            except ImportError as e:
                missing.append(f"{module_name} ({e})")
                continue
            if not callable(getattr(module, attr, None)):
                missing.append(f"{module_name}.{attr}")
                continue
            self.install(module, (attr,))
        if not self._installed:
            raise PluginError(f"{who}: ns_functions: none of them exists ({', '.join(missing) or 'the list is empty'}); "
                              "the NS counter would wrap nothing")

    def install(self, module=None, names=_NS_NAMES):
        if module is None:
            from deepspeed.runtime.zero.muon import original_muon as module
        for name in names:
            fn = getattr(module, name, None)
            if fn is not None:
                setattr(module, name, self._wrap(fn))
                self._installed.append((module, name, fn))

    def install_at_update_entry(self):
        """DeepSpeed under torch.compile: count at muon_update's entry (see the note above)."""
        from deepspeed.runtime.zero.muon import original_muon
        fn = original_muon.muon_update
        counter = self

        def counted_update(grad, momentum, *args, **kwargs):
            out = fn(grad, momentum, *args, **kwargs)
            heads = kwargs.get("num_heads") or 0
            ns_dtype = getattr(original_muon, "ns_compute_dtype", None)   # 0.19.8 on; else the trace's default
            if ns_dtype is not None:
                counter.dtypes.add(str(ns_dtype(kwargs.get("ns_method", "gram"))).replace("torch.", ""))
            counter._attribute(int(grad.shape[0]), int(grad.numel() // max(1, grad.shape[0])), heads)
            return out

        for name, module in list(sys.modules.items()):
            if name.startswith("deepspeed") and getattr(module, "muon_update", None) is fn:
                setattr(module, "muon_update", counted_update)
                self._installed.append((module, "muon_update", fn))

    def uninstall(self):
        for module, name, fn in self._installed:
            setattr(module, name, fn)
        self._installed = []

    def _wrap(self, fn):
        counter = self

        def counted(G, *args, **kwargs):
            counter.inside += 1
            try:
                out = fn(G, *args, **kwargs)
            finally:
                counter.inside -= 1
            counter._record(G, out)
            for observe in counter.observers:   # e.g. a check of the call's own input
                observe(G, out, *args, **kwargs)
            return out

        return counted

    def _record(self, G, out):
        self.dtypes.add(str(out.dtype).replace("torch.", ""))
        heads = int(G.shape[0]) if G.ndim == 3 else 0
        self._attribute(int(G.shape[-2]) * (heads or 1), int(G.shape[-1]), heads)

    def _attribute(self, rows, cols, heads):
        candidates = self.shapes.get((rows, cols)) or self.shapes.get((cols, rows), [])
        index = self._caller_param()
        if index is not None and candidates and index not in candidates:
            # A deferred call: the optimizer collected its updates and orthogonalizes them later,
            # so the frame's `p` is whichever param its loop ended on, not this call's.
            index = None
        if index is None and len(candidates) == 1:
            index = candidates[0]
        elif index is None and candidates:
            # several params of this shape and no frame naming one: the optimizer walks its params
            # in order, so the call is the first param of this shape not yet counted this step
            # (those tagged for Muon first)
            ordered = sorted(candidates, key=lambda i: i not in self.muon)
            index = next((i for i in ordered if self.calls.get(i, 0) == 0), None)
        if index is None:
            self.unattributed += 1
            return
        self.calls[index] = self.calls.get(index, 0) + 1
        self.heads[index] = heads

    def _caller_param(self):
        frame = sys._getframe(3)   # past _caller_param, _attribute and _record or counted_update
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
