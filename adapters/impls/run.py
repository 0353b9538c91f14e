"""Runs a plain-optimizer plugin (adapters/plugin.py) on scenario files through the torch adapter's
training loop (adapters/torch/run.py: DDP at stage 0, FSDP2 at 2/3, gas, clipping, schedules, state
read-back, collectives, NS events) and writes one trace per scenario for `muoncheck verify`.

    python -m adapters.impls.run --impl NAME --out DIR [--config JSON] [--fixes ID,...] [--repeat] FILES
    torchrun --nproc-per-node N -m adapters.impls.run ...          (dp N, CPU over gloo)

The plugin is found by name (plugins.load: entry point group muoncheck.implementations). What the
torch adapter assumes about torch.optim.Muon is replaced by the plugin's own: its declines (and the
engine features no plain optimizer has: stage 1, zero_init, fp16 and loss scaling, overflow
injections, checkpoints, offload, compile, per-head), its NS functions for the counter, its optimizer
factory, its state wherever a rank holds it (a parameter stepped on one rank only has its momentum
there), its title and version in the trace. A scenario's config is the plugin's `from_scenario`
then FILE.config.json beside a scenario FILE.json (a sweep case's
drawn knobs), then --config on top; --fixes applies registry fixes for the whole run and reverts them at exit.
"""
import argparse
import importlib
import json
import os
import sys

import torch

from .. import plugins, space
from ..common import ns_counter, ranks
from ..common import scenario as scenario_file
from ..common import trace as trace_doc
from ..plugin import Unsupported
try:   # the torch adapter's former loop, which this runner patches; the generic worker replaced it
    from ..torch import run, semantics, trace_v2
except ImportError:
    run = semantics = trace_v2 = None


def _engine_declines(s, world):
    """What a plain optimizer under DDP/FSDP2 cannot run (the loop's, not the plugin's)."""
    if s.dp != world:
        return f"engine.dp {s.dp}: this launch has {world} process(es)"
    mode = "ddp" if s.stage == 0 else "fsdp2"
    for cond, why in ((s.stage == 1, "engine.stage 1: no DDP/FSDP2 mapping"), (s.zero_init, "engine.zero_init"),
                      (s.per_head, "optimizer.per_head: a plain optimizer orthogonalizes whole matrices"),
                      (s.clip["max_norm"] > 0 and s.clip["mode"] != "raw_grad", "optimizer.clip.mode update"),
                      (s.param_dtype == "fp16" or s.loss_scaler["type"] != "none", "fp16 / loss_scaler: no scaler"),
                      (bool(s.overflow), "overflow injections need a loss scaler"), (bool(s.checkpoint), "checkpoint"),
                      (s.offload_optimizer != "none", "engine.offload_optimizer"), (s.compile, "engine.compile"),
                      (mode == "ddp" and (s.grad_accum_dtype != s.param_dtype or s.comm_dtype != s.param_dtype),
                       "DDP accumulates and reduces in the param dtype"),
                      (mode == "fsdp2" and s.gas > 1 and s.grad_accum_dtype != s.comm_dtype,
                       "FSDP2 accumulates unsynced micro-steps in comm_dtype")):
        if cond:
            return why
    return None


def _triples(value, s):
    """A scenario's ns_coefficients as every iteration's triple (a name: as muoncheck resolved it)."""
    if isinstance(value, str):
        return [list(t) for t in s.ns_iterations] if value == s.raw["optimizer"].get("ns_coefficients") else value
    if value and all(isinstance(x, (int, float)) for x in value):   # one triple written flat
        value = [value]
    return [list(t) for t in value] * (s.ns_steps if len(value) == 1 else 1)


def _not_expressed(plugin, s):
    """Where the config maps the scenario to another one (the first differing optimizer or engine
    field), as a decline reason counted under the knob that sets it; None when it expresses it."""
    mapped = plugin.to_scenario(s.config, s.raw)
    for section in ("optimizer", "engine"):
        for key, want in mapped.get(section, {}).items():
            have = s.raw.get(section, {}).get(key)
            if key == "ns_coefficients":
                have, want = _triples(have, s), _triples(want, s)
            if have != want and not (isinstance(have, (int, float)) and isinstance(want, (int, float)) and float(have) == float(want)):
                path = f"{section}.{key}"
                knob = next((k.name for k in plugin.knobs if path in k.fields_of(s.config[k.name])), None)
                return f"knob {knob}: the config sets {path} {want!r}, the scenario has {have!r}" if knob else \
                    f"{path}: the config sets {want!r}, the scenario has {have!r}"
    return None


