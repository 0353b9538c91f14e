"""The interface an implementation under test gives muoncheck: one class per implementation.

muoncheck supplies everything around it — the scenario's model and data, the training loop (gas,
clipping, lr schedules, checkpoints), reading the state back wherever a rank holds it, the
collective log and the Newton–Schulz events, digests, repeat runs, the resident worker
(`python -m adapters.worker --impl NAME`) and an ERROR trace when a rank dies. A plugin says only
what is its own:

- who it is: `name` (the `--impl` name), `title` (the trace's implementation name), `version()`;
- the configuration space it can express, as `Knob`s, and which drawn configurations it cannot
  run (`declines`);
- how to build and step it, in one of two shapes:
  * `OptimizerPlugin`: a factory `optimizer(muon_groups, adam_groups, scenario)`; muoncheck wraps
    the model (none, DDP or FSDP2 by the scenario's stage) and runs the loop;
  * `EnginePlugin`: `build(scenario, model, device)` returns an `Engine` (its own wrapper, e.g. a
    DeepSpeed engine) with `micro_step` / `step` primitives; muoncheck still runs the loop;
- where its state lives (`state_keys`, per parameter; a rank that holds nothing for a parameter
  says so, and muoncheck reads the state on whichever rank holds it);
- which functions are its Newton–Schulz (`ns_functions`): muoncheck counts their calls per
  parameter and fails loudly when none of them exists;
- its known defects and their fixes (`fixes()`): a request may ask for fixes by id; each is applied
  before the case and reverted after it.

Plugins are found by the entry point group `muoncheck.implementations` (name -> class), so a
package outside this repository can provide one (adapters/plugins.py). A minimal third-party
plugin:

    from adapters.plugin import OptimizerPlugin, Knob

    class MyMuon(OptimizerPlugin):
        name, title = "mymuon", "My Muon"
        knobs = [Knob("nesterov", [True, False], fields={True: {"optimizer.nesterov": True},
                                                           False: {"optimizer.nesterov": False}})]
        ns_functions = [("mymuon.core", "newton_schulz")]
        def version(self): return "0.1"
        def optimizer(self, muon_groups, adam_groups, scenario):
            return [mymuon.Muon(muon_groups, ...), torch.optim.AdamW(adam_groups, ...)]

Everything here is plain data or small methods; nothing imports torch at module level, so the
C++ side's questions (space, map, from_scenario) are answered without starting a training stack.
"""


class PluginError(Exception):
    """The plugin itself is malformed (a bad knob, an NS function that does not exist, a field path
    the scenario does not have). The message names the plugin and the field; the case is an ERROR."""


class Unsupported(Exception):
    """A valid scenario (or configuration) this implementation cannot run as written. Raised from
    anywhere in a plugin's build or step, it makes the case a decline with this reason, not an ERROR.
    `knob`: the knob the decline is counted under (None: the scenario's own features)."""

    def __init__(self, reason, knob=None):
        super().__init__(reason)
        self.reason, self.knob = reason, knob


class Decline:
    """What `declines` returns: the knob the decline is counted under and the reason."""

    def __init__(self, knob, reason):
        self.knob, self.reason = knob, reason

    def __repr__(self):
        return f"Decline({self.knob!r}, {self.reason!r})"


class Knob:
    """One dimension of the implementation's configuration space.

    `values`: JSON scalars (bool, int, float, str, None); the FIRST is the default, and the value a
    shrinking case moves towards. `fields`: how each value maps onto the scenario semantics the
    oracle judges — {value: {scenario field path: field value, ...}} with dotted paths into the
    canonical scenario JSON ("engine.stage", "optimizer.clip.max_norm"); a value a field knob does
    not list maps to nothing; a field value None removes the field (its default stands). A knob
    without `fields` is an *engine knob*: by the semantics it must
    not change the result beyond rounding (bucket sizes, overlap_comm, offload, ...), so the scenario
    is the same whatever its value. `doc`: one line for the option help and reports. `open`: a field
    knob whose fields the implementation reads from the scenario whatever their value (gas, bucket
    sizes): `values` are what a sweep draws, and a scenario holding another value is still
    expressed (its config names the default, the scenario's own value stands).
    """

    def __init__(self, name, values, fields=None, doc="", open=False):
        self.name, self.values, self.doc, self.open = name, list(values), doc, bool(open)
        self.fields = None if fields is None else {_key(v): dict(m) for v, m in fields.items()}

    @property
    def default(self):
        return self.values[0]

    def is_field_knob(self):
        return self.fields is not None

    def fields_of(self, value):
        """{path: value} the knob's `value` sets in the scenario ({} for an engine knob)."""
        if self.fields is None:
            return {}
        return dict(self.fields.get(_key(value), {}))

    def as_json(self):
        """The knob as the hello line's `space` lists it: name, values, and for a field knob `fields`,
        one {path: value} object per value, in the order of `values`."""
        out = {"name": self.name, "values": self.values}
        if self.fields is not None:
            out["fields"] = [self.fields_of(v) for v in self.values]
        if self.doc:
            out["doc"] = self.doc
        if self.open:
            out["open"] = True
        return out


