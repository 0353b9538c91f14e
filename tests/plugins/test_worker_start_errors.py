"""A worker whose implementation cannot be imported says why: `--impl deepspeed=V --impl-site DIR`
where DIR's deepspeed fails to import is a usage error that quotes the import error, not only that
the worker runs version "?"."""
import os

from conftest import ROOT, muoncheck

WITNESS = os.path.join(ROOT, "adapters", "deepspeed", "witnesses", "stage0-bf16-per-head-masters-dp1.json")


def test_an_implementation_that_cannot_be_imported_is_named_with_its_import_error(tmp_path):
    (tmp_path / "deepspeed").mkdir()
    (tmp_path / "deepspeed" / "__init__.py").write_text("import a_module_this_site_lacks\n")
    done = muoncheck("verify", "--impl", "deepspeed=0.19.8", "--impl-site", str(tmp_path), WITNESS, timeout=300)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "the worker runs ?" in done.stderr and "No module named 'a_module_this_site_lacks'" in done.stderr, done.stderr
