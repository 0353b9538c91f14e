"""Runs muoncheck scenarios through torch.optim.Muon + torch.optim.AdamW (the `torch` plugin,
plugin.py, on muoncheck's optimizer loop, adapters/optimizer_loop.py) and writes one trace each
(docs/trace-format.md) for `muoncheck verify`.

    python -m adapters.torch.run --out DIR SCENARIO.json...                 (dp 1, from the checkout)
    torchrun --nproc-per-node 2 -m adapters.torch.run --out DIR SCENARIO.json...    (dp 2)

One process per rank; a scenario runs when its `engine.dp` is the world size (else it is declined).
CPU over gloo unless MUONCHECK_DEVICE=cuda. `--optimizer-factory module:attr` swaps the factory
(optimizers.py); `--repeat` runs each scenario twice (the deterministic invariant).
"""
import argparse
import os
import sys
import time

if __package__ in (None, ""):   # run as a file: import the package from the checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    __package__ = "adapters.torch"

import torch.distributed as dist  # noqa: E402

from .. import case, worker  # noqa: E402
from ..common import scenario as scenario_file  # noqa: E402
from ..common import trace as trace_doc  # noqa: E402
from . import optimizers  # noqa: E402
from .plugin import with_factory  # noqa: E402


def run_file(path, plugin, out_dir, repeat=0):
    s = scenario_file.load(path)
    start = time.time()
    trace = case.run(plugin, s.resolved, None, (), repeat, source=path)
    if trace is None:
        return True
    out = os.path.join(out_dir, f"{s.name}{'.repeat1' if repeat else ''}.trace.json")
    trace_doc.write(trace, out)
    status = ("UNSUPPORTED: " + trace["unsupported"]) if "unsupported" in trace else \
        ("ERROR: " + trace["error"]) if "error" in trace else "ran"
    print(f"{s.name}{' (repeat)' if repeat else ''}: {status} in {time.time() - start:.1f} s -> {out}", flush=True)
    return "error" not in trace


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenarios", nargs="+", help="scenario files (or files written by `muoncheck resolve`)")
    ap.add_argument("--out", required=True, help="folder the traces go to (<scenario>.trace.json)")
    ap.add_argument("--optimizer-factory", default="adapters.torch.optimizers:torch_muon",
                    help="module:attribute of the factory (see optimizers.py)")
    ap.add_argument("--repeat", action="store_true",
                    help="run each scenario a second time as well: <scenario>.repeat1.trace.json, \"repeat\": 1 "
                         "(the run muoncheck's deterministic invariant compares against)")
    args = ap.parse_args(argv)
    plugin = with_factory(optimizers.load_factory(args.optimizer_factory), args.optimizer_factory)
    os.environ.setdefault("MUONCHECK_PORT", "29541")
    worker.init_process_group(case.DEVICE)
    os.makedirs(args.out, exist_ok=True)
    try:
        ok = [run_file(p, plugin, args.out, repeat)
              for p in args.scenarios for repeat in ((0, 1) if args.repeat else (0,))]
    finally:
        dist.destroy_process_group()
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
