"""The pytest side of conformance.py, registered as the pytest plugin `muoncheck` by the installed
package (in a checkout: `pytest_plugins = ["adapters.torch.pytest_plugin"]` in a conftest.py).

- `--muoncheck-bin PATH`: the muoncheck binary (else $MUONCHECK, a build beside the checkout, the
  installed wheel's, `muoncheck` on PATH). With none found, every conformance test is skipped with
  the reason, never failed.
- fixture `muon_conformance`: `muon_conformance(scenarios, factory, ...)` asserts that the factory
  conforms (conformance.assert_conforms) with the traces and the report under the test's tmp_path.
- fixture `muoncheck_run` (indirect, from conformance.conformance_tests): runs one scenario in the
  test's setup, so an adapter or launch error is a pytest ERROR; its `assert_conforms()` is the test.
"""
import os

import pytest

from ..common import scenario as scenario_file
from . import conformance


def pytest_addoption(parser):
    parser.addoption("--muoncheck-bin", default=None,
                     help="the muoncheck binary the conformance tests judge with (default: $MUONCHECK, a checkout's "
                          "build, the installed wheel's, muoncheck on PATH)")


def _binary(config):
    given = config.getoption("--muoncheck-bin", default=None)
    if given:
        if not os.access(given, os.X_OK):
            pytest.skip(f"--muoncheck-bin {given}: not an executable file")
        return given
    try:
        return scenario_file.muoncheck_binary()
    except FileNotFoundError as e:
        pytest.skip(f"no muoncheck binary: {e}")


@pytest.fixture
def muon_conformance(request, tmp_path):
    env = {"MUONCHECK": _binary(request.config)}

    def check(scenarios, factory, **kwargs):
        conformance.assert_conforms(scenarios, factory, out_dir=str(tmp_path), env={**env, **kwargs.pop("env", {})},
                                    **kwargs)
    return check


class _Run:
    def __init__(self, factory, scenario, failures):
        self.factory, self.scenario, self.failures = factory, scenario, failures

    def assert_conforms(self):
        if self.failures:
            name = self.factory if isinstance(self.factory, str) else conformance.factory_spec(self.factory)[0]
            raise AssertionError(f"{name} does not conform on {self.scenario}:\n" + "\n".join(self.failures))


@pytest.fixture
def muoncheck_run(request, tmp_path):
    factory, scenario = request.param
    binary = _binary(request.config)
    failures, _ = conformance.run_conformance([scenario], factory, str(tmp_path), env={"MUONCHECK": binary})
    return _Run(factory, scenario, failures)
