"""torch.optim.Muon + AdamW through the pytest entry point (adapters/torch/conformance.py): the
conforming factory passes, as a string or a callable, each scenario at its own dp; a factory whose
settings differ from the scenario fails naming each setting with both values before anything is
judged; a factory whose settings match but whose optimizer does not fails with a repro line; an
adapter that crashes is a run error, not a verdict; `conformance_tests` makes one test per scenario."""
import pytest
import torch

from adapters.torch import optimizers
from adapters.torch.conformance import ConformanceRunError, conformance_tests, run_conformance
from adapters.torch.optimizers import adamw_kwargs, muon_kwargs

CONFORMING = "adapters.torch.optimizers:torch_muon"


def one_line(muon_groups, adam_groups, s):   # what a user writes, with the helpers
    return [torch.optim.Muon(muon_groups, **muon_kwargs(s)), torch.optim.AdamW(adam_groups, **adamw_kwargs(s))]


def wrong_momentum(muon_groups, adam_groups, s):
    return [torch.optim.Muon(muon_groups, **{**muon_kwargs(s), "momentum": 0.95}),
            torch.optim.AdamW(adam_groups, **adamw_kwargs(s))]


def momentum_overridden_per_group(muon_groups, adam_groups, s):
    """Settings as the scenario says, but every group runs without momentum: only judging sees it."""
    opts = one_line(muon_groups, adam_groups, s)
    for g in opts[0].param_groups:
        g["momentum"] = 0.0
    return opts


def crashes(muon_groups, adam_groups, s):
    raise RuntimeError("this factory cannot build an optimizer")


def test_torch_muon_conforms_ddp_dp1(muon_conformance):
    muon_conformance(["torch-thin-z0-dp1-fp32"], CONFORMING)


def test_callable_factory_in_one_line_and_dp_from_each_scenario(muon_conformance):
    # dp 2 (DDP) and dp 2 (FSDP2, bf16) beside dp 1: each scenario at its own dp, no dp argument
    muon_conformance(["torch-thin-z0-dp1-fp32", "torch-thin-z0-dp2-fp32", "torch-thin-z3-dp2-bf16"], one_line)


def test_a_wrong_momentum_fails_naming_momentum_with_both_values(muon_conformance):
    with pytest.raises(AssertionError) as failed:
        muon_conformance(["torch-thin-z0-dp1-fp32"], wrong_momentum)
    text = str(failed.value)
    assert "Muon momentum: factory 0.95, scenario 0.5" in text, text
    assert "trajectory-conforms" not in text, "the setting is named, not its symptoms: " + text


@pytest.mark.parametrize("broken, setting", [("no_nesterov", "Muon nesterov: factory false, scenario true"),
                                             ("momentum_ignores_beta", "Muon momentum: factory 0.0, scenario 0.5")])
def test_shipped_broken_factories_fail_on_their_setting(muon_conformance, broken, setting):
    with pytest.raises(AssertionError) as failed:
        muon_conformance(["torch-thin-z0-dp1-fp32"], "adapters.torch.optimizers:" + broken)
    assert setting in str(failed.value), str(failed.value)


def test_matching_settings_but_wrong_optimizer_fails_with_repro(muon_conformance):
    with pytest.raises(AssertionError) as failed:
        muon_conformance(["torch-thin-z0-dp1-fp32"], momentum_overridden_per_group)
    text = str(failed.value)
    assert "trajectory-conforms" in text, text
    assert "repro: muoncheck verify" in text and "--invariant trajectory-conforms" in text, text


def test_an_adapter_crash_is_a_run_error_not_a_verdict(tmp_path):
    with pytest.raises(ConformanceRunError) as failed:
        run_conformance(["torch-thin-z0-dp1-fp32"], crashes, str(tmp_path))
    assert "this factory cannot build an optimizer" in str(failed.value), str(failed.value)


def test_a_lambda_factory_is_refused_with_the_reason(tmp_path):
    with pytest.raises(TypeError, match="defined at module level"):
        run_conformance(["torch-thin-z0-dp1-fp32"], lambda m, a, s: optimizers.torch_muon(m, a, s), str(tmp_path))


# One test per scenario, the run in each test's setup: test_generated[torch-thin-z2-dp2-fp32] etc.
test_generated = conformance_tests(one_line, ["torch-thin-z2-dp1-fp32", "torch-thin-z2-dp2-fp32"])
