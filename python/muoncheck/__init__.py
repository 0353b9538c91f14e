"""muoncheck, installed: the `muoncheck` command is the C++ binary of this package (bin/muoncheck);
its data folder (data/: scenarios/, golden/ and the adapters/ the binary's workers import) sits
beside it, and MUONCHECK_DATA overrides it. `binary()` and `data_dir()` say where they are, for
the pytest plugin and for scripts."""
import os

try:
    from importlib.metadata import PackageNotFoundError, version as _version
    try:
        __version__ = _version("muoncheck")
    except PackageNotFoundError:   # imported from a source tree, not installed
        __version__ = "0+unknown"
except ImportError:   # Python < 3.8 has no importlib.metadata; the wheel needs 3.9
    __version__ = "0+unknown"

_HERE = os.path.dirname(os.path.abspath(__file__))


def binary():
    """The muoncheck binary this package installed."""
    return os.path.join(_HERE, "bin", "muoncheck")


def data_dir():
    """The data folder the binary reads: $MUONCHECK_DATA, else the installed one."""
    return os.environ.get("MUONCHECK_DATA") or os.path.join(_HERE, "data")
