"""The `muoncheck` console command: replaces this process with the installed binary, so exit
codes, signals and standard streams are the binary's own. argv[0] stays "muoncheck", the name
repro lines print. MUONCHECK_PYTHON tells the binary which interpreter its resident workers run
under: this one, whose environment holds the adapters and the implementation under test
(`sweep --impl deepspeed --installed`), wherever PATH points."""
import os
import sys

from . import binary


def main():
    exe = binary()
    if not os.access(exe, os.X_OK):
        sys.stderr.write("muoncheck: infrastructure: the installed binary is missing or not executable: %s "
                         "(reinstall the muoncheck wheel)\n" % exe)
        return 3
    os.environ.setdefault("MUONCHECK_PYTHON", sys.executable)
    os.execv(exe, ["muoncheck"] + sys.argv[1:])
