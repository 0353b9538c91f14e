"""Known-defect fixes applied for one case (`"fixes": [ids]` in a resident request): the adapter
side of a known-defect registry (docs/known-defects.md; harness/sweep/known_defects.hpp reads the
same file and checks every field).

A fix of kind "replacement" names its `target` (`module:Qualified.name`, the function or method
the defect lives in) and its `replacement` (`module:attribute`, a function that takes the original
and returns what replaces it). `expects`, when given, is a line of the original's source the fix
was written against: if the installed code no longer has it, the fix no longer applies. `bound_as`
lists other `module:attribute` names the target is bound under (a `from … import` copy made at
import time), each checked to be the target and replaced by the fix built on its own value; a module without
that name (a version that calls the target through its module) is left alone. Every
replacement is reverted when the case ends, so the next case runs the implementation as shipped.

A fix that cannot be applied raises FixDoesNotApply naming the entry; the worker reports it as
the case's error "FixDoesNotApply: known defect ID: why" (adapters/case.py), which the harness
reads as a stale registry, never as a verdict about the implementation.

Each replacement that is a function counts its calls: a fix applied for a case whose code never ran
on it (unused_fixes(), the trace's `fixes_unused`) cannot be what made the case conform, so
attribution starts its search without it (harness/sweep/attribution.hpp; a start that does not
conform falls back to every fix). A fix that acts where its replacement is only looked at, not
called, says so (marked_in_chain, counted_for). Plugin.fixes() returns
the registry's fixes as adapters.plugin.Fix (plugin_fixes), so `"fixes": [ids]` in a request and
`--fix ID` reach them.
"""
import contextlib
import functools
import importlib
import inspect
import json
import os


class FixDoesNotApply(Exception):
    pass


def load(path):
    """The registry at `path`: {"implementation", "defects": {id: entry}}; {} entries when path is None."""
    if not path:
        return {"implementation": None, "defects": {}}
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    entries = {}
    for k, e in enumerate(data.get("defects") or []):
        if not isinstance(e, dict) or not isinstance(e.get("id"), str):
            raise ValueError(f"{path}: defects[{k}]: expected an entry with a string id")
        entries[e["id"]] = e
    return {"implementation": data.get("implementation"), "defects": entries, "path": path}


def _resolve(spec, entry_id, field):
    module_name, _, qual = spec.partition(":")
    if not qual:
        raise FixDoesNotApply(f"known defect {entry_id}: {field} {spec!r}: expected module:attribute")
    try:
        owner = importlib.import_module(module_name)
    except Exception as e:   # the module moved or cannot be imported here
        raise FixDoesNotApply(f"known defect {entry_id}: {field} {spec!r}: cannot import {module_name}: {e}") from None
    parts = qual.split(".")
    for name in parts[:-1]:
        if not hasattr(owner, name):
            raise FixDoesNotApply(f"known defect {entry_id}: {field} {spec!r}: {name} is not there")
        owner = getattr(owner, name)
    if not hasattr(owner, parts[-1]):
        raise FixDoesNotApply(f"known defect {entry_id}: {field} {spec!r}: {parts[-1]} is not there")
    return owner, parts[-1]


def _raw(owner, attr):
    """The attribute as stored (a staticmethod stays one), so reverting restores it exactly."""
    return owner.__dict__[attr] if isinstance(owner, type) and attr in owner.__dict__ else getattr(owner, attr)


def apply_one(registry, fix_id):
    """Applies one fix of `registry`; returns the callable that reverts it."""
    undo = []
    with _collect(registry, [fix_id], undo, keep=True):
        pass
    def revert():
        for owner, attr, original in reversed(undo):
            setattr(owner, attr, original)
    return revert


def plugin_fixes(implementation):
    """{id: adapters.plugin.Fix} of the plugin's registry (registry_for): what Plugin.fixes() returns."""
    from ..plugin import Fix
    registry = registry_for(implementation)
    return {fix_id: Fix(fix_id, entry.get("title", ""), lambda fix_id=fix_id: apply_one(registry, fix_id))
            for fix_id, entry in registry["defects"].items()
            if (entry.get("fix") or {}).get("kind") == "replacement"}


@contextlib.contextmanager
def applied(registry, ids):
    """Applies the fixes `ids` of `registry` for the duration of the block; reverts them after."""
    undo = []
    with _collect(registry, ids, undo, keep=False):
        yield


