"""zero3-muon-gather-mixed-shapes (0.19.6, PR #8628): ZeRO-3 gathers a round of Muon params of two
shapes as they are, which gloo refuses. Its fix pads the round in the reduce path and in the PR #8600
back-port's per-step Muon (zero3-muon-per-microbatch's fix, which gathers its rounds as 0.19.6 does),
in either order of the two fixes. The witness (8x16 beside 16x8 at dp 2) crashes with the back-port
alone. Needs a DeepSpeed 0.19.6 site; skipped without one."""
import os

import pytest

from conftest import deepspeed_site, muoncheck

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WITNESS = os.path.join(ROOT, "adapters", "deepspeed", "witnesses", "zero3-muon-gather-mixed-shapes-dp2.json")


def trajectory_row(*fixes):
    site = deepspeed_site("0.19.6")
    if site is None:
        pytest.skip("no DeepSpeed 0.19.6 site (scripts/deepspeed-site.sh 0.19.6)")
    done = muoncheck("verify", "--impl", "deepspeed=0.19.6", *(["--impl-site", site] if site else ["--installed"]), WITNESS, "--case-timeout-s", "300",
                     *[a for f in fixes for a in ("--fix", f)], "--invariant", "trajectory-conforms", timeout=900)
    row = next((x for x in done.stdout.splitlines() if x.strip().startswith("trajectory-conforms")), "")
    return row, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_back_port_alone_gathers_the_mixed_round_as_shipped():
    row, out = trajectory_row("zero3-muon-per-microbatch")
    assert " FAIL " in row and "ProcessGroupGloo::allgather: invalid tensor size" in row, out


@pytest.mark.parametrize("order", [("zero3-muon-gather-mixed-shapes", "zero3-muon-per-microbatch"),
                                   ("zero3-muon-per-microbatch", "zero3-muon-gather-mixed-shapes")])
def test_the_padded_gather_reaches_the_back_ports_rounds_in_either_order(order):
    row, out = trajectory_row(*order)
    assert " PASS " in row, out


def test_the_fix_alone_pads_the_reduce_paths_rounds():
    row, out = trajectory_row("zero3-muon-gather-mixed-shapes")
    assert " PASS " in row, out
