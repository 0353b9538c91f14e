"""A plugin's configuration space as data: the checks of its knobs, and the generic mapping of a
configuration onto the canonical scenario JSON (field knobs set dotted paths) and back.

Both directions are the plugin's knobs read the same way: `apply_fields` writes each field knob's
fields for its value; `config_of` finds, for each field knob, the first value whose fields the
scenario already has. Engine knobs never touch the scenario.
"""
import copy
import re

from .plugin import Knob, PluginError, Unsupported

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_SCALARS = (bool, int, float, str, type(None))


def check(plugin):
    """Raises PluginError naming the plugin and the field when its declaration is malformed."""
    who = f"plugin {getattr(plugin, 'name', '?')!r}"
    if not isinstance(plugin.name, str) or not _NAME.match(plugin.name):
        raise PluginError(f"{who}: name: expected a lower-case word ([a-z0-9_.-]), got {plugin.name!r}")
    if not isinstance(plugin.title, str) or not plugin.title:
        raise PluginError(f"{who}: title: expected a non-empty string")
    if plugin.shape not in ("optimizer", "engine"):
        raise PluginError(f"{who}: expected a subclass of OptimizerPlugin or EnginePlugin")
    if not isinstance(plugin.knobs, (list, tuple)):
        raise PluginError(f"{who}: knobs: expected a list of Knob")
    seen = set()
    for i, k in enumerate(plugin.knobs):
        if not isinstance(k, Knob):
            raise PluginError(f"{who}: knobs[{i}]: expected a Knob, got {type(k).__name__}")
        if not isinstance(k.name, str) or not _NAME.match(k.name) or k.name in seen:
            raise PluginError(f"{who}: knobs[{i}].name: expected a unique lower-case word, got {k.name!r}")
        seen.add(k.name)
        if not k.values:
            raise PluginError(f"{who}: knob {k.name}: values: expected at least one value (the first is the default)")
        for v in k.values:
            if not isinstance(v, _SCALARS):
                raise PluginError(f"{who}: knob {k.name}: values: expected JSON scalars, got {v!r}")
        if k.fields is not None:
            for v in k.values:
                for path in k.fields_of(v):
                    if not isinstance(path, str) or not path or path.startswith(".") or ".." in path:
                        raise PluginError(f"{who}: knob {k.name}: fields: expected dotted scenario paths, got {path!r}")
    if not isinstance(plugin.ns_functions, (list, tuple)) or not all(
            isinstance(f, (list, tuple)) and len(f) == 2 and all(isinstance(x, str) for x in f) for f in plugin.ns_functions):
        raise PluginError(f"{who}: ns_functions: expected [(module, attribute)]")


def full_config(plugin, config):
    """`config` with every knob present (defaults for the missing). An unknown knob, or a value the
    knob does not list, raises Unsupported counted under that knob: the request asked for something
    outside the space."""
    config = dict(config or {})
    names = {k.name for k in plugin.knobs}
    for key in config:
        if key not in names:
            raise Unsupported(f"knob {key}: {plugin.name} has no such knob", knob=key)
    out = {}
    for k in plugin.knobs:
        v = config.get(k.name, k.default)
        if not any(x == v and isinstance(x, bool) == isinstance(v, bool) for x in k.values):
            raise Unsupported(f"knob {k.name}: value {v!r} is not one of {k.values}", knob=k.name)
        out[k.name] = v
    return out


def _get(doc, path):
    node = doc
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


_MISSING = object()


def _set(doc, path, value):
    """Sets `path`; a value None removes the field (the scenario's default stands)."""
    *parents, last = path.split(".")
    node = doc
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    if value is None:
        node.pop(last, None)
    else:
        node[last] = value


def apply_fields(plugin, config, scenario_json):
    """A copy of `scenario_json` with every field knob's fields of its value in `config` set."""
    config = full_config(plugin, config)
    out = copy.deepcopy(scenario_json)
    for k in plugin.knobs:
        for path, value in k.fields_of(config[k.name]).items():
            _set(out, path, copy.deepcopy(value))
    return out


# Fields the canonical scenario leaves out at their defaults (docs/scenario-format.md).
CANONICAL_DEFAULTS = {"engine.offload_optimizer": "none", "engine.compile": False, "engine.zero_init": False,
                      "optimizer.lr_schedule.shape": "constant", "overflow": [], "optimizer.groups": []}


def config_of(plugin, scenario_json, defaults=CANONICAL_DEFAULTS):
    """The config whose field knobs' fields the scenario has (the first matching value of each);
    engine knobs at their defaults. A field absent from the canonical scenario reads as `defaults`
    gives it (the canonical form leaves defaults out), else as absent."""
    config = {}
    for k in plugin.knobs:
        if not k.is_field_knob():
            config[k.name] = k.default
            continue
        for v in k.values:
            fields = k.fields_of(v)
            if all(_equal(_get(scenario_json, p), x, (defaults or {}).get(p, _MISSING)) for p, x in fields.items()):
                config[k.name] = v
                break
        else:
            if k.open:
                config[k.name] = k.default
                continue
            raise Unsupported(f"knob {k.name}: no value of it expresses this scenario's "
                              f"{', '.join(sorted({p for v in k.values for p in k.fields_of(v)}))}", knob=k.name)
    return config


def _equal(have, want, default):
    if want is None:   # "the field at its default": absent, or written at the default
        return have is _MISSING or have is None or (default is not _MISSING and have == default)
    if have is _MISSING:
        have = default
    if have is _MISSING:
        return False
    if isinstance(want, float) or isinstance(have, float):
        try:
            return float(have) == float(want)
        except (TypeError, ValueError):
            return False
    return have == want
