"""DeepSpeed's config schedulers (deepspeed/runtime/lr_schedules.py, `scheduler.type`) as scenario
schedules: for each, the DeepSpeed config this plugin gives it and the rate of every step, written
from reading lr_schedules.py and runtime/engine.py (no DeepSpeed code runs here).

How the engine drives one: it builds the scheduler on its optimizer with last_batch_iteration −1
(the constructor already writes the rates of iteration −1 into every param group) and steps it
once after each applied step, with no argument. Step t of a run without skipped steps therefore
runs at the rates of iteration i = t − 1.

WarmupLR, WarmupDecayLR, OneCycle and LRRangeTest write one absolute rate into every param group,
DeepSpeed Muon's Muon and AdamW groups alike: the scenario says so with optimizer.lr = adam.lr = R
(the reference rate) and factors rate/R. Their parameters are fractions of R, so the factors depend
on the step count alone. WarmupCosineLR multiplies each group's own initial rate by a ratio: the
factors are that ratio, the Muon/AdamW split stands.
"""
import math

SCHEDULERS = ["none", "WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle", "LRRangeTest"]
ABSOLUTE = ("WarmupLR", "WarmupDecayLR", "OneCycle", "LRRangeTest")
FLOOR = 0.1   # the lowest absolute rate, as a fraction of R
REFERENCE_LR = 0.02   # R where the base scenario names no Muon lr (written into the mapped scenario)

# WarmupDecayLR's decay starts one iteration after warmup_num_steps (2 at least): step 4 at the
# earliest, so its scenarios run at least this many steps.
MIN_STEPS = {"WarmupDecayLR": 6}


def config(name, steps, reference_lr):
    """The DeepSpeed `scheduler` section for `name` in a run of `steps` steps at reference rate R."""
    low = FLOOR * reference_lr
    params = {
        "WarmupLR": {"warmup_min_lr": low, "warmup_max_lr": reference_lr, "warmup_num_steps": 3, "warmup_type": "log"},
        "WarmupDecayLR": {"total_num_steps": steps, "warmup_min_lr": low, "warmup_max_lr": reference_lr,
                          "warmup_num_steps": 2, "warmup_type": "linear"},
        "WarmupCosineLR": {"total_num_steps": steps, "warmup_min_ratio": 0.2, "warmup_num_steps": 2,
                           "cos_min_ratio": 0.1, "warmup_type": "log"},
        # cycle_momentum off: on, it writes (momentum, 0.99) into every group's betas, which the
        # scenario's Muon momentum and AdamW betas cannot follow
        "OneCycle": {"cycle_min_lr": low, "cycle_max_lr": reference_lr, "cycle_first_step_size": 2,
                     "cycle_second_step_size": 2, "decay_lr_rate": 0.5, "decay_step_size": 1,
                     "cycle_momentum": False},
        "LRRangeTest": {"lr_range_test_min_lr": low, "lr_range_test_step_size": 2, "lr_range_test_step_rate": 1.0,
                        "lr_range_test_staircase": False},
    }[name]
    return {"type": name, "params": params}


def factors(name, steps):
    """f(t) for t in [0, steps): the rate of step t over R (absolute schedulers) or the ratio of
    each group's initial rate (WarmupCosineLR)."""
    fn = {"WarmupLR": _warmup, "WarmupDecayLR": _warmup_decay, "WarmupCosineLR": _warmup_cosine,
          "OneCycle": _one_cycle, "LRRangeTest": _range_test}[name]
    return [fn(t - 1, steps) for t in range(steps)]


def _warmup(i, steps):
    w = 3
    gamma = 0.0 if i < 0 else math.log(i + 1) / math.log(w) if i < w else 1.0
    return FLOOR + (1 - FLOOR) * gamma


def _warmup_decay(i, steps):
    w, total = 2, steps
    if i < 0:
        gamma = 0.0
    elif i < w:
        gamma = i / w
    else:
        gamma = max(0.0, (total - i) / max(1.0, total - w))
    return FLOOR + (1 - FLOOR) * gamma


def _warmup_cosine(i, steps):
    w, total, start, floor = 2, steps, 0.2, 0.1
    if i < 0:
        return 0.0   # before its first step the scheduler writes rate 0
    if i < w:
        return start + (1 - start) * math.log(i + 1) / math.log(w)
    progress = min(1.0, (i - w + 1) / max(1, total - w))
    return max(0.0, floor + (1 - floor) * (1 + math.cos(math.pi * progress)) / 2)


def _one_cycle(i, steps):
    first, second, decay_rate, decay_every = 2, 2, 0.5, 1
    size = first + second
    if i < 0:
        return FLOOR
    if i < size:
        b = i + 1
        x = b / size - math.floor(b / size)   # the position within the cycle
        ratio = first / size
        scale = x / ratio if x <= ratio else (x - 1) / (ratio - 1)
        return FLOOR + (1 - FLOOR) * scale
    return FLOOR / (1 + decay_rate * (i - size + 1) / decay_every)


def _range_test(i, steps):
    step_size, rate = 2, 1.0
    return FLOOR * (1 + rate * max(0, i + 1) / step_size)