def _key(value):
    """A knob value as a dict key (bools and numbers kept apart: True is not 1)."""
    return (type(value).__name__, value)


class Fix:
    """A known defect's fix (a runtime replacement). `apply()` makes the change and returns a
    callable that reverts it; muoncheck applies the fixes a request names before the case and
    reverts them after it, whatever the case did."""

    def __init__(self, id, summary, apply):
        self.id, self.summary, self._apply = id, summary, apply

    def apply(self):
        revert = self._apply()
        return revert if callable(revert) else (lambda: None)


class StateKeys:
    """Where a parameter's optimizer state lives: the keys of `optimizer.state[param]` (or of the
    engine's own state dict) holding Muon's momentum and Adam's first and second moments, first key
    found wins. muoncheck reads them on every rank and keeps the rank that holds each (replicated:
    all ranks hold it and must agree; one rank only; a shard per rank, concatenated in rank order
    when `sharded`)."""

    def __init__(self, momentum=("momentum_buffer",), adam_m=("exp_avg",), adam_v=("exp_avg_sq",), sharded=False):
        self.momentum, self.adam_m, self.adam_v = tuple(momentum), tuple(adam_m), tuple(adam_v)
        self.sharded = sharded

    def fields(self, use_muon):
        """[(trace field, keys)] a parameter of that kind has."""
        return [("momentum", self.momentum)] if use_muon else [("adam_m", self.adam_m), ("adam_v", self.adam_v)]


class Implementation:
    """What every plugin declares. Subclass `OptimizerPlugin` or `EnginePlugin`, not this."""

    name = ""             # the --impl name: lower case, [a-z0-9_-]
    title = ""            # the trace's implementation name ("DeepSpeed Muon")
    knobs = []            # [Knob]: the configuration space
    ns_functions = []     # [(module, attribute)]: its Newton–Schulz function(s), looked up at call time
    state_keys = StateKeys()
    shape = ""            # "optimizer" or "engine" (set by the two base classes)

    def version(self):
        """The version of the implementation under test (its package's)."""
        raise NotImplementedError

    def declines(self, scenario, config):
        """A `Decline(knob, reason)` for a (resolved scenario, config) it cannot express, else None.
        `scenario` is adapters.common.scenario.Scenario (the mapped one, as judged); `config` the
        knob values {name: value}, every knob present. The default declines nothing."""
        return None

    def declines_here(self, scenario, config):
        """A `Decline` that depends on this worker's device, not on the configuration (a device
        without fp16), else None; the process world is checked by the project. Kept apart from `declines` so that which knob pairs are feasible
        (adapters/knob_pairs.py) does not depend on the machine asking. Default none."""
        return None

    def to_scenario(self, config, scenario_json):
        """The canonical scenario JSON the oracle judges for `config` applied to `scenario_json`.
        The default sets every field knob's fields (adapters/space.py); override only for a
        mapping that is not a field assignment."""
        from . import space
        return space.apply_fields(self, config, scenario_json)

    def from_scenario(self, scenario_json):
        """The config expressing `scenario_json`: each field knob's value whose fields the scenario
        has (the first such value), each engine knob at its default. A scenario no value of a
        field knob matches is declined (raises Unsupported with that knob)."""
        from . import space
        return space.config_of(self, scenario_json)

    def fixes(self):
        """{id: Fix}: its known defects' fixes: the registry next to the plugin
        (adapters/NAME/known_defects.json), or $MUONCHECK_KNOWN_DEFECTS (adapters/common/fixes.py)."""
        from .common import fixes
        return fixes.plugin_fixes(self.name)

    ns_scalars = False    # True: a one-element reduction inside its NS is the norm (a scalar, fp32), not the iterate

    def ns_observers(self):
        """Optional: callables (G, out, *args, **kwargs) run after each counted NS call. One that
        ends the run with a non-empty `differing` list declines it with its first entry (a
        difference from the scenario's semantics it checks on the call's own input)."""
        return []

    def install_ns_counter(self, counter, scenario):
        """Wraps the NS functions with `counter` (common/ns_counter.py). The default wraps
        `ns_functions` and raises PluginError when none exists; override only where the NS call
        is not a Python call (a compiled graph) and must be counted elsewhere."""
        counter.install_functions(self.ns_functions, f"plugin {self.name!r}")

    def details(self, scenario, config):
        """Extra JSON for the trace's implementation.details (what a repro script rebuilds). Default {}."""
        return {}

    def init_process_group(self, backend):
        """Starts the process group once per worker (gloo on CPU, nccl on CUDA; torchrun's env).
        Override where the implementation has its own (deepspeed.init_distributed)."""
        import torch.distributed as dist
        dist.init_process_group(backend)

    def space(self):
        """The hello line's `space`."""
        return {"knobs": [k.as_json() for k in self.knobs]}


