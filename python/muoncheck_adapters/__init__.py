"""The adapters package as installed by the muoncheck wheel: its modules are the files of the data
folder's adapters/ (the same files the binary's workers import as `adapters.*`), so the wheel
ships them once, and `muoncheck_adapters.torch.conformance`, `muoncheck_adapters.common.scenario`,
... import as from a checkout. A MUONCHECK_DATA folder without adapters/ leaves the installed
ones in place."""
import os

import muoncheck as _muoncheck

__path__ = [d for d in (os.path.join(_muoncheck.data_dir(), "adapters"),
                        os.path.join(os.path.dirname(_muoncheck.binary()), os.pardir, "data", "adapters"))
            if os.path.isdir(d)][:1]
