"""A training loop's state read-backs defer rank 0's verdict to the next step's settle
(adapters/common/ranks.py deferred_verdicts, settle): the check synchronises nothing, every rank
raises the error at the settle (rank 0 its own, the others its message), and an error left
unsettled when its run ends another way does not reach the next run."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def test_a_deferred_verdict_is_raised_on_every_rank_at_the_settle_and_dies_with_its_run():
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                           os.path.join(HERE, "deferred_verdicts_run.py")],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    results = {r["rank"]: r for r in (json.loads(x[len("RESULT "):]) for x in done.stdout.splitlines()
                                      if x.startswith("RESULT "))}
    assert sorted(results) == [0, 1], done.stdout[-3000:] + done.stderr[-3000:]
    zero, one = results[0], results[1]
    assert zero["at_check"] is None and one["at_check"] is None
    assert zero["at_settle"] == "ValueError: the read-back of step 0 failed"
    assert one["at_settle"] == "RuntimeError: the read-back of step 0 failed"
    assert zero["after_settle"] is None and one["after_settle"] is None
    assert zero["other_error"] == one["other_error"] == "KeyError: 'the engine failed first'"
    assert zero["next_run"] is None and one["next_run"] is None
    assert zero["undeferred"] == "ValueError: checked at once"
    assert one["undeferred"] == "RuntimeError: checked at once"
