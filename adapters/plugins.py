"""Finding implementation plugins: the in-tree ones, and every entry point of the group
`muoncheck.implementations` (name -> a plugin class, or a module holding one `Plugin` class), so
a package outside this repository can provide one without touching muoncheck.
"""
import importlib

from .plugin import Implementation, PluginError
from . import space

GROUP = "muoncheck.implementations"
BUILT_IN = {"torch": "adapters.torch.plugin:TorchMuon", "deepspeed": "adapters.deepspeed.plugin:DeepSpeedMuon",
            # in-tree plugins of third-party packages (adapters/impls/; their entry points in
            # adapters/pyproject.toml serve the installed package)
            "muon-optimizer": "adapters.impls.keller_muon:Plugin", "emerging-optimizers": "adapters.impls.emerging:Plugin",
            "heavyball": "adapters.impls.heavyball_muon:Plugin", "pytorch-optimizer": "adapters.impls.pytorch_optimizer_muon:Plugin"}


def _entry_points():
    from importlib.metadata import entry_points
    eps = entry_points()
    selected = eps.select(group=GROUP) if hasattr(eps, "select") else eps.get(GROUP, [])
    return {ep.name: ep for ep in selected}


def names():
    """Every plugin name: built-ins first, then the entry points' (sorted)."""
    return list(BUILT_IN) + sorted(n for n in _entry_points() if n not in BUILT_IN)


def _load_spec(spec):
    module, _, attr = spec.partition(":")
    obj = importlib.import_module(module)
    return getattr(obj, attr) if attr else obj


def load(name):
    """An instance of plugin `name`, checked (space.check). PluginError names what is wrong."""
    try:
        if name in BUILT_IN:
            obj = _load_spec(BUILT_IN[name])
        else:
            eps = _entry_points()
            if name not in eps:
                raise PluginError(f"no implementation plugin {name!r}: known {', '.join(names())} "
                                  f"(a package adds one with an entry point in group {GROUP})")
            obj = eps[name].load()
    except PluginError:
        raise
    except Exception as e:   # an import error of the plugin's package is the plugin's
        raise PluginError(f"plugin {name!r}: cannot be loaded: {type(e).__name__}: {e}") from e
    if not isinstance(obj, type):
        obj = getattr(obj, "Plugin", None)
    if not isinstance(obj, type) or not issubclass(obj, Implementation):
        raise PluginError(f"plugin {name!r}: its entry point is not an Implementation subclass "
                          "(nor a module with a `Plugin` class)")
    plugin = obj()
    space.check(plugin)
    if plugin.name != name:
        raise PluginError(f"plugin {name!r}: name: the class says {plugin.name!r}")
    return plugin