_MUON = set()   # the scenario's Muon parameters (indices): an embedding of the same shape is no candidate


def _record_by_shape(self, G, out):
    """NS calls attributed by matrix shape, for an optimizer whose NS caller holds a stale loop variable
    `p` and that stacks same-shape matrices into one batched call (pytorch-optimizer's foreach path):
    each matrix of a batch is one call of the parameter of that shape (transposed or not); a shape
    several parameters share is attributed in order when the batch holds them all, else unattributed."""
    self.dtypes.add(str(out.dtype).replace("torch.", ""))
    rows, cols = int(G.shape[-2]), int(G.shape[-1])
    batch = int(G.shape[0]) if G.ndim == 3 else 1
    candidates = [i for i in self.shapes.get((rows, cols), []) or self.shapes.get((cols, rows), []) if i in _MUON]
    if len(candidates) == batch or (batch == 1 and len(candidates) == 1):
        for index in candidates:
            self.calls[index] = self.calls.get(index, 0) + 1
            self.heads[index] = 0
    else:
        self.unattributed += batch


class _Stateless:
    """An optimizer's param groups without its state (what weights_digest hashes)."""

    def __init__(self, opt):
        self.param_groups, self.state = opt.param_groups, {}


def install(plugin, extra_config, fix_ids):
    """Points the torch adapter's loop at `plugin`. Returns the fixes' reverts."""
    def check_runnable(s, world):
        current["s"] = s
        _MUON.clear()
        _MUON.update(i for i, p in enumerate(s.params) if p.use_muon)
        why = _engine_declines(s, world)
        if why:
            raise semantics.Unsupported(why)
        s.config = space.full_config(plugin, dict(s.config))
        why = _not_expressed(plugin, s)   # the config must express the scenario being judged
        if why:
            raise semantics.Unsupported(why)
        d = plugin.declines(s, s.config)
        if d is not None:
            raise semantics.Unsupported(f"knob {d.knob}: {d.reason}" if d.knob else d.reason)
        return "ddp" if s.stage == 0 else "fsdp2"
    semantics.check_runnable = check_runnable

    current = {}

    class NormCheck:
        """The scenario's NS divides by ‖U‖ + 1e-7; a plugin whose NS divides by max(‖U‖, 1e-7)
        (`ns_norm = "clamp"`) is checked on every call, as the torch adapter checks torch's: both
        divisors from the call's own input, rounded to the scenario's ns_dtype; where they differ
        (an fp32 NS of a matrix whose norm is below about 1.7) the run is declined after the fact."""

        def __init__(self):
            self.calls, self.differing = 0, []

        def __call__(self, G, out, *args, **kwargs):
            if getattr(plugin, "ns_norm", "add") != "clamp":
                return
            dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(current["s"].ns_dtype, torch.float32)
            with torch.no_grad():
                n = (G.full_tensor() if hasattr(G, "full_tensor") else G).detach().float().norm()
                clamped, added = n.clamp(min=1e-7).to(dtype), (n + 1e-7).to(dtype)
            self.calls += 1
            if not torch.equal(clamped, added):
                self.differing.append(f"NS input norm {float(n):.3e} ({current['s'].ns_dtype}): max(n, 1e-7) and n + 1e-7 "
                                      f"differ in {current['s'].ns_dtype}")
    semantics.NormCheck = NormCheck

    wrap = ns_counter.NsCounter.install

    def counter_install(self, module=None, names=()):
        for mod, attr in plugin.ns_functions:
            m = importlib.import_module(mod)
            if not hasattr(m, attr):
                raise RuntimeError(f"plugin {plugin.name}: NS function {mod}.{attr} does not exist")
            wrap(self, m, (attr,))
        if not self._installed:
            raise RuntimeError(f"plugin {plugin.name}: the NS counter wraps nothing")
    ns_counter.NsCounter.install = counter_install
    if getattr(plugin, "ns_attribution", "caller") == "shape":
        ns_counter.NsCounter._record = _record_by_shape

    read = run.read_state

    def read_state(s, par, opts, grads=False):
        mine = read(s, par, opts, grads)
        hook = getattr(plugin, "param_state", None)
        if hook is not None:
            for ps, p, e in zip(s.params, par.params, mine):
                for o in opts:
                    if p in o.state:
                        e.update({k: run._snapshot(v) for k, v in hook(o, p, ps.use_muon).items()})
        every = ranks.gather_to_rank0(mine)   # momentum of a param one rank stepped lives on that rank only
        if ranks.rank() != 0:
            return mine
        return [{k: v for r in reversed(every) for k, v in r[i].items()} | e for i, e in enumerate(mine)]
    run.read_state = read_state

    def weights_digest(par, opts):
        """ranks-agree's digest: the weights and rates every rank holds. Optimizer state is left out: a
        plain optimizer that splits work over ranks (muon-optimizer's Muon, DistributedMuon) keeps a
        parameter's momentum on the rank that stepped it only; the trace reads it there."""
        return replicated(par, [_Stateless(o) for o in opts])
    replicated = trace_v2.replicated_digest
    trace_v2.replicated_digest = weights_digest

    classify = trace_v2.classify

    def plugin_classify(counter, where):
        """An all-gather an optimizer issues in its step, outside NS, exchanges Muon results (fp32 by the
        semantics: muon-optimizer's and DistributedMuon's gathers of stepped params), not a gradient; a
        one-element reduction inside NS is a scalar (fp32 by the semantics), not the NS iterate."""
        base = classify(counter, where)
        def purpose(kind, elements):
            if where() == "step" and counter.inside == 0 and kind == "all_gather" and elements > 1:
                return "muon_exchange"
            if where() == "step" and counter.inside > 0 and elements <= 1:
                return "scalar"   # a norm reduced inside NS (emerging-optimizers normalizes in fp32 first): a scalar
            return base(kind, elements)
        return purpose
    trace_v2.classify = plugin_classify

    document = trace_doc.document

    def plugin_document(s, name, version, details, **kw):
        details["plugin"] = {"name": plugin.name, "config": getattr(s, "config", None), "fixes": fix_ids}
        return document(s, plugin.title, plugin.version(), details, **kw)
    trace_doc.document = plugin_document

    load = scenario_file.load

    def load_with_config(path):
        s = load(path)
        raw = json.loads(json.dumps(s.raw))   # its NS coefficients as every iteration's triple (a named schedule resolved)
        raw["optimizer"]["ns_coefficients"] = [list(t) for t in s.ns_iterations]
        try:
            config = plugin.from_scenario(raw)
        except Unsupported:
            config = {}
        beside = path[:-len(".json")] + ".config.json"   # a sweep case's drawn knobs, beside its scenario
        drawn = json.load(open(beside)) if path.endswith(".json") and os.path.exists(beside) else {}
        s.config = {**config, **drawn, **extra_config}
        return s
    scenario_file.load = load_with_config
    return [plugin.fixes()[f].apply() for f in fix_ids]


