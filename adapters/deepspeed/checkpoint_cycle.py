"""A checkpoint scenario through DeepSpeed's own checkpointing: steps 0..k, engine.save_checkpoint,
the engine torn down, a fresh one (at the resume stage when given) engine.load_checkpoint-ed, then
steps k+1... A resume at another stage goes through DeepSpeed's ds_to_universal and
`checkpoint.load_universal`. A resume at another dp needs another process world: two launches,
`--checkpoint-phase save` (steps 0..k at dp, save, convert, the trace so far in the checkpoint
folder) then `--checkpoint-phase resume` (at resume.dp: load, the rest, the whole trace);
scripts/deepspeed-run-cpu.sh launches both. Checkpoints go to $MUONCHECK_CHECKPOINTS/NAME
(default /tmp/muoncheck-checkpoints).
"""
import json
import os
import shutil
import subprocess
import sys

import torch

from adapters.common import ranks
from engine_config import merged
from engine_run import Run
import trace_v2

_UNIVERSAL = {"checkpoint": {"load_universal": True}}


class PhaseDone(Exception):
    """The save launch of a cross-dp checkpoint scenario finished; the resume launch writes the trace."""


def checkpoint_folder(s):
    return os.path.join(os.environ.get("MUONCHECK_CHECKPOINTS", "/tmp/muoncheck-checkpoints"), s.name)


def cycle(s, deepspeed, extra_config, device, run):
    """The checkpoint cycle in one process world, from `run` (built, not trained). Returns (steps,
    the run that finished, the cycle's details)."""
    k = int(s.checkpoint["save_after_step"])
    after = s.resumed()
    steps = run.train(0, k + 1)
    root = fresh_folder(s, device)
    tag, universal = save(run, root, k, convert=after.stage != s.stage)
    run.close()
    resumed = Run(after, deepspeed, merged(extra_config or {}, _UNIVERSAL if universal else {}), device,
                  load_from=(universal or root, tag))
    try:
        resumed.continues(run)
        steps += resumed.train(k + 1, s.steps)
    except BaseException:
        resumed.close()   # the caller closes the run it holds, the saved one
        raise
    return steps, resumed, {"saved_after_step": k, "resumed_dp": after.dp, "resumed_stage": after.stage,
                            "universal": bool(universal), "tag": tag}


def save_phase(s, deepspeed, extra_config, device):
    """Launch 1 of a resume at another dp: steps 0..k at dp, save, ds_to_universal, and what the
    trace needs of this launch (rank 0) in FOLDER/partial.json; raises PhaseDone."""
    k = int(s.checkpoint["save_after_step"])
    root = fresh_folder(s, device)
    run = Run(s, deepspeed, extra_config, device)
    try:
        initial = run.read_state()
        steps = run.train(0, k + 1)
        save(run, root, k, convert=True)
    except Exception as e:   # the resume launch reports it (it writes the trace)
        if ranks.rank() == 0:
            os.makedirs(root, exist_ok=True)
            with open(os.path.join(root, "partial.json"), "w") as f:
                json.dump({"error": f"save launch at dp {s.dp}: {type(e).__name__}: {e}"}, f)
        raise
    finally:
        summary = run.close()
    if ranks.rank() == 0:
        with open(os.path.join(root, "partial.json"), "w") as f:
            json.dump({"initial": initial, "steps": steps, "step_seconds": run.step_seconds, "lrs": run.lrs,
                       "calls_by_rank": run.calls_by_rank, "summary": summary}, f)
    raise PhaseDone(f"saved after step {k} at dp {s.dp} -> {root}")


def resume_phase(s, deepspeed, extra_config, device):
    """Launch 2: a fresh engine at resume.dp loads launch 1's universal checkpoint and runs steps
    k+1..; returns (run, summary, initial, steps, details) with launch 1's part first (rank 0;
    None elsewhere)."""
    k = int(s.checkpoint["save_after_step"])
    after = s.resumed()
    root = checkpoint_folder(s)
    with open(os.path.join(root, "partial.json")) as f:
        partial = json.load(f)
    if "error" in partial:
        raise RuntimeError(partial["error"])
    run = Run(after, deepspeed, merged(extra_config or {}, _UNIVERSAL), device, load_from=(root + "-universal", f"step{k}"))
    try:
        steps = run.train(k + 1, s.steps)
    finally:
        summary = run.close()
    if ranks.rank() != 0:
        return None
    # ns_calls_by_rank and the per-rank blocks keep each step's own ranks (dp before the save,
    # resume.dp after)
    run.step_seconds = partial["step_seconds"] + run.step_seconds
    run.lrs = partial["lrs"] + run.lrs
    run.calls_by_rank = partial["calls_by_rank"] + run.calls_by_rank
    before = partial["summary"]
    summary = {"heads": [{int(i): h for i, h in heads.items()} for heads in before["heads"]] + summary["heads"],
               "dtypes": before["dtypes"] + summary["dtypes"], "gathers": summary["gathers"],
               "ranks": trace_v2.joined_rank_blocks(before["ranks"], summary["ranks"])}
    details = {"saved_after_step": k, "saved_dp": s.dp, "resumed_dp": after.dp, "resumed_stage": after.stage,
               "universal": True, "tag": f"step{k}", "launches": 2}
    return run, summary, partial["initial"], partial["steps"] + steps, details


def fresh_folder(s, device):
    root = checkpoint_folder(s)
    if ranks.rank() == 0 and os.path.isdir(root):
        shutil.rmtree(root)
    ranks.barrier(device)
    return root


def save(run, root, k, convert):
    """engine.save_checkpoint after step k; with `convert`, ds_to_universal on rank 0 as DeepSpeed's
    own script runs it. Returns (tag, the universal folder or None)."""
    tag = f"step{k}"
    run.engine.save_checkpoint(root, tag=tag)
    if not convert:
        return tag, None
    universal = root + "-universal"
    last = ["see rank 0"]
    ok = torch.tensor([1])
    if ranks.rank() == 0:
        done = subprocess.run([sys.executable, "-m", "deepspeed.checkpoint.ds_to_universal", "--input_folder",
                               os.path.join(root, tag), "--output_folder", os.path.join(universal, tag),
                               "--inject_missing_state"], capture_output=True, text=True)
        if done.returncode != 0:
            last = [line for line in done.stderr.splitlines() if line.strip()][-1:] or ["(no output)"]
            ok = torch.tensor([0])
    ok = ok.to(run.device)
    torch.distributed.broadcast(ok, 0)   # every rank raises alike, or none does
    if not int(ok):
        raise RuntimeError("ds_to_universal failed: " + last[0])
    if ranks.rank() == 0:
        with open(os.path.join(universal, "latest_universal"), "w") as f:
            f.write(tag)
    ranks.barrier(run.device)
    return tag, universal
