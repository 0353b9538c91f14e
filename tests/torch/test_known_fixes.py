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
