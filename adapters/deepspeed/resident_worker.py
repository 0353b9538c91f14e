"""The resident worker for DeepSpeed: adapters/worker.py with `--impl deepspeed` (kept as a file
for scripts that start it by path)."""
import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from adapters import worker
    sys.exit(worker.main(["--impl", "deepspeed"] + sys.argv[1:]))
