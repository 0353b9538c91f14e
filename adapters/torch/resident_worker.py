"""A long-lived torch.optim.Muon adapter: one job that runs scenario after scenario on request, for
`muoncheck sweep --impl torch` (harness/external/torch_worker.hpp starts it).

    python3 -m adapters.torch.resident_worker --socket PATH                          (dp 1)
    python3 -m torch.distributed.run --standalone --nproc-per-node DP -m adapters.torch.resident_worker --socket PATH

The protocol is adapters/common/resident.py's (hello: implementation "torch", the torch version,
the optimizer factory); each request runs like one scenario of run.py (run.trace_of) and answers
its trace. $MUONCHECK_TORCH_FACTORY (module:attribute, default adapters.torch.optimizers:torch_muon)
picks the optimizer factory — a deliberately broken one shows the sweep finding a defect.
"""
import argparse
import os
import sys

if __package__ in (None, ""):   # run as a file: import the package from the checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    __package__ = "adapters.torch"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from ..common import fixes, ranks, resident  # noqa: E402
from ..common import scenario as scenario_file  # noqa: E402
from . import optimizers, run  # noqa: E402

DEFAULT_FACTORY = "adapters.torch.optimizers:torch_muon"


def _cannot_apply(problem):
    def factory(*_):
        raise problem
    return factory


def answer(request, factory_name, registry):
    """One case, with the request's known-defect fixes applied around it (adapters/common/fixes.py).
    The factory is looked up after the fixes, so a fix may replace it; a fix that does not apply is
    the case's error (FixDoesNotApply: ...), raised where the adapter reports errors."""
    s = scenario_file.Scenario(request["scenario"], "<resident request>")
    try:
        with fixes.applied(registry, request.get("fixes")):
            trace, _, _ = run.trace_of(s, optimizers.load_factory(factory_name), factory_name)
    except fixes.FixDoesNotApply as problem:
        trace, _, _ = run.trace_of(s, _cannot_apply(problem), factory_name)
    if trace is not None:
        trace["implementation"]["details"]["adapter"] = "adapters/torch/resident_worker.py"
    return trace


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", required=True, help="Unix socket the harness listens on")
    args = ap.parse_args(argv)
    factory_name = os.environ.get("MUONCHECK_TORCH_FACTORY") or DEFAULT_FACTORY
    optimizers.load_factory(factory_name)   # a bad factory fails here, before the hello
    registry = fixes.registry_for("torch")
    run.init_process_group()
    try:
        hello = {"implementation": "torch", "name": "torch.optim.Muon", "version": torch.__version__,
                 "world_size": ranks.world_size(), "device": run.DEVICE, "optimizer_factory": factory_name,
                 "fixes": sorted(registry["defects"])}
        return resident.serve(args.socket, hello, lambda request: answer(request, factory_name, registry))
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
