"""A muoncheck scenario as muoncheck itself resolves it (`muoncheck resolve`), for the adapters.

muoncheck's C++ loader is the one validator and the one place the defaults, the llama preset and
the tagging of docs/semantics.md §3 live: `muoncheck resolve SCENARIO` prints the canonical scenario (every default
filled in), the expanded parameter list with each parameter's matrix view and tag, and the
scenario hash. `load(path)` accepts such a resolved file, or a scenario file, which it resolves by
running the muoncheck binary (`$MUONCHECK`, else build/harness/muoncheck or
build-cuda/bundle/bin/muoncheck beside this checkout, else the installed wheel's, else `muoncheck`
on PATH). Nothing here
re-implements a default: a field this reader needs that the resolved file lacks is a KeyError.
"""
import json
import math
import os
import shutil
import subprocess

RESOLVED_FORMAT = "muoncheck-resolved-scenario/1"
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_CANDIDATES = ("build/harness/muoncheck", "build-cuda/bundle/bin/muoncheck", "build-cuda/harness/muoncheck")


class Param:
    def __init__(self, entry):
        self.index, self.name, self.shape = int(entry["index"]), entry["name"], [int(x) for x in entry["shape"]]
        self.num_heads = int(entry["num_heads"]) or None      # explicit per-head count in the file
        self.rows, self.cols = int(entry["rows"]), int(entry["cols"])   # the matrix view (rank 1: 1 × n)
        self.use_muon, self.tag_heads = bool(entry["use_muon"]), int(entry["tag_heads"])   # docs/semantics.md §3
        self.lr_scale, self.weight_decay = float(entry["lr_scale"]), float(entry["weight_decay"])   # groups applied
        self.lr_schedule = dict(entry["lr_schedule"])   # its group's, else the optimizer's; every field


class Scenario:
    def __init__(self, resolved, source):
        if resolved.get("format") != RESOLVED_FORMAT:
            raise ValueError(f"{source}: not a {RESOLVED_FORMAT} document (muoncheck resolve writes one)")
        self.resolved, self.source = resolved, source
        self.raw = resolved["scenario"]          # canonical: parses back to the same scenario and hash
        self.hash = resolved["hash"]
        raw = self.raw
        self.name, self.seed, self.steps = raw["name"], int(raw["seed"]), int(raw["steps"])
        model = raw["model"]
        self.preset = {k: v for k, v in model.items() if k != "preset"} if "preset" in model else None
        self.params = [Param(p) for p in resolved["params"]]
        e = raw["engine"]
        self.stage, self.dp, self.gas, self.micro_batch = (int(e[k]) for k in ("stage", "dp", "gas", "micro_batch"))
        self.zero_init = bool(e["zero_init"])
        self.reduce_bucket_size, self.allgather_bucket_size = int(e["reduce_bucket_size"]), int(e["allgather_bucket_size"])
        self.contiguous_gradients = bool(e["contiguous_gradients"])
        self.param_dtype, self.grad_accum_dtype, self.comm_dtype = e["param_dtype"], e["grad_accum_dtype"], e["comm_dtype"]
        o = raw["optimizer"]
        self.optimizer = o
        self.lr, self.momentum, self.nesterov = float(o["lr"]), float(o["momentum"]), bool(o["nesterov"])
        self.momentum_form, self.ns_method, self.ns_steps = o["momentum_form"], o["ns_method"], int(o["ns_steps"])
        # every iteration's (a, b, c), as muoncheck resolved them (a schedule name or one triple expanded);
        # ns_coefficients: the one triple all iterations share, None for a per-iteration schedule
        self.ns_iterations = [tuple(float(c) for c in k) for k in resolved["ns_coefficients"]]
        self.ns_coefficients = list(self.ns_iterations[0]) if len(set(self.ns_iterations)) == 1 else None
        self.ns_dtype, self.scale_rule = o["ns_dtype"], o["scale_rule"]
        self.weight_decay, self.per_head = float(o["weight_decay"]), bool(o["per_head"])
        self.adam = dict(o["adam"])
        self.groups = list(o["groups"])
        self.clip = dict(o["clip"])
        self.loss_scaler = dict(raw["loss_scaler"])
        self.overflow = list(raw["overflow"])
        # beside the canonical scenario, which leaves these out at their defaults
        path = resolved["engine_path"]
        self.offload_optimizer, self.compile = path["offload_optimizer"], bool(path["compile"])
        self.lr_schedule = dict(resolved["lr_schedule"])
        self.checkpoint = resolved["checkpoint"]   # None, or {save_after_step, resume: {dp, stage, gas, zero_init}}

    def group_of(self, name):
        """The first group whose `match` is a substring of the name (None: no group)."""
        return next((g for g in self.groups if g["match"] in name), None)

    def lr_factor(self, name, t):
        """lr_scale · f(t) of the param's schedule (its group's, else the optimizer's)."""
        p = self._by_name[name]
        return p.lr_scale * lr_factor(p.lr_schedule, t)

    def resumed(self):
        """The scenario as it continues after its checkpoint (the resume engine muoncheck resolved:
        resume dp with gas re-split, resume stage); itself when there is no checkpoint."""
        if not self.checkpoint:
            return self
        out = Scenario(self.resolved, self.source)
        r = self.checkpoint["resume"]
        out.dp, out.stage, out.gas, out.zero_init = int(r["dp"]), int(r["stage"]), int(r["gas"]), bool(r["zero_init"])
        return out

    @property
    def _by_name(self):
        return {p.name: p for p in self.params}

    @property
    def global_batch(self):
        return self.dp * self.gas * self.micro_batch

    def global_sample(self, micro_step, rank, local):
        # j = (k·dp + r)·micro_batch + i  (docs/semantics.md §2)
        return (micro_step * self.dp + rank) * self.micro_batch + local


