"""emerging-optimizers' known defects' fixes (reports/emerging-optimizers/upstream/), as the registry
adapters/emerging-optimizers/known_defects.json names them (adapters/common/fixes.py applies them)."""
import functools


def update_in_param_placement(original):
    """OrthogonalizedOptimizer.step adds the orthogonalized update to the parameter in place; under
    FSDP2 the update of a matrix with fewer rows than ranks comes back Replicate while the parameter
    is Shard(0), and DTensor refuses the in-place add: the update is redistributed to the
    parameter's placements first."""
    @functools.wraps(original)
    def orthogonalize(self, p, grad, **kwargs):
        out = original(self, p, grad, **kwargs)
        if hasattr(out, "placements") and hasattr(p, "placements") and tuple(out.placements) != tuple(p.placements):
            out = out.redistribute(p.device_mesh, p.placements)
        return out
    return orthogonalize


def cans_in_fp32(original):
    """orthogonalized_optimizers/muon_utils.py, newton_schulz: under fp32_matmul_prec "medium" (Muon's
    default) `X = X.to(torch.bfloat16)` runs every iteration in bf16. The "cans" set's first triple
    (8.4703, -25.1081, 18.6293) maps σ = 0.367 to 1.9915, and the second (4.1828, -3.1087, 0.5806)
    diverges from σ = 2.0 on: a 0.4% margin, under bf16's rounding, so 15–30% of random 37x8
    matrices come out inf or ~1e20 (the other sets: none; in fp32: none). The replacement runs a "cans" call at precision "highest" (the iterations in fp32, as
    upstream did for CANS in matrix_root_inverse_utils, PR #277: "bf16 compute is insufficient for
    CANS"); every other call, and the function itself, are the shipped ones."""
    import torch

    @functools.wraps(original)
    def newton_schulz(x, steps, coefficient_type="quintic", *args, **kwargs):
        if coefficient_type != "cans" or torch.get_float32_matmul_precision() == "highest":
            return original(x, steps, coefficient_type, *args, **kwargs)
        before = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("highest")
        try:
            return original(x, steps, coefficient_type, *args, **kwargs)
        finally:
            torch.set_float32_matmul_precision(before)
    return newton_schulz
