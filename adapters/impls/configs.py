"""A scenario's config, for the plugins whose from_scenario is a search (adapters/impls/).

`matching`: each field knob's first value whose fields the scenario has, its default where none does.
`expressing`: the first candidate config whose mapping (`to_scenario`) gives the scenario back, field
by field of its optimizer and engine sections (NS coefficients compared as every iteration's triple);
where none does, the scenario is declined (Unsupported) under the knob that sets the first differing
field of the first candidate — a case never runs a configuration that judges another scenario."""
import json
import os
import tempfile

from .. import space
from ..plugin import Unsupported


def matching(plugin, scenario_json):
    config = {}
    for k in plugin.knobs:
        config[k.name] = k.default
        for v in (k.values if k.is_field_knob() else []):
            if all(space._equal(space._get(scenario_json, p), x, space._MISSING) for p, x in k.fields_of(v).items()):
                config[k.name] = v
                break
    return config


def _triples(optimizer, cache):
    c = optimizer.get("ns_coefficients")
    if isinstance(c, str):   # a schedule by its name: as muoncheck resolves it
        if c not in cache:
            from ..common import scenario
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "s.json")
                json.dump({"name": "s", "steps": 1, "model": {"params": [{"name": "w", "shape": [2, 2]}]},
                           "optimizer": {"ns_coefficients": c, "ns_steps": optimizer.get("ns_steps", 5)}}, open(path, "w"))
                cache[c] = scenario.resolve(path)["ns_coefficients"]
        return [[float(x) for x in t] for t in cache[c]]
    c = [c] if c and isinstance(c[0], (int, float)) else (c or [])
    return [[float(x) for x in t] for t in (c * int(optimizer.get("ns_steps", 5)) if len(c) == 1 else c)]


def difference(plugin, config, scenario_json, cache=None):
    """None when `config` maps `scenario_json` onto itself, else (knob or None, reason)."""
    cache = {} if cache is None else cache
    mapped = plugin.to_scenario(config, json.loads(json.dumps(scenario_json)))
    for section in ("optimizer", "engine"):
        for key, want in mapped.get(section, {}).items():
            have = scenario_json.get(section, {}).get(key)
            if key == "ns_coefficients":
                same = _triples(mapped[section], cache) == _triples(scenario_json.get(section, {}), cache)
            else:
                same = have == want or (isinstance(have, (int, float)) and isinstance(want, (int, float)) and float(have) == float(want))
            if not same:
                path = f"{section}.{key}"
                knob = next((k.name for k in plugin.knobs if path in k.fields_of(config[k.name])), None)
                return knob, f"the config sets {path} {want!r}, the scenario has {have!r}"
    return None


def expressing(plugin, scenario_json, candidates):
    cache, first = {}, None
    for c in candidates:
        c = space.full_config(plugin, c)
        why = difference(plugin, c, scenario_json, cache)
        if why is None:
            return c
        first = first or why
    raise Unsupported(first[1] if first else "no configuration", knob=first[0] if first else None)
