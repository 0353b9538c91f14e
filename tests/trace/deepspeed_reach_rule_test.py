"""scripts/deepspeed-reach.py picks DeepSpeed's Muon-relevant lines by its stated rule.

A synthetic `deepspeed` package: in a shared file only the top-level statements of a function
that mention muon count, and of an if/elif chain only its Muon branches; a function named for
Muon counts whole; in runtime/zero/muon a class nobody imports and a base method the subclass
overrides without super() are dead, a helper another file imports is not.
"""
import importlib.util
import os
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("cov", os.path.join(HERE, "..", "..", "scripts", "deepspeed-reach.py"))
cov = importlib.util.module_from_spec(spec)
try:
    spec.loader.exec_module(cov)
except ImportError as e:   # coverage.py not installed: nothing to check here
    print(f"skipped: {e}")
    sys.exit(77)

ENGINE = '''\
def configure(name, params):
    x = 1
    if name == "adam":
        opt = "adam"
    elif name == "muon":
        opt = "muon"
    else:
        opt = None
    use_muon = params
    return opt


def _muon_groups(params):
    a = 1
    return a


def unrelated():
    return 0
'''
ORIGINAL = '''\
def helper():
    return 1


class Unused:
    def step(self):
        return 2


class Base:
    def step(self):
        return 3

    def shared(self):
        return 4
'''
OPTIMIZER = '''\
from deepspeed.runtime.zero.muon.original_muon import Base as BaseMuon
from deepspeed.runtime.zero.muon.original_muon import helper


class Sub(BaseMuon):
    def step(self):
        return helper()

    def shared(self):
        return super().shared()
'''


def write(root, rel, text):
    path = os.path.join(root, "deepspeed", rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))
    return path


failures = []
with tempfile.TemporaryDirectory() as root:
    engine = write(root, "runtime/engine.py", ENGINE)
    write(root, "runtime/zero/muon/original_muon.py", ORIGINAL)
    write(root, "runtime/zero/muon/muon_optimizer.py", OPTIMIZER)
    write(root, "runtime/zero/stage.py", "from deepspeed.runtime.zero.muon.muon_optimizer import Sub\n")
    units = dict(cov.muon_functions(engine))
    if set(units) != {"configure", "_muon_groups"}:
        failures.append(f"Muon-touching functions: {sorted(units)}")
    # configure: the elif muon branch (lines 5-6) and `use_muon = params` (9); not the adam branch nor `x = 1`
    if units.get("configure") != [(5, 6), (9, 9)]:
        failures.append(f"configure spans: {units.get('configure')}")
    if units.get("_muon_groups") != [(14, 15)]:
        failures.append(f"_muon_groups spans: {units.get('_muon_groups')}")
    dead = cov.dead_definitions(os.path.join(root, "deepspeed"))
    want = {("runtime/zero/muon/original_muon.py", "Unused"), ("runtime/zero/muon/original_muon.py", "Base.step")}
    if set(dead) != want:
        failures.append(f"dead definitions: {sorted(dead)}, expected {sorted(want)}")

# Executed lines travel between machines by their path inside the package: a site elsewhere, a
# folder named deepspeed above the site, and a saved lines file all land on the same key.
for path, rel in (("/tmp/site-0.19.8/deepspeed/runtime/zero/stage3.py", "runtime/zero/stage3.py"),
                  ("/home/deepspeed/site/deepspeed/runtime/engine.py", "runtime/engine.py"),
                  ("/usr/lib/python3/other/module.py", None)):
    if cov.package_relative(path) != rel:
        failures.append(f"package_relative({path}) = {cov.package_relative(path)}, expected {rel}")
with tempfile.TemporaryDirectory() as d:
    saved = os.path.join(d, "lines.json")
    with open(saved, "w") as f:
        f.write('{"schema": "muoncheck-deepspeed-reach-lines/1", "lines": {"runtime/engine.py": [3, 5]}}')
    other = os.path.join(d, "other.json")
    with open(other, "w") as f:
        f.write('{"schema": "muoncheck-deepspeed-reach-lines/1", "lines": {"runtime/engine.py": [5, 9]}}')
    if cov.measured([saved, other]) != {"runtime/engine.py": {3, 5, 9}}:
        failures.append(f"measured over two line files: {cov.measured([saved, other])}")

for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
