"""Third-party Muon implementations as plugins (adapters/plugin.py), one module each, found through
the entry point group `muoncheck.implementations` (adapters/pyproject.toml). Each module's exact
semantics, read from the package's source, are in docs/implementations.md; its known defects and
their fixes in the registry file beside it (`NAME_fixes.py`)."""
