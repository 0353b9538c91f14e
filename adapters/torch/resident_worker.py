"""The resident worker for torch.optim.Muon: adapters/worker.py with `--impl torch` (kept as a
module name for scripts that start it). $MUONCHECK_TORCH_FACTORY (module:attribute) swaps the
optimizer factory — a deliberately broken one shows a sweep finding a defect."""
import sys

from .. import worker

if __name__ == "__main__":
    sys.exit(worker.main(["--impl", "torch"] + sys.argv[1:]))
