"""Run under torchrun (2 ranks, gloo) by test_deferred_verdicts.py: rank 0's verdict raised with
ranks.raise_together, inside and outside ranks.deferred_verdicts. Prints one RESULT line a rank."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch  # noqa: E402

from adapters import worker  # noqa: E402
from adapters.common import ranks  # noqa: E402

cpu = torch.device("cpu")


def caught(action):
    try:
        action()
        return None
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def rank0_error(text):
    return ValueError(text) if ranks.rank() == 0 else None


worker.init_process_group("cpu")
out = {"rank": ranks.rank()}
with ranks.deferred_verdicts():
    # deferred: no rank raises at the check, each one at the settle that follows
    out["at_check"] = caught(lambda: ranks.raise_together(rank0_error("the read-back of step 0 failed")))
    out["at_settle"] = caught(lambda: ranks.settle(cpu))
    out["after_settle"] = caught(lambda: ranks.settle(cpu))


def ended_by_another_error():
    with ranks.deferred_verdicts():
        ranks.raise_together(rank0_error("never settled"))
        raise KeyError("the engine failed first")


out["other_error"] = caught(ended_by_another_error)
with ranks.deferred_verdicts():
    out["next_run"] = caught(lambda: ranks.settle(cpu))   # the unsettled error did not outlive its run
out["undeferred"] = caught(lambda: ranks.raise_together(rank0_error("checked at once")))
print("RESULT " + json.dumps(out), flush=True)
