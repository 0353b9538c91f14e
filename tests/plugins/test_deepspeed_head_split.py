"""The DeepSpeed plugin declines a per-head scenario whose heads DeepSpeed would split otherwise
(adapters/deepspeed/engine_config.py check_head_split): DeepSpeed splits only query, key and
value projections, and only into its head config's counts at the query's head width; a scenario
saying otherwise was judged against a split DeepSpeed never runs (a false FAIL of tagging-matches
and the trajectory)."""
import copy
import json
import os

import pytest

from conftest import ROOT, muoncheck

from adapters.common.scenario import Scenario
from adapters.plugin import Unsupported


@pytest.fixture(scope="module")
def resolved():
    done = muoncheck("resolve", "scenarios/deepspeed/per-head-mixed-dp1.json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def with_heads(resolved, name, heads):
    doc = copy.deepcopy(resolved)
    for p in doc["params"]:
        if p["name"] == name:
            p["num_heads"] = heads
    return Scenario(doc, os.path.join(ROOT, "scenarios/deepspeed/per-head-mixed-dp1.json"))


def test_heads_deepspeed_would_split_alike_are_run_and_others_declined_with_the_reason(resolved):
    from adapters.deepspeed.engine_config import check_head_split
    check_head_split(Scenario(resolved, "per-head-mixed-dp1.json"))   # q 4 heads, k/v 1 head of 16 rows: as DeepSpeed
    with pytest.raises(Unsupported, match=r"o_proj.weight has num_heads 4 over 64 rows; DeepSpeed orthogonalises "
                                          r"it whole \(it splits only query, key and value projections"):
        check_head_split(with_heads(resolved, "model.layers.0.self_attn.o_proj.weight", 4))
    with pytest.raises(Unsupported, match=r"v_proj.weight has num_heads 0 over 16 rows; DeepSpeed "
                                          r"splits it into 1 heads of 16 rows"):
        check_head_split(with_heads(resolved, "model.layers.0.self_attn.v_proj.weight", 0))
