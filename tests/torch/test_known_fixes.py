"""adapters/common/fixes.py: a registry's runtime replacement is applied for one case and reverted
after it; a fix whose target or expected line is gone, or an id the registry lacks, raises
FixDoesNotApply naming the entry; the plugin seam's Fix objects come from the same registry."""
import json

import pytest

from adapters.common import fixes
from adapters.torch import optimizers

REGISTRY = "tests/torch/known_defects_no_nesterov.json"


def registry(tmp_path, **fix_fields):
    with open(REGISTRY) as f:
        data = json.load(f)
    data["defects"][0]["fix"].update(fix_fields)
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(data))
    return fixes.load(str(path))


def test_a_replacement_holds_for_the_block_and_is_reverted_after():
    r = fixes.load(REGISTRY)
    broken = optimizers.no_nesterov
    with fixes.applied(r, ["no-nesterov"]):
        assert optimizers.no_nesterov is not broken
    assert optimizers.no_nesterov is broken
    revert = fixes.apply_one(r, "no-nesterov")
    assert optimizers.no_nesterov is not broken
    revert()
    assert optimizers.no_nesterov is broken


def test_a_fix_that_no_longer_applies_names_its_entry(tmp_path):
    stale = registry(tmp_path, expects="a line the factory no longer has")
    with pytest.raises(fixes.FixDoesNotApply, match="known defect no-nesterov: .* no longer has the line"):
        with fixes.applied(stale, ["no-nesterov"]):
            pass
    gone = registry(tmp_path, target="adapters.torch.optimizers:no_such_factory")
    with pytest.raises(fixes.FixDoesNotApply, match="known defect no-nesterov: target .*no_such_factory is not there"):
        with fixes.applied(gone, ["no-nesterov"]):
            pass
    with pytest.raises(fixes.FixDoesNotApply, match="known defect other: no such entry"):
        with fixes.applied(fixes.load(REGISTRY), ["other"]):
            pass
    assert optimizers.no_nesterov.__name__ == "no_nesterov"   # nothing left replaced


def test_the_plugin_seam_reads_the_registry(monkeypatch):
    monkeypatch.setenv("MUONCHECK_KNOWN_DEFECTS", REGISTRY)
    found = fixes.plugin_fixes("torch")
    assert list(found) == ["no-nesterov"]
    broken = optimizers.no_nesterov
    revert = found["no-nesterov"].apply()
    assert optimizers.no_nesterov is not broken
    revert()
    assert optimizers.no_nesterov is broken