class OptimizerPlugin(Implementation):
    """A plain torch optimizer: muoncheck builds the model, wraps it (stage 0: none; 1, 2: DDP;
    3: FSDP2 — as adapters/torch/parallel.py does) and runs the loop; clipping is muoncheck's."""

    shape = "optimizer"

    def param_state(self, optimizer, param, use_muon):
        """Optional: {trace field ("momentum", "adam_m", "adam_v"): tensor} of a parameter's state
        where `state_keys` cannot name it (state nested under another key, or kept rescaled: heavyball's
        debiased EMA); asked only where `optimizer.state[param]` is not empty. Default {}."""
        return {}

    def optimizer(self, muon_groups, adam_groups, scenario):
        """[torch.optim.Optimizer]: each group is a param-group dict holding one parameter with its
        `lr` and `weight_decay` (the scenario's groups applied); the rates follow the schedule
        (muoncheck sets each group's `lr` before every step). `scenario.config` holds the knob
        values. The Muon-tagged parameters are in `muon_groups`, the rest in `adam_groups`."""
        raise NotImplementedError


class Engine:
    """What an `EnginePlugin.build` returns: the implementation's own training wrapper."""

    def named_parameters(self):
        """[(name, parameter)] in the module's order (the trace lists parameters in this order)."""
        raise NotImplementedError

    def micro_step(self, batch, k, boundary):
        """Forward and backward of micro-step k on this rank's batch (and whatever the engine does
        at a micro-step: DeepSpeed's engine.step); returns the loss (a float)."""
        raise NotImplementedError

    def step(self, t):
        """Ends step t (clipping, the optimizer step, zeroing); returns True when the engine
        skipped the update (an overflow)."""
        raise NotImplementedError

    def optimizer_states(self):
        """[(param, state dict)] for this rank: where `StateKeys` are looked up. A parameter this
        rank holds no state for may be left out."""
        raise NotImplementedError

    def full_weights(self):
        """[tensor] the full fp32 weights in named_parameters' order (collective where sharded)."""
        raise NotImplementedError

    def read_state(self):
        """Optional: [{weight, momentum | adam_m, adam_v}] (fp32 CPU tensors) on rank 0, None
        elsewhere, for an engine whose state is not per-parameter (flat partitions). The default
        (None on every rank) lets muoncheck read `optimizer_states()` through the plugin's
        `state_keys` and `full_weights()`. Collective."""
        return None

    def tags(self):
        """Optional: [{name, use_muon, num_heads}] as the engine tagged its parameters; None: the
        scenario's SPEC tagging."""
        return None

    def loss_scale(self):
        return 1.0

    def start_step(self, t):
        """Optional: called before step t's first micro-step (an engine that steps a scheduler by
        the step index reads it here)."""

    def save_checkpoint(self, folder, tag):
        """Saves the engine's state after a checkpoint scenario's save step; returns what the
        resumed engine loads (opaque to muoncheck): `build` gets it as `scenario.resume_from`
        (None otherwise) and must load it before it returns. The default declines checkpoints."""
        raise Unsupported("checkpoint: this implementation has no checkpoint save/load")

    def digest(self, scale, skipped):
        """Optional: 16 hex digits over this rank's replicated state after a step (equal digests
        must mean bit-equal state); None: muoncheck digests the module's params (stages 0-2)."""
        return None

    def scaler_counters(self):
        """Optional: the loss scaler's counters after a step {hysteresis, good_streak, good_steps}."""
        return None

    def collectives(self):
        """Optional: the engine's own collective recorder (an object with `log`, `step`, `phase`,
        `exporting`, install() and uninstall()), for an engine whose collectives are better seen
        at its own communication layer; None: muoncheck records every collective torch dispatches."""
        return None

    def details(self):
        """Optional: JSON for the trace's implementation.details after the run (collective on every
        rank; rank 0's is kept)."""
        return {}

    def close(self):
        """Tears the engine down (collective, once)."""


class EnginePlugin(Implementation):
    """An implementation with its own engine (DeepSpeed): it builds it from the scenario and config
    and exposes micro_step / step; clipping and loss scaling are the engine's."""

    shape = "engine"

    def build(self, scenario, model, device):
        """An `Engine` training `model` (adapters.common.model.ScenarioModel, or a factory of it when
        the engine must build the model itself: then `model` is a callable returning it).
        `scenario.config` holds the knob values."""
        raise NotImplementedError
