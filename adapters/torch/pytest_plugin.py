"""pytest fixture `muon_conformance`: `muon_conformance(scenarios, factory, dp=1, ...)` asserts that
the factory's optimizers conform on the named scenarios (conformance.assert_conforms), with the
traces and the verify report under the test's tmp_path. Enable it with
`pytest_plugins = ["adapters.torch.pytest_plugin"]` in a conftest.py (installed package: it is
registered as the pytest plugin `muoncheck`)."""
import pytest

from .conformance import assert_conforms


@pytest.fixture
def muon_conformance(tmp_path):
    def check(scenarios, factory, **kwargs):
        assert_conforms(scenarios, factory, out_dir=str(tmp_path), **kwargs)
    return check
