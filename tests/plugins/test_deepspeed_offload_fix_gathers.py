"""A known-defect fix must not bring another defect along: offload-no-newton-schulz writes 0.19.8's
offload Muon step into 0.19.6, whose own gathers Newton-Schulz's input in fp32 whatever
communication_data_type says (offload-muon-gather-fp32). The fix gathers it in the communication
dtype, so a case it explains is not left failing comm-dtype-respected (0.19.6 dp-2 seed-34 case 45:
NEW for that alone). Needs a DeepSpeed 0.19.6 site; skipped without one."""
import os

import pytest

from conftest import deepspeed_site, muoncheck

SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "offload-bf16-fix-gathers-z1-dp2.json")


def test_the_offload_fix_gathers_newton_schulz_input_in_the_communication_dtype():
    site = deepspeed_site("0.19.6")
    if site is None:
        pytest.skip("no DeepSpeed 0.19.6 site (scripts/deepspeed-site.sh 0.19.6)")
    done = muoncheck("verify", "--impl", "deepspeed=0.19.6", *(["--impl-site", site] if site else ["--installed"]),
                     SCENARIO, "--dp", "2", "--case-timeout-s", "300",
                     "--fix", "offload-no-newton-schulz", "--invariant", "comm-dtype-respected", timeout=900)
    row = next((x for x in done.stdout.splitlines() if x.strip().startswith("comm-dtype-respected")), "")
    assert " PASS " in row and "muon_gather (bf16)" in row, done.stdout[-3000:] + done.stderr[-2000:]
