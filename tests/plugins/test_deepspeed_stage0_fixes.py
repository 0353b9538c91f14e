"""Fixes that must reach 0.19.8's stage-0 Muon step. MuonWithAuxAdam.step calls the muon_update its
module bound at import (`from ...original_muon import muon_update`), so a fix of original_muon.muon_update reaches it only
under that name too (bound_as): conv-weight-muon-update-shape must make a stage-0 step on a conv
weight run, as it does at ZeRO-1/2/3 (0.19.8 dp-2 seed-35 cases 43 and 72 were NEW for that alone).
With bf16 params it steps fp32 copies, which get the per-head tag only with
stage0-16bit-masters-drop-muon-tags (case 55 of the same sweep). Needs a DeepSpeed 0.19.8 site;
skipped without one."""
import os

import pytest

from conftest import ROOT, deepspeed_site, fix_driver

DRIVER = """
import json, os, sys
os.environ.setdefault("DS_ACCELERATOR", "cpu")
import torch
import deepspeed
if deepspeed.__version__ != "0.19.8":
    print(json.dumps({"skip": deepspeed.__version__})); sys.exit(0)
from adapters.common import fixes
# imported first, as DeepSpeed's engine has imported it before any case's fixes are applied
from deepspeed.runtime.zero.muon.muon_optimizer import MuonWithAuxAdam
registry = fixes.load(os.path.join(sys.argv[2], "adapters", "deepspeed", "known_defects.json"))
fixes.reset_usage()
with fixes.applied(registry, json.loads(sys.argv[1])):
    p = torch.nn.Parameter(torch.randn(6, 2, 3, 3))
    p.use_muon = True
    opt = MuonWithAuxAdam([dict(params=[p], use_muon=True, lr=0.02, momentum=0.95, weight_decay=0.0,
                                ns_method="standard")])
    p.grad = torch.randn(6, 2, 3, 3)
    try:
        opt.step()
        error = None
    except RuntimeError as e:
        error = str(e)
    unused = fixes.unused_fixes()
print(json.dumps({"error": error, "unused": unused}))
"""


def stage0_step(ids):
    return fix_driver(DRIVER, "0.19.8", ids)


def test_a_stage0_step_on_a_conv_weight_fails_as_shipped():
    assert "must match the size of tensor" in (stage0_step([])["error"] or "")


def test_the_conv_fix_reaches_the_stage0_step_under_its_bound_name():
    assert stage0_step(["conv-weight-muon-update-shape"]) == {"error": None, "unused": []}


WITNESS = os.path.join(ROOT, "adapters", "deepspeed", "witnesses", "stage0-bf16-per-head-masters-dp1.json")


def trajectory_row(*fixes):
    from conftest import muoncheck
    site = deepspeed_site("0.19.8")
    if site is None:
        pytest.skip("no DeepSpeed 0.19.8 site (scripts/deepspeed-site.sh 0.19.8 installs one)")
    done = muoncheck("verify", "--impl", "deepspeed=0.19.8", *(["--impl-site", site] if site else ["--installed"]), WITNESS,
                     *[a for f in fixes for a in ("--fix", f)], "--invariant", "trajectory-conforms", timeout=600)
    return next((x for x in done.stdout.splitlines() if x.strip().startswith("trajectory-conforms")), done.stdout[-2000:])


def test_the_16bit_masters_get_the_per_head_tag_with_the_fix():
    # with PR #8612's forwarding alone the bf16 masters carry no muon_num_heads: orthogonalised whole
    needs = ("stage0-per-head-dropped", "stage0-16bit-init-step")
    assert " FAIL " in trajectory_row(*needs)
    assert " PASS " in trajectory_row(*needs, "stage0-16bit-masters-drop-muon-tags")
