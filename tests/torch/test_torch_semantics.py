"""The torch adapter's semantic guards (adapters/torch/semantics.py) decline what they must, and its
two per-run checks fire on inputs where torch and the scenario really differ."""
import copy

import pytest
import torch

from adapters.common import scenario as scenario_file
from adapters.torch import semantics


@pytest.fixture(scope="module")
def thin():
    return scenario_file.load("scenarios/torch/torch-thin-z0-dp1-fp32.json")


def test_conforming_scenario_runs(thin):
    assert semantics.check_runnable(thin, 1) == "ddp"


@pytest.mark.parametrize("field,value,says", [
    ("momentum_form", "sum", "momentum_form"), ("ns_method", "gram", "ns_method"), ("ns_dtype", "fp32", "ns_dtype"),
    ("per_head", True, "per_head"), ("stage", 1, "stage 1"), ("zero_init", True, "zero_init"),
    ("ns_coefficients", None, "per-iteration schedule"),
    ("overflow", [{"step": 0}], "overflow"), ("param_dtype", "fp16", "fp16"), ("dp", 2, "engine.dp 2")])
def test_declines_name_the_field(thin, field, value, says):
    s = copy.copy(thin)
    setattr(s, field, value)
    with pytest.raises(semantics.Unsupported, match=says):
        semantics.check_runnable(s, 1)


def test_declines_a_muon_param_that_is_not_2d(thin):
    s = copy.deepcopy(thin)
    s.params[0].shape = [4, 8, 8]
    with pytest.raises(semantics.Unsupported, match="2-D params only"):
        semantics.check_runnable(s, 1)


def test_norm_check_sees_the_clamp_only_where_it_differs():
    check = semantics.NormCheck()
    check(torch.ones(4, 4) * 0.25, None, (3.4445, -4.775, 2.0315), 5, 1e-7)        # ‖U‖ = 1: one divisor
    assert check.calls == 1 and check.differing == []
    check(torch.ones(4, 4) * 2.5e-7, None, (3.4445, -4.775, 2.0315), 5, 1e-7)      # ‖U‖ = 1e-6: two divisors
    assert check.calls == 2 and len(check.differing) == 1 and "NS input norm" in check.differing[0]


def test_clip_edge_finds_the_norm_just_below_max():
    assert semantics.clip_edge([2.0, 0.5, 0.9], 1.0) is None
    # the feature first (the sweep counts declines by the text before the first ':'), then the step
    edge = "clip norm within 1e-6 below max_norm: step "
    assert semantics.clip_edge([1.0], 1.0).startswith(edge + "0 ")   # N = max: torch scales by 1/(1 + 1e-6)
    assert semantics.clip_edge([2.0, 1.0 - 5e-7], 1.0).startswith(edge + "1 ")
