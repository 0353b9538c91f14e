"""Line coverage of DeepSpeed's Muon-relevant files while the adapter runs (coverage.py).

With MUONCHECK_COVERAGE=DIR set, `start()` (called before `import deepspeed`) records the lines
of the files listed in MUON_FILES that run in this process, and `stop()` writes them to
DIR/.coverage.<host>.<pid>.<random> (one data file per rank; `coverage combine` merges them).
scripts/deepspeed-reach.py turns the combined data into reports/deepspeed/reach.{json,md}.
"""
import os

# Relative to the deepspeed package folder; the report narrows the last four to the functions
# that mention Muon (scripts/deepspeed-reach.py says how).
MUON_FILES = ("runtime/zero/muon/*.py", "runtime/zero/stage_1_and_2.py", "runtime/zero/stage3.py",
              "runtime/bf16_optimizer.py", "runtime/engine.py")

_cov = None


def start():
    global _cov
    out = os.environ.get("MUONCHECK_COVERAGE")
    if not out or _cov is not None:
        return
    import coverage
    os.makedirs(out, exist_ok=True)
    _cov = coverage.Coverage(data_file=os.path.join(out, ".coverage"), data_suffix=True,
                             include=["*/deepspeed/" + f for f in MUON_FILES], branch=False)
    _cov.start()


def stop():
    global _cov
    if _cov is not None:
        _cov.stop()
        _cov.save()
        _cov = None
