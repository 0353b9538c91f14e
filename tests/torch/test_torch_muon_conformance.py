"""torch.optim.Muon + AdamW through the pytest entry point (adapters/torch/conformance.py): the
conforming factory passes, and two deliberately broken factories fail with a repro line."""
import pytest

CONFORMING = "adapters.torch.optimizers:torch_muon"


def test_torch_muon_conforms_ddp_dp1(muon_conformance):
    muon_conformance(["torch-thin-z0-dp1-fp32"], CONFORMING)


def test_torch_muon_conforms_ddp_and_fsdp2_dp2(muon_conformance):
    muon_conformance(["torch-thin-z0-dp2-fp32", "torch-thin-z3-dp2-bf16"], CONFORMING, dp=2)


@pytest.mark.parametrize("broken", ["no_nesterov", "momentum_ignores_beta"])
def test_broken_factory_fails_with_repro(muon_conformance, broken):
    with pytest.raises(AssertionError) as failed:
        muon_conformance(["torch-thin-z0-dp1-fp32"], "adapters.torch.optimizers:" + broken)
    text = str(failed.value)
    assert "trajectory-conforms" in text, text
    assert "repro: muoncheck verify" in text and "--invariant trajectory-conforms" in text, text