def factory_of(plugin):
    def factory(muon_groups, adam_groups, s):
        try:
            return plugin.optimizer(muon_groups, adam_groups, s)
        except Unsupported as e:
            raise semantics.Unsupported(f"knob {e.knob}: {e.reason}" if e.knob else e.reason)
    return factory


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--impl", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--config", default="{}", help="knob values (JSON) over each scenario's own config")
    ap.add_argument("--fixes", default="", help="registry fix ids, comma-separated")
    ap.add_argument("--repeat", action="store_true", help="each scenario twice (the deterministic invariant)")
    ap.add_argument("scenarios", nargs="+")
    a = ap.parse_args(argv)
    if trace_v2 is None:
        sys.exit("adapters.impls.run patches the torch adapter's former loop, which the plugin seam replaced "
                 "(adapters/optimizer_loop.py); it does not run until these plugins move onto adapters.worker")
    plugin = plugins.load(a.impl)
    fix_ids = [f for f in a.fixes.split(",") if f]
    reverts = install(plugin, json.loads(a.config), fix_ids)
    run.init_process_group()
    os.makedirs(a.out, exist_ok=True)
    try:
        ok = [run.run_file(p, factory_of(plugin), f"plugin:{plugin.name}", a.out, rep)
              for p in a.scenarios for rep in ((0, 1) if a.repeat else (0,))]
    finally:
        for revert in reverts:
            revert()
        torch.distributed.destroy_process_group()
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