def lr_factor(schedule, t):
    """The factor of a full schedule (every field, as resolve writes it) at step t: the formula of
    docs/semantics.md, "Learning-rate schedules" (core/scenario.cpp lr_factor)."""
    shape, warmup = schedule["shape"], int(schedule["warmup_steps"])
    if shape == "constant":
        return 1.0
    if shape == "table":   # the last factor holds after the table ends
        factors = schedule["factors"]
        return float(factors[min(max(t, 0), len(factors) - 1)])
    if shape == "linear_warmup":
        return min(1.0, (t + 1) / warmup)
    if t < warmup:
        return (t + 1) / warmup
    total, floor = int(schedule["total_steps"]), float(schedule["min_ratio"])
    progress = min(1.0, (t - warmup) / (total - warmup))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def _installed_binary():
    try:
        import muoncheck
    except ImportError:
        return ""
    return muoncheck.binary()


def muoncheck_binary():
    for path in [os.environ.get("MUONCHECK", "")] + [os.path.join(_ROOT, c) for c in _CANDIDATES] + [_installed_binary()]:
        if path and os.access(path, os.X_OK):
            return path
    found = shutil.which("muoncheck")
    if found:
        return found
    raise FileNotFoundError("no muoncheck binary to resolve the scenario with: set MUONCHECK, build it "
                            "(build/harness/muoncheck), or pass files written by `muoncheck resolve`")


def resolve(path):
    """The resolved document of a scenario file, from `muoncheck resolve`."""
    done = subprocess.run([muoncheck_binary(), "resolve", path], capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(f"muoncheck resolve {path}: {done.stderr.strip() or done.returncode}")
    return json.loads(done.stdout)


def load(path):
    """A Scenario from a resolved file or from a scenario file (resolved by muoncheck)."""
    with open(path) as f:
        doc = json.load(f)
    return Scenario(doc if doc.get("format") == RESOLVED_FORMAT else resolve(path), path)
