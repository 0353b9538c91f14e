import glob
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


def muoncheck_command(*args, site=None, env=None):
    """The argv and environment of the muoncheck binary ($MUONCHECK, else build/harness/muoncheck)
    with `site` (a plugin package's folder) first on PYTHONPATH."""
    binary = os.environ.get("MUONCHECK") or os.path.join(ROOT, "build/harness/muoncheck")
    e = dict(os.environ, **(env or {}))
    if site:
        e["PYTHONPATH"] = site + os.pathsep + e.get("PYTHONPATH", "")
    return [binary, *args], e


def muoncheck(*args, site=None, timeout=600, env=None):
    """Runs muoncheck (muoncheck_command) from the checkout."""
    argv, e = muoncheck_command(*args, site=site, env=env)
    return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=e, timeout=timeout)


def deepspeed_site(version=None):
    """A PYTHONPATH entry under which `import deepspeed` works ("" when it already does), of
    `version` when one is given: the environment's, $MUONCHECK_DS_SITE, or scripts/deepspeed-site.sh's
    /tmp folders. None when there is none."""
    probe = [sys.executable, "-c", "import os, sys; os.environ.setdefault('DS_ACCELERATOR', 'cpu'); import deepspeed; "
             "sys.exit(0 if sys.argv[1] in ('', deepspeed.__version__) else 1)", version or ""]
    candidates = [""] + [os.environ.get("MUONCHECK_DS_SITE", "")] + sorted(
        glob.glob("/tmp/muoncheck-site-ds-*") + glob.glob("/tmp/ds-*"), reverse=True)
    for site in dict.fromkeys(candidates):
        if site == "" or os.path.isdir(os.path.join(site, "deepspeed")):
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in (site, os.environ.get("PYTHONPATH", "")) if x))
            if subprocess.run(probe, env=env, capture_output=True).returncode == 0:
                return site
    return None


def fix_driver(driver, version, fix_ids):
    """Runs `driver` (a Python program printing one JSON object last: its result, or {"skip": V}
    when the DeepSpeed it imports is not `version`) with the fix ids and this checkout as its two
    arguments, under a DeepSpeed `version` site; skips the test where there is no such site."""
    import json
    site = deepspeed_site(version)
    if site is None:
        pytest.skip(f"no DeepSpeed {version} site (scripts/deepspeed-site.sh {version} installs one)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in (site, ROOT, os.environ.get("PYTHONPATH", "")) if x),
               TORCH_COMPILE_DISABLE="1")
    done = subprocess.run([sys.executable, "-c", driver, json.dumps(fix_ids), ROOT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if "skip" in out:
        pytest.skip(f"DeepSpeed {out['skip']}: the driver is for {version}")
    return out
