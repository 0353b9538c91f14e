"""`python -m muoncheck ARGS`: the same as the `muoncheck` command."""
import sys

from ._command import main

sys.exit(main())
