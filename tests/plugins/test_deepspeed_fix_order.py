"""Known-defect fixes of the DeepSpeed registry that stack on one function: a fix applied later to
original_muon.muon_update (rank3-batched-ns) must reach the stage-0 Muon step the stage-0 fix
(stage0-no-newton-schulz) puts in place, whatever order the two come in; a sweep applies every
fix in the registry's order, the stage-0 fix first. Needs a DeepSpeed 0.19.6 site (the stage-0
fix's `expects` line is 0.19.6's); skipped without one."""
import pytest

from conftest import fix_driver

# One stage-0 step of MuonWithAuxAdam on a conv1d weight (out 2, in 3, k 4) with both fixes applied
# in the order given; prints the shapes Newton-Schulz was called with.
DRIVER = """
import json, os, sys
os.environ.setdefault("DS_ACCELERATOR", "cpu")
import torch
import deepspeed
if deepspeed.__version__ != "0.19.6":
    print(json.dumps({"skip": deepspeed.__version__})); sys.exit(0)
from adapters.common import fixes
import deepspeed.runtime.zero.muon.original_muon as om
seen = []
for name in ("zeropower_via_newtonschulz5", "zeropower_via_gram_newtonschulz"):
    plain = getattr(om, name)
    def counted(G, *a, _plain=plain, **k):
        seen.append(list(G.shape))
        return _plain(G, *a, **k)
    setattr(om, name, counted)
registry = fixes.load(os.path.join(sys.argv[2], "adapters", "deepspeed", "known_defects.json"))
fixes.reset_usage()
with fixes.applied(registry, json.loads(sys.argv[1])):
    from deepspeed.runtime.zero.muon.muon_optimizer import MuonWithAuxAdam
    p = torch.nn.Parameter(torch.randn(2, 3, 4))
    p.use_muon = True
    opt = MuonWithAuxAdam([dict(params=[p], use_muon=True, lr=0.02, momentum=0.95, weight_decay=0.0,
                                ns_method="standard")])
    p.grad = torch.randn(2, 3, 4)
    opt.step()
    unused = fixes.unused_fixes()
print(json.dumps({"ns_shapes": seen, "unused": unused}))
"""


def ns_shapes(ids):
    out = fix_driver(DRIVER, "0.19.6", ids)
    assert out["unused"] == [], "both fixes' code ran on the step, as attribution is told (fixes_unused)"
    return out["ns_shapes"]


@pytest.mark.parametrize("ids", [["stage0-no-newton-schulz", "rank3-batched-ns"],
                                 ["rank3-batched-ns", "stage0-no-newton-schulz"]])
def test_stage0_step_runs_the_rank3_fix_in_either_order(ids):
    # the (out, in*k) matrix, once: the 3-D update reaching NS whole would be a batch of 2 (3 x 4) slices
    assert ns_shapes(ids) == [[2, 12]]
