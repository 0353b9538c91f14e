"""One case of a plugin: a resolved scenario and a configuration in, the trace out (rank 0; None
elsewhere). Never raises for the case: a decline is the trace's `unsupported` (`knob K: reason`
when a knob is the cause, so declines are counted per knob), anything the plugin or the
implementation raises is its `error`. The fixes a request names are applied before the case and
reverted after it, whatever the case did.
"""
import os
import time
import traceback

import torch

from . import engine_loop, optimizer_loop, space
from .common import fixes as fix_usage
from .common import ranks
from .common import scenario as scenario_file
from .common import trace as trace_doc
from .plugin import Decline, PluginError, Unsupported

DEVICE = os.environ.get("MUONCHECK_DEVICE", "cpu")


def device():
    return torch.device("cuda", ranks.local_rank()) if DEVICE == "cuda" else torch.device("cpu")


def decline_text(knob, reason):
    return f"knob {knob}: {reason}" if knob else reason


def header(plugin, config, fixes):
    return {"plugin": plugin.name, "config": config, "fixes": list(fixes), "adapter": "adapters/worker.py",
            "torch": torch.__version__, "world_size": ranks.world_size(),
            "device": torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu",
            "backend": "nccl" if DEVICE == "cuda" else "gloo"}


def _apply_fixes(plugin, ids):
    known = plugin.fixes()
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise PluginError(f"plugin {plugin.name!r}: fixes: unknown id(s) {', '.join(map(str, unknown))} "
                          f"(known: {', '.join(sorted(known)) or 'none'})")
    reverts = []
    try:
        for i in ids:
            reverts.append(known[i].apply())
    except BaseException:
        for r in reversed(reverts):
            r()
        raise
    return reverts


def declines(plugin, resolved, config):
    """Whether the plugin declines this resolved scenario and configuration on this device, in any
    process world (the mapper's question, asked before a case is handed to a worker): a Decline or None."""
    s = scenario_file.Scenario(resolved, "<declines request>")
    s.config = space.full_config(plugin, config)
    return _decline(plugin, s, s.config)


def _decline(plugin, s, config):
    """The one decision both a declines request and a case take: the plugin's declines on this
    device, then what DDP/FSDP2 and the optimizer loop cannot wrap."""
    decline = plugin.declines_here(s, config) or plugin.declines(s, config)
    if decline is None and plugin.shape == "optimizer":
        try:
            optimizer_loop.check_wrappable(s, s.dp)
        except Unsupported as e:
            return Decline(e.knob, e.reason)
    return decline


def run(plugin, resolved, config=None, fixes=(), repeat=0, source="<resident request>"):
    """The trace of one case on rank 0 (None elsewhere)."""
    start = time.time()
    s = scenario_file.Scenario(resolved, source)
    details, body, unsupported, error = header(plugin, config, fixes), None, None, None
    reverts = []
    try:
        config = space.full_config(plugin, config)
        details["config"] = s.config = config
        if s.dp != ranks.world_size():
            raise Unsupported(f"engine.dp {s.dp}: this worker has {ranks.world_size()} process(es)")
        decline = _decline(plugin, s, config)
        if decline is not None:
            raise Unsupported(decline.reason, knob=decline.knob)
        fix_usage.reset_usage()
        reverts = _apply_fixes(plugin, list(fixes))
        details.update(plugin.details(s, config) or {})
        loop = optimizer_loop if plugin.shape == "optimizer" else engine_loop
        with ranks.raised_noted():   # a rank that raises alone says so before the others hang (the engine loop earlier)
            body = loop.run(plugin, s, details, device())
        if fixes:
            details["fixes_unused"] = fix_usage.unused_fixes()
    except Unsupported as e:
        unsupported = decline_text(e.knob, e.reason)
    except Exception as e:   # the case's verdict (the plugin's or the implementation's), not the worker's end
        traceback.print_exc()
        error = f"{type(e).__name__}: {e}"
    finally:
        for r in reversed(reverts):
            try:
                r()
            except Exception as e:   # a fix that cannot be reverted taints every later case: say so
                traceback.print_exc()
                error = error or f"reverting a fix: {type(e).__name__}: {e}"
    if DEVICE == "cuda":
        torch.cuda.empty_cache()
    if ranks.rank() != 0:
        return None
    if body is None and unsupported is None and error is None:
        error = "rank 0 produced no trace body"
    details["wall_seconds"] = round(time.time() - start, 3)
    try:
        version = plugin.version()
    except Exception as e:
        version, error = "?", error or f"version(): {type(e).__name__}: {e}"
    return trace_doc.document(s, plugin.title, version, details, body=body, unsupported=unsupported,
                              error=error, repeat=repeat)