def test_a_fix_reaches_every_name_the_target_is_bound_under(tmp_path, monkeypatch):
    (tmp_path / "fx_home.py").write_text("def f():\n    return 'shipped'\n\ndef fixed(original):\n    return lambda: 'fixed'\n")
    (tmp_path / "fx_user.py").write_text("from fx_home import f\n\ndef g():\n    return 'other'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fx_home
    import fx_user
    entry = {"id": "copied", "fix": {"kind": "replacement", "from": "ours", "target": "fx_home:f",
                                     "replacement": "fx_home:fixed", "bound_as": ["fx_user:f", "fx_user:h"]}}
    r = {"implementation": "t", "defects": {"copied": entry}}
    with fixes.applied(r, ["copied"]):
        assert fx_home.f() == "fixed" and fx_user.f() == "fixed"
        assert not hasattr(fx_user, "h")   # a name the module does not hold is left alone
    assert fx_home.f() == "shipped" and fx_user.f() == "shipped"
    entry["fix"]["bound_as"] = ["fx_user:g"]   # a name that holds something else
    with pytest.raises(fixes.FixDoesNotApply, match="known defect copied: bound_as 'fx_user:g' is not fx_home:f"):
        with fixes.applied(r, ["copied"]):
            pass
    assert fx_home.f() == "shipped" and fx_user.g() == "other"   # nothing left replaced


def test_two_fixes_of_one_target_each_check_the_shipped_source(tmp_path, monkeypatch):
    (tmp_path / "fx_twice.py").write_text(
        "def f(x):\n    return x + 1  # the shipped line\n\n"
        "def double(original):\n    return lambda x: 2 * original(x)\n\n"
        "def negate(original):\n    return lambda x: -original(x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fx_twice
    fix = {"kind": "replacement", "from": "ours", "target": "fx_twice:f", "expects": "return x + 1  # the shipped line"}
    r = {"implementation": "t", "defects": {
        "a": {"id": "a", "fix": dict(fix, replacement="fx_twice:double")},
        "b": {"id": "b", "fix": dict(fix, replacement="fx_twice:negate")}}}
    with fixes.applied(r, ["a", "b"]):
        assert fx_twice.f(1) == -4
    assert fx_twice.f(1) == 2


def test_a_bound_name_keeps_the_fix_applied_to_it_before(tmp_path, monkeypatch):
    (tmp_path / "fx_chain.py").write_text(
        "def f(x):\n    return x\n\ndef plus_one(original):\n    return lambda x: original(x) + 1\n\n"
        "def times_ten(original):\n    return lambda x: 10 * original(x)\n")
    (tmp_path / "fx_chain_user.py").write_text("from fx_chain import f\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fx_chain
    import fx_chain_user
    r = {"implementation": "t", "defects": {
        "only-there": {"id": "only-there", "fix": {"kind": "replacement", "from": "ours", "target": "fx_chain_user:f",
                                                   "replacement": "fx_chain:plus_one"}},
        "everywhere": {"id": "everywhere", "fix": {"kind": "replacement", "from": "ours", "target": "fx_chain:f",
                                                   "replacement": "fx_chain:times_ten", "bound_as": ["fx_chain_user:f"]}}}}
    with fixes.applied(r, ["only-there", "everywhere"]):
        assert fx_chain.f(1) == 10 and fx_chain_user.f(1) == 20
    assert fx_chain.f(1) == 1 and fx_chain_user.f(1) == 1


USAGE_DEMO = '''
class Box:
    def triple(self, x):
        return 3 * x

    def quadruple(self, x):
        return 4 * x


def fixed_triple(original):
    def triple(self, x):
        return original(self, x)
    return triple


def fixed_quadruple(original):
    def quadruple(self, x):
        return original(self, x)
    quadruple.demo_marker = True   # a fix another code path looks for instead of calling it
    return quadruple
'''


def test_a_fix_whose_code_never_ran_is_reported_unused(tmp_path, monkeypatch):
    (tmp_path / "usage_demo.py").write_text(USAGE_DEMO)
    monkeypatch.syspath_prepend(str(tmp_path))
    import usage_demo
    entry = lambda i, name: {"id": i, "fix": {"kind": "replacement", "target": f"usage_demo:Box.{name}",   # noqa: E731
                                              "replacement": f"usage_demo:fixed_{name}"}}
    path = tmp_path / "usage.json"
    path.write_text(json.dumps({"implementation": "demo", "defects": [entry("ran", "triple"), entry("looked-at", "quadruple")]}))
    fixes.reset_usage()
    with fixes.applied(fixes.load(str(path)), ["ran", "looked-at"]):
        assert fixes.unused_fixes() == ["looked-at", "ran"]
        assert usage_demo.Box().triple(2) == 6
        assert fixes.unused_fixes() == ["looked-at"]
        assert not fixes.marked_in_chain(usage_demo.Box.triple, "demo_marker")
        assert fixes.unused_fixes() == ["looked-at"]
        assert fixes.marked_in_chain(usage_demo.Box.quadruple, "demo_marker")
        assert fixes.unused_fixes() == []
        fixes.reset_usage()
        fixes._unused.update({"ran", "looked-at"})
        rebuilt = fixes.counted_for(usage_demo.Box.triple, lambda x: x + 1)   # built anew, not called
        assert rebuilt(1) == 2 and fixes.unused_fixes() == ["looked-at"]
    assert usage_demo.Box.triple.__name__ == "triple" and not hasattr(usage_demo.Box.triple, "fix_id")   # reverted
    fixes.reset_usage()
    assert fixes.unused_fixes() == []
