"""A request's fixes: applied before the case, reverted after it whatever the case did; an unknown
id is an ERROR of the case naming it."""
import types

import pytest

from adapters import case
from adapters.common import scenario as scenario_file
from adapters.plugin import Fix
from adapters.torch.plugin import TorchMuon

SEEN = types.SimpleNamespace(patched=False, during=[])


class Fixed(TorchMuon):
    def fixes(self):
        def apply():
            SEEN.patched = True
            return lambda: setattr(SEEN, "patched", False)
        return {"demo": Fix("demo", "sets a flag for the case", apply)}

    def optimizer(self, muon_groups, adam_groups, s):
        SEEN.during.append(SEEN.patched)
        return super().optimizer(muon_groups, adam_groups, s)


@pytest.fixture(scope="module")
def resolved():
    import torch.distributed as dist
    from adapters import worker
    worker.init_process_group("cpu")
    yield scenario_file.load("scenarios/torch/torch-thin-z0-dp1-fp32.json").resolved
    dist.destroy_process_group()


def test_a_fix_is_applied_for_the_case_and_reverted_after_it(resolved):
    SEEN.during.clear()
    trace = case.run(Fixed(), resolved, None, ["demo"])
    assert "error" not in trace, trace.get("error")
    assert SEEN.during == [True] and SEEN.patched is False
    assert trace["implementation"]["details"]["fixes"] == ["demo"]
    SEEN.during.clear()
    case.run(Fixed(), resolved)                      # the control: no fix asked, none applied
    assert SEEN.during == [False]


def test_an_unknown_fix_is_an_error_naming_it(resolved):
    trace = case.run(Fixed(), resolved, None, ["nope"])
    assert "unknown id(s) nope" in trace["error"] and "known: demo" in trace["error"]
