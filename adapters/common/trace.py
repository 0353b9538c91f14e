"""Writing a `muoncheck-trace/2` document (docs/trace-format.md) from what an adapter saw.

`tensor_values` is the format's flat tensor encoding (round-trip floats, non-finite elements as
strings); `document` assembles the top level; `digest` is the per-rank fingerprint of a tensor
list (sha256 of the fp32 bytes) that adapters record in `implementation.details`.
"""
import hashlib
import json

import numpy as np

TRACE_FORMAT = "muoncheck-trace/2"


def _number(v):
    """A float as the format writes it: itself, or "nan"/"inf"/"-inf"."""
    if np.isfinite(v):
        return v
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


def tensor_values(t):
    """A tensor (torch or numpy) as the trace's flat list: floats, or "nan"/"inf"/"-inf"."""
    if hasattr(t, "detach"):
        t = t.detach().float().cpu().reshape(-1).numpy()
    flat = np.asarray(t, dtype=np.float64).reshape(-1)
    values = flat.tolist()   # Python floats, as float(v) makes them, without a call per element
    for i in np.flatnonzero(~np.isfinite(flat)).tolist():
        values[i] = _number(values[i])
    return values


def digest(tensors):
    """sha256 over the fp32 bytes of the tensors, in order (16 hex digits)."""
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().float().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def document(scenario, name, version, details, body=None, unsupported=None, error=None, repeat=0):
    """The trace: header, then `unsupported`, `error` or the run's body (dtypes, tags, initial, steps,
    ranks). `repeat` 1: the second run of the scenario (the deterministic invariant's)."""
    trace = {"format": TRACE_FORMAT, "repeat": int(repeat),
             "implementation": {"name": name, "version": version, "details": dict(details)},
             "scenario": {"name": scenario.name, "hash": scenario.hash, "json": scenario.raw}}
    if unsupported:
        trace["unsupported"] = unsupported
    if error:
        trace["error"] = error
    if body:
        trace.update(body)
    return trace


def _finite(obj):
    """`obj` with every non-finite float (a loss, a norm) as the format's "nan"/"inf"/"-inf" string."""
    if isinstance(obj, float):
        return _number(obj)
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def dumps(trace):
    """The trace as JSON text. JSON has no NaN or Infinity: Python's default would write bare `NaN`,
    which no JSON reader (muoncheck's included) accepts, so non-finite numbers become strings. Most
    traces hold none (tensor_values already wrote them as strings), and walking the whole trace for
    them costs more than encoding it: the walk runs only where the encoder met one."""
    try:
        return json.dumps(trace, allow_nan=False)
    except ValueError:   # a non-finite float
        return json.dumps(_finite(trace), allow_nan=False)


def write(trace, path):
    with open(path, "w") as f:
        f.write(dumps(trace))