@contextlib.contextmanager
def _collect(registry, ids, undo, keep):
    """Applies `ids` in order, recording (owner, attr, original) in `undo`; reverts them when the
    block ends unless `keep` (then only when applying one of them failed)."""
    done = False
    try:
        for fix_id in ids or []:
            entry = registry["defects"].get(fix_id)
            if entry is None:
                raise FixDoesNotApply(f"known defect {fix_id}: no such entry in {registry.get('path') or 'the registry'}")
            fix = entry.get("fix") or {}
            if fix.get("kind") != "replacement":
                raise FixDoesNotApply(f"known defect {fix_id}: a fix of kind {fix.get('kind')!r} is not applied at run time "
                                      "(a patch goes to the site: muoncheck judge-patch)")
            owner, attr = _resolve(fix.get("target", ""), fix_id, "target")
            original = _raw(owner, attr)
            expects = fix.get("expects")
            if expects:
                if expects not in _source_of(inspect.unwrap(getattr(original, "__func__", original))):
                    raise FixDoesNotApply(f"known defect {fix_id}: {fix['target']} no longer has the line the fix was written "
                                          f"against ({expects!r})")
            make_owner, make_attr = _resolve(fix.get("replacement", ""), fix_id, "replacement")
            replacement = _counted(fix_id, _wrapping(getattr(make_owner, make_attr)(getattr(owner, attr)), original))
            setattr(owner, attr, replacement)
            undo.append((owner, attr, original))
            for name in fix.get("bound_as") or []:
                module_name, _, bound = name.partition(":")
                if not hasattr(_resolve(module_name + ":__name__", fix_id, "bound_as")[0], bound):
                    continue   # this version calls the target through its module: nothing bound here
                other, other_attr = _resolve(name, fix_id, "bound_as")
                current = getattr(other, other_attr)
                if inspect.unwrap(current) is not inspect.unwrap(getattr(original, "__func__", original)):
                    raise FixDoesNotApply(f"known defect {fix_id}: bound_as {name!r} is not {fix['target']}")
                # built on this name's own value: a fix applied before under this name stays under it
                undo.append((other, other_attr, _raw(other, other_attr)))
                setattr(other, other_attr, _counted(fix_id, _wrapping(getattr(make_owner, make_attr)(current), current)))
        yield
        done = True
    finally:
        if not (keep and done):
            for owner, attr, original in reversed(undo):
                setattr(owner, attr, original)


@functools.lru_cache(maxsize=None)
def _source_of(func):
    """The source of `func` (unwrapped), read once per process: inspect re-reads and tokenizes the
    whole module each time, about 0.1 s for one of DeepSpeed's ZeRO files, and an attribution applies
    every fix on every re-run."""
    try:
        return inspect.getsource(func)
    except (OSError, TypeError):
        return ""


_unused = set()   # fixes applied since reset_usage() whose replacement has not run


def reset_usage():
    """Forget the usage of the fixes applied so far: call before applying a case's fixes."""
    _unused.clear()


def unused_fixes():
    """The fixes applied since reset_usage() whose replacement (a function) has not run, sorted."""
    return sorted(_unused)


def marked_in_chain(func, marker):
    """Whether a fix carrying attribute `marker` is in the chain of replacements ending at `func`
    (each one's __wrapped__ is what it replaced); the fix is then marked used (its presence acts)."""
    while func is not None:
        if getattr(func, marker, False):
            _unused.discard(getattr(func, "fix_id", None))
            return True
        func = getattr(func, "__wrapped__", None)
    return False


def counted_for(source, func):
    """`func`, marking the fix that made `source` (a replacement in place, carrying its fix_id) used
    when it runs: for a fix that builds `source`'s behaviour anew around another function instead
    of calling it."""
    fix_id = getattr(source, "fix_id", None)
    return func if fix_id is None else _counting(fix_id, func)


def _counting(fix_id, func):
    @functools.wraps(func)
    def counted(*args, **kwargs):
        _unused.discard(fix_id)
        return func(*args, **kwargs)

    return counted


def _counted(fix_id, replacement):
    """`replacement`, marking `fix_id` used when it runs; a replacement that is not a function is
    returned as it is and never reported unused."""
    if not inspect.isfunction(replacement):
        return replacement
    counted = _counting(fix_id, replacement)
    counted.fix_id = fix_id
    _unused.add(fix_id)
    return counted


def _wrapping(replacement, original):
    """`replacement`, marked as wrapping `original`: a later fix of the same target checks its
    `expects` against the shipped source (inspect.getsource unwraps), and a bound name is known for
    the target's whatever fixes were applied to either before."""
    if callable(replacement) and not hasattr(replacement, "__wrapped__"):
        replacement.__wrapped__ = getattr(original, "__func__", original)
    return replacement


def registry_for(implementation):
    """$MUONCHECK_KNOWN_DEFECTS (a user's file) if set, else the plugin's own next to it."""
    path = os.environ.get("MUONCHECK_KNOWN_DEFECTS")
    if not path:
        own = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), implementation, "known_defects.json")
        path = own if os.path.exists(own) else None
    return load(path)
