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
import torch
from torch.utils._python_dispatch import _disable_current_modes

NS_EPS = 1e-7


from ..plugin import Unsupported  # noqa: E402,F401  (one decline type for the loop, the plugin and the tests)

CLIP_EPS = 1e-6


def check_runnable(s, world_size):
    """Raises Unsupported with one line naming the field and torch's behaviour (the text before its
    first ':' names the feature); returns the parallelism. The wrapping's declines
    (adapters/optimizer_loop.check_wrappable) first, then torch.optim.Muon's (plugin.TorchMuon.declines)."""
    from ..optimizer_loop import check_wrappable
    from .plugin import TorchMuon
    mode = check_wrappable(s, world_size)
    decline = TorchMuon().declines(s, {})
    if decline is not None:
        raise Unsupported(decline.reason, knob=decline.knob)
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
    from ..optimizer_loop import clip_edge as edge
    return edge(norms, max_norm)
