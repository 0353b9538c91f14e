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
