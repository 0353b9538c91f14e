"""A scenario's config knob by knob: each field knob's first value whose fields the scenario has,
its default where none does (the runner then declines the scenario under that knob, naming the
field). adapters/space.py's config_of stops at the first knob that matches nothing; a plugin whose
mapping is not a field assignment searches on top of this."""
from .. import space


def matching(plugin, scenario_json):
    config = {}
    for k in plugin.knobs:
        config[k.name] = k.default
        for v in (k.values if k.is_field_knob() else []):
            if all(space._equal(space._get(scenario_json, p), x, space._MISSING) for p, x in k.fields_of(v).items()):
                config[k.name] = v
                break
    return config
