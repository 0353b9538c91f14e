import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)                             # the checkout: adapters
sys.path.insert(0, os.path.dirname(__file__))        # mymuon_package


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory):
    """The throwaway plugins installed as a package would be (pip install --target): their entry
    points are found on PYTHONPATH, nothing in this repository names them."""
    import mymuon_package
    base = tmp_path_factory.mktemp("mymuon")
    mymuon_package.write(str(base / "project"))
    site = base / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--target", str(site), str(base / "project")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return str(site)


def muoncheck(*args, site=None, timeout=600, env=None):
    """Runs the muoncheck binary ($MUONCHECK, else build/harness/muoncheck) from the checkout."""
    binary = os.environ.get("MUONCHECK") or os.path.join(ROOT, "build/harness/muoncheck")
    e = dict(os.environ, **(env or {}))
    if site:
        e["PYTHONPATH"] = site + os.pathsep + e.get("PYTHONPATH", "")
    return subprocess.run([binary, *args], capture_output=True, text=True, cwd=ROOT, env=e, timeout=timeout)
