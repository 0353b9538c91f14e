"""Where torch.optim.Muon's semantics meet the scenario's: what the adapter declines up front, and
the two differences it checks on every run instead of assuming them away.

Read from torch/optim/_muon.py (2.11 and 2.15; they differ in the bf16 cast — 2.11's
`grad.bfloat16()` aliases a bf16 input, reports/torch/upstream/ — and 2.11 has no
"spectral_unclamped"): momentum `buf.lerp_(g, 1−β)` (EMA), update
`g.lerp(buf, β)` with Nesterov else `buf`; NS in bf16, the standard quintic loop with one
coefficient triple, transposed when rows > cols, after `X / ‖X‖.clamp(min=eps)`; the update scaled
by `adjust_lr_fn` (None/"original" = √max(1, A/B), "match_rms_adamw" = 0.2·√max(A, B),
"spectral_unclamped" = √(A/B)); decoupled decay `p·(1 − lr·wd)` with the unadjusted lr; 2-D
params only (`ValueError` otherwise). torch.optim.AdamW is the scenario's AdamW (bias correction,
decoupled decay with its own lr).

Checked per run (a run where they matter is declined after the fact, never judged):
- the NS normalization: the scenario divides by ‖U‖ + 1e-7, torch by max(‖U‖, 1e-7). On each NS
  call the adapter computes both divisors in bf16 from the call's own input, as torch does; they
  are one bf16 number unless ‖U‖ is below about 2.6e-5, and if they ever differ the run is declined.
- gradient clipping: torch's clip_grad_norm_ multiplies by min(1, max/(N + 1e-6)), the scenario
  clips only when N > max; the two differ when max − 1e-6 < N ≤ max, which declines the run.
"""
import inspect

import torch
import torch.optim._muon  # noqa: F401  (read by check_runnable)
from torch.utils._python_dispatch import _disable_current_modes

NS_EPS = 1e-7
CLIP_EPS = 1e-6


class Unsupported(Exception):
    """A valid scenario that torch.optim.Muon + AdamW under DDP/FSDP2 cannot run as written."""


def parallelism(s):
    """"ddp" for stage 0, "fsdp2" for stages 2/3 (reshard_after_forward = stage 3)."""
    if s.stage == 0:
        return "ddp"
    if s.stage in (2, 3):
        return "fsdp2"
    raise Unsupported("engine.stage 1: optimizer state sharded with gradients and params whole has no torch mapping "
                      "here (ZeroRedundancyOptimizer wraps one optimizer class, the scenario needs Muon and AdamW)")


def check_runnable(s, world_size):
    """Raises Unsupported with one line naming the field and torch's behaviour; the text before its
    first ':' names the feature (the sweep counts declines by it)."""
    if s.dp != world_size:
        raise Unsupported(f"engine.dp {s.dp}: this launch has {world_size} process(es); run it under "
                          f"torchrun --nproc-per-node {s.dp}")
    mode = parallelism(s)
    if s.zero_init:
        raise Unsupported("engine.zero_init: FSDP2 builds sharded params from a meta-device model; not mapped")
    if s.momentum_form != "ema":
        raise Unsupported("optimizer.momentum_form sum: torch.optim.Muon's momentum is an EMA (buf.lerp_(g, 1-beta))")
    if s.ns_method != "standard":
        raise Unsupported(f"optimizer.ns_method {s.ns_method}: torch.optim.Muon runs the standard quintic NS loop")
    if s.ns_coefficients is None:
        raise Unsupported("optimizer.ns_coefficients: a per-iteration schedule; torch.optim.Muon takes one "
                          "(a, b, c) for every iteration")
    if s.ns_dtype != "bf16":
        raise Unsupported(f"optimizer.ns_dtype {s.ns_dtype}: torch.optim.Muon's NS computes in bf16")
    if s.scale_rule == "spectral" and "spectral_unclamped" not in inspect.getsource(torch.optim._muon):
        raise Unsupported(f"optimizer.scale_rule spectral: torch {torch.__version__} has no adjust_lr_fn "
                          "\"spectral_unclamped\" (added after 2.11)")
    if s.per_head:
        raise Unsupported("optimizer.per_head: torch.optim.Muon orthogonalizes whole matrices")
    for p in s.params:
        if p.use_muon and len(p.shape) != 2:
            raise Unsupported(f"Muon param not 2-D: {p.name} shape {p.shape}; torch.optim.Muon takes 2-D params only "
                              f"(ValueError), the scenario orthogonalizes its {p.rows}x{p.cols} view")
    if s.clip["max_norm"] > 0 and s.clip["mode"] != "raw_grad":
        raise Unsupported("optimizer.clip.mode update: torch clips gradients (clip_grad_norm_), not Muon updates")
    if s.param_dtype == "fp16" or s.loss_scaler["type"] != "none":
        raise Unsupported("fp16 / loss_scaler: torch.amp.GradScaler has no hysteresis or min_scale; not mapped")
    if s.overflow:
        raise Unsupported("overflow injections need a loss scaler that skips steps; torch's optimizers have none")
    if s.checkpoint:
        raise Unsupported("checkpoint: the adapter does not save and load torch's state (torch.distributed.checkpoint) yet")
    if s.offload_optimizer != "none":
        raise Unsupported(f"engine.offload_optimizer {s.offload_optimizer}: FSDP2's CPUOffloadPolicy is not mapped")
    if s.compile:
        raise Unsupported("engine.compile: the adapter runs torch.optim.Muon eagerly (the NS counter wraps a Python call)")
    if mode == "ddp" and (s.grad_accum_dtype != s.param_dtype or s.comm_dtype != s.param_dtype):
        raise Unsupported("DDP accumulates and all-reduces gradients in the param dtype: grad_accum_dtype / "
                          "comm_dtype other than param_dtype are not mapped")
    if mode == "fsdp2" and s.gas > 1 and s.grad_accum_dtype != s.comm_dtype:
        raise Unsupported("FSDP2 gradient accumulation: unsynced micro-steps accumulate in reduce_dtype (the "
                          "scenario's comm_dtype); grad_accum_dtype other than comm_dtype needs gas 1")
    return mode


class NormCheck:
    """Runs after each NS call (an NsCounter observer): both divisors from the call's own input."""

    def __init__(self):
        self.calls, self.differing = 0, []

    def __call__(self, G, out, *args, **kwargs):
        eps = args[2] if len(args) > 2 else kwargs.get("eps", NS_EPS)
        with torch.no_grad(), _disable_current_modes():   # not a collective of torch's own
            n = G.to(dtype=torch.bfloat16).norm()
            if hasattr(n, "full_tensor"):
                n = n.full_tensor()
            clamped, added = n.clamp(min=eps), n + NS_EPS
        self.calls += 1
        if not torch.equal(clamped, added):
            self.differing.append(f"NS input norm {float(n):.3e} (bf16): max(n, {eps}) = {float(clamped):.6e} "
                                  f"but n + 1e-7 = {float(added):.6e}")


def clip_edge(norms, max_norm):
    """The first step whose total norm N has max − 1e-6 < N ≤ max (torch clips, the scenario does not)."""
    for t, n in enumerate(norms):
        if max_norm - CLIP_EPS < n <= max_norm:
            return f"clip norm within 1e-6 below max_norm: step {t} gradient norm {n!r}, max_norm {max_norm}; " \
                   f"torch's clip_grad_norm_ scales by max/(N+1e-6) < 1, the scenario leaves it"
    return None
