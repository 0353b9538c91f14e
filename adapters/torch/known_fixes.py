"""Fixes of known torch.optim.Muon defects, applied for one case on request (adapters/torch/known_defects.json
names them; adapters/common/fixes.py applies and reverts them)."""


def ns_on_a_copy(original_zeropower):
    """pytorch/pytorch PR #194664 ("fix momentum buffer aliasing in Newton-Schulz", in torch 2.15):
    `_zeropower_via_newtonschulz` starts with `ortho_grad = grad.bfloat16()`, the tensor itself when
    it is bf16 already, then divides it in place; with Nesterov off that tensor is the momentum
    buffer. The PR copies (`grad.to(dtype=torch.bfloat16, copy=True)`); here the original runs on a copy."""

    def zeropower(grad, *args, **kwargs):
        return original_zeropower(grad.clone(), *args, **kwargs)

    return zeropower
