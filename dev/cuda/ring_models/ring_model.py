"""What the CPU models of the GPU kernels' operand rings share (test_triangle_ring.py,
test_strips_ring.py): the mbarrier, copies that land in any order, and an adversarial scheduler
that steps the kernel's processes (copiers, multiplying warpgroups) in a seeded random order."""


class MBarrier:
    """mbarrier: a phase completes once its arrivals and its announced bytes are all in (the byte
    count may run negative while copies land before they are announced)."""

    def __init__(self, arrivals):
        self.arrivals = arrivals
        self.pending = arrivals
        self.tx = 0
        self.completed = 0   # phases completed

    def arrive(self, expect=0):
        self.tx += expect
        self.pending -= 1
        assert self.pending >= 0, "more arrivals than the barrier counts in one phase"
        self._complete()

    def complete_tx(self, n):
        self.tx -= n
        self._complete()

    def _complete(self):
        if self.pending == 0 and self.tx == 0:
            self.completed += 1
            self.pending = self.arrivals

    def passed(self, parity):
        """try_wait.parity: true once the phase of this parity has completed (a fresh barrier's
        parity 1 counts as completed)."""
        return (self.completed & 1) != parity


class RingModel:
    """A cluster's ring slots, `blocks` blocks of `stages` slots: self.full (a slot's copies
    landed), self.slot (the pieces landed in it, (step, name)), self.reading (warpgroups reading
    it), self.in_flight (copies issued, not landed: (block, slot, piece)). A subclass gives the
    processes (generators that yield a readiness test before each wait) and their barriers."""

    def __init__(self, blocks, stages, rng):
        self.rng = rng
        self.full = [[MBarrier(1) for _ in range(stages)] for _ in range(blocks)]
        self.slot = [[set() for _ in range(stages)] for _ in range(blocks)]
        self.reading = [[0] * stages for _ in range(blocks)]
        self.in_flight = []

    def processes(self):
        raise NotImplementedError

    def multiply_tile(self, b, w, first, steps, pieces, waits=True, after_waits=lambda: None):
        """Warpgroup w of block b over one tile's ring steps first… (triangle_tile.cuh's
        multiply_tile): each stage waited on by phase parity (not where `waits` is False: a broken
        kernel) and read, which must find exactly pieces(step) in it; the stage before released once
        this one's products are issued, the last after after_waits(). self.release(b, slot) is the
        subclass's."""
        stages = len(self.full[b])
        previous = None
        for at in range(first, first + steps):
            s = at % stages
            if waits:
                yield lambda s=s, at=at: self.full[b][s].passed((at // stages) & 1)
            assert self.slot[b][s] == pieces(at), (
                f"block {b} warpgroup {w} read slot {s} for step {at} holding {sorted(self.slot[b][s])}")
            self.reading[b][s] += 1
            if previous is not None:   # the step before is done (wgmma wait<1>)
                self.release(b, previous)
            previous = s
            yield lambda: True
        after_waits()
        self.release(b, previous)

    def land(self, i):
        dest, s, piece = self.in_flight.pop(i)
        assert self.reading[dest][s] == 0, f"a copy for step {piece[0]} landed in slot {s} of block {dest} while read"
        self.slot[dest][s] = {x for x in self.slot[dest][s] if x[0] == piece[0]} | {piece}
        self.full[dest][s].complete_tx(1)

    def run(self):
        procs = self.processes()
        waiting = {i: next(p, None) for i, p in enumerate(procs)}
        waiting = {i: c for i, c in waiting.items() if c is not None}
        while waiting or self.in_flight:
            ready = [i for i, c in waiting.items() if c()]
            choices = [("proc", i) for i in ready] + [("land", j) for j in range(len(self.in_flight))]
            assert choices, f"deadlock: {sorted(waiting)} wait and no copy is in flight"
            kind, i = self.rng.choice(choices)
            if kind == "land":
                self.land(i)
                continue
            c = next(procs[i], None)
            if c is None:
                del waiting[i]
            else:
                waiting[i] = c


def first_failure(make, schedules):
    """The first of `schedules` seeded schedules whose model (make(rng)) fails, as a line, else None."""
    import random

    for seed in range(schedules):
        try:
            make(random.Random(seed)).run()
        except AssertionError as e:
            return f"schedule {seed}: {e}"
    return None
