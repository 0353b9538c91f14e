"""The strips kernel's operand ring (impl/math/cuda/triangle_strips.cu) as a model that runs on the
CPU under adversarial schedules, as test_triangle_ring.py models the ping-pong kernel's.

A cluster of two blocks steps through the same number of jobs. A job's stage holds three panels:
in a shared job, slot r of both blocks comes from block r's multicast and slot 2 from the block
itself; in a job of its own a block copies every slot it uses. Both multiplying warpgroups of a
block read every stage (no turn), waiting on its barrier by phase parity, and release it to the
barriers of both blocks (either may multicast into it); a copier refills a slot once all four
warpgroups of the cluster released it.

What must hold, in every schedule: a warpgroup reads a slot only when it holds exactly the pieces
of its own step; no copy lands in a slot a warpgroup still reads; nothing deadlocks. Two broken
versions must fail, so that the model is shown able to: the one of the kernel mutant
strips-own-release-only (a slot's barrier counts its own block's readers only) and a warpgroup that
reads a stage without waiting for it to land.

On the GPU the two blocks of a cluster start together and do the same work, so they never drift a
ring apart, and the first of those mutants passed every gpu test. The gpu test StripsUnderLagTest
makes one block idle before each job (StripsTiming::second_block_lags); `lagging` models that
timing, under which the protocol must still hold and the mutant must fail on every schedule.
"""
import random

import pytest

from ring_model import MBarrier, RingModel, first_failure as first_failure_of

STAGES = 4   # kStages
SLOTS = 3    # kSlots


class StripRing(RingModel):
    """Two blocks, each with `jobs` (True: shared with the other block, False: its own) of `steps`
    k-steps; a warpgroup is one arrival (the kernel's four warps each arrive; the count scales)."""

    readers_counted = 4   # both warpgroups of both blocks
    waits_for_landing = True

    def __init__(self, jobs, steps, rng):
        super().__init__(2, STAGES, rng)   # a piece is (step, slot)
        self.jobs, self.steps = jobs, steps
        self.empty = [[MBarrier(self.readers_counted) for _ in range(STAGES)] for _ in range(2)]

    def pieces(self, step):
        return {(step, k) for k in range(SLOTS)}

    def copier(self, b):
        p = 0
        for shared in self.jobs:
            for _ in range(self.steps):
                s = p % STAGES
                yield lambda s=s, p=p: self.empty[b][s].passed(((p // STAGES) & 1) ^ 1)
                self.full[b][s].arrive(expect=SLOTS)
                for k in range(SLOTS):
                    if shared and k < 2:
                        if k == b:   # this block's panel of the pair, into both blocks
                            self.in_flight += [(0, s, (p, k)), (1, s, (p, k))]
                    else:
                        self.in_flight.append((b, s, (p, k)))
                p += 1

    def release_to(self, b):
        return (0, 1)

    def multiplier(self, b, w):
        for n in range(len(self.jobs)):
            yield from self.job_start(b, w)
            yield from self.multiply_tile(b, w, n * self.steps, self.steps, self.pieces, self.waits_for_landing)
            # then the epilogue, while the copier refills

    def job_start(self, b, w):
        """What a warpgroup does before a job: nothing here (see lagging)."""
        return iter(())

    def release(self, b, s):
        self.reading[b][s] -= 1
        for dest in self.release_to(b):
            self.empty[dest][s].arrive()

    def processes(self):
        return [self.copier(b) for b in range(2)] + [self.multiplier(b, w) for b in range(2) for w in (0, 1)]


def first_failure(jobs, steps, schedules=300, ring=StripRing):
    return first_failure_of(lambda rng: ring(jobs, steps, rng), schedules)


# The 4096² table's mix: shared pairs, then the diagonal's jobs of their own.
JOBS = [True, True, True, False, False]


@pytest.mark.parametrize("steps", [1, 3, 12])
def test_every_schedule_reads_its_own_step(steps):
    assert first_failure(JOBS, steps) is None


def test_jobs_of_their_own_before_shared_ones():
    assert first_failure([False, True, False, True], 5) is None


class OwnReleaseOnly(StripRing):
    """dev/cuda/mutants/strips-own-release-only.patch: a slot's barrier counts its own block's
    readers, so the other block may multicast into it while they still read it."""

    readers_counted = 2

    def release_to(self, b):
        return (b,)


def test_the_model_catches_a_slot_that_counts_its_own_readers_only():
    found = first_failure(JOBS, 12, schedules=200, ring=OwnReleaseOnly)
    assert found is not None and "while read" in found, found


class NoFullWait(StripRing):
    """dev/cuda/mutants/tile-no-full-wait.patch: a stage read before its copies land."""

    waits_for_landing = False


def test_the_model_catches_a_read_before_the_stage_lands():
    found = first_failure(JOBS, 3, schedules=50, ring=NoFullWait)
    assert found is not None and "read slot" in found, found


class _DeferIdle:
    """A scheduler that steps a process waiting at an idle point only when nothing else can move."""

    def __init__(self, model, rng):
        self.model, self.rng = model, rng

    def choice(self, choices):
        others = [c for c in choices if not (c[0] == "proc" and c[1] in self.model.idle)]
        return self.rng.choice(others or choices)


def lagging(ring):
    """ring under the gpu test StripsUnderLagTest's timing (StripsTiming::second_block_lags): block
    1's warpgroups idle before every job for longer than the rest of the cluster can go on (20 µs
    against a job's few), and any order otherwise."""

    class Lagging(ring):
        def __init__(self, jobs, steps, rng):
            self.idle = set()   # the processes (their index in processes()) idling before a job
            super().__init__(jobs, steps, _DeferIdle(self, rng))

        def job_start(self, b, w):
            if b == 1:
                i = 2 + 2 * b + w   # processes(): the two copiers, then (block, warpgroup) in order
                self.idle.add(i)
                yield lambda: True
                self.idle.discard(i)

    return Lagging


# StripsUnderLagTest's X·Xᵀ: nine k-steps a job, shared and own jobs.
@pytest.mark.parametrize("jobs", [JOBS, [False, True, True]])
def test_a_lagging_block_reads_its_own_step(jobs):
    assert first_failure(jobs, 9, schedules=100, ring=lagging(StripRing)) is None


def test_the_lag_alone_catches_a_slot_that_counts_its_own_readers_only():
    """Not one schedule under the lag lets the mutant through: the gpu test needs no lucky
    interleaving to catch it, only the lag. The lagging block finds its partner's panel of a later
    step in a slot it has not read yet (its product changes), or a copy lands while it reads."""
    for seed in range(50):
        with pytest.raises(AssertionError, match=r"while read|read slot \d+ for step \d+ holding"):
            lagging(OwnReleaseOnly)(JOBS, 9, random.Random(seed)).run()


def test_the_lag_needs_shared_jobs_to_catch_it():
    """Jobs of their own write nothing into the other block, so StripsUnderLagTest's cases have
    shared jobs (2 × 2 blocks below the diagonal)."""
    assert first_failure([False, False, False], 9, schedules=50, ring=lagging(OwnReleaseOnly)) is None
