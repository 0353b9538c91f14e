"""The triangle kernel's operand ring (impl/math/cuda/triangle_product.cu) as a model that runs on
the CPU under adversarial schedules: a copier per block fills K ring slots step by step (TMA copies
that land whenever they land, in any order; in two-block clusters half of each A panel comes from
the other block's multicast), and two multiplying warpgroups take the block's tiles in turn, each
waiting on a slot's barrier by phase parity, as the hardware's mbarrier does.

What must hold, in every schedule: a warpgroup reads a slot only when it holds exactly the pieces
of its own step; no copy lands in a slot a warpgroup still reads; nothing deadlocks. Without the
turn (the version that hung on the H100) a warpgroup takes a phase two ahead of its own as landed,
and the model finds that in the first schedule it tries at 12 k-steps a tile (with five slots, the
ring of the H100 hang, it read step 2's data as step 12's; with the six slots of the kernel now,
step 0's); at 3 k-steps a tile no schedule of 400 finds it. With the turn, every schedule passes. Two broken versions (a turn given too early, a copier that does not wait for a
slot to be read) must fail, so that the model is shown able to.
"""
import pytest

from ring_model import MBarrier, RingModel, first_failure as first_failure_of

STAGES = 6   # kStages


class Ring(RingModel):
    """One cluster of `blocks` blocks, each with `tiles` tiles of `steps` k-steps."""

    def __init__(self, blocks, tiles, steps, turn, rng):
        super().__init__(blocks, STAGES, rng)
        self.blocks, self.tiles, self.steps, self.turn = blocks, tiles, steps, turn
        self.empty = [[MBarrier(blocks) for _ in range(STAGES)] for _ in range(blocks)]   # a warpgroup per block
        self.tokens = [[0, 0] for _ in range(blocks)]                        # turns given to warpgroup 0, 1

    def pieces(self, block, step):
        """What a block's slot holds for a step: A in halves (one from each block of the cluster)
        and B."""
        return {(step, f"A{h}") for h in range(self.blocks)} | {(step, "B")}

    def copier(self, b):
        for p in range(self.tiles * self.steps):
            s = p % STAGES
            yield lambda: self.empty[b][s].passed(((p // STAGES) & 1) ^ 1)
            self.full[b][s].arrive(expect=len(self.pieces(b, p)))
            for dest in range(self.blocks):   # this block's half of A, multicast into every block
                self.in_flight.append((dest, s, (p, f"A{b}")))
            self.in_flight.append((b, s, (p, "B")))

    turn_at_start = False   # the turn given before the tile's waits (a broken kernel)

    def give_turn(self, b, w, n):
        if self.turn and n + 1 < self.tiles:
            self.tokens[b][w ^ 1] += 1   # the other warpgroup's turn

    def multiplier(self, b, w):
        for n in range(w, self.tiles, 2):
            if self.turn and n > 0:
                yield lambda: self.tokens[b][w] > 0
                self.tokens[b][w] -= 1
            if self.turn_at_start:
                self.give_turn(b, w, n)
            handover = (lambda: None) if self.turn_at_start else (lambda n=n: self.give_turn(b, w, n))
            yield from self.multiply_tile(b, w, n * self.steps, self.steps, lambda at: self.pieces(b, at),
                                          after_waits=handover)

    def release(self, b, s):
        self.reading[b][s] -= 1
        for dest in range(self.blocks):   # the slot's barrier in every block: either may multicast into it
            self.empty[dest][s].arrive()

    def processes(self):
        return [self.copier(b) for b in range(self.blocks)] + [
            self.multiplier(b, w) for b in range(self.blocks) for w in (0, 1)]


def first_failure(blocks, tiles, steps, turn, schedules=300, ring=Ring):
    return first_failure_of(lambda rng: ring(blocks, tiles, steps, turn, rng), schedules)


@pytest.mark.parametrize("blocks", [1, 2])
@pytest.mark.parametrize("steps", [3, 12])
def test_every_schedule_reads_its_own_step_with_the_turn(blocks, steps):
    assert first_failure(blocks, tiles=4, steps=steps, turn=True) is None


@pytest.mark.parametrize("blocks", [1, 2])
def test_without_the_turn_a_warpgroup_takes_a_phase_two_ahead(blocks):
    found = first_failure(blocks, tiles=2, steps=12, turn=False)
    assert found is not None and "read slot" in found, found


class TurnGivenEarly(Ring):
    """A broken turn: given when a warpgroup starts its tile, not once it has waited on its last step."""

    turn_at_start = True


def test_the_model_catches_a_turn_given_before_the_last_wait():
    assert first_failure(2, 4, 12, True, schedules=100, ring=TurnGivenEarly) is not None


class CopierThatDoesNotWait(Ring):
    """A broken copier: refills a slot without waiting until it was read."""

    def copier(self, b):
        for _ in super().copier(b):
            yield lambda: True


def test_the_model_catches_a_copier_that_does_not_wait_for_the_slot():
    assert first_failure(1, 2, 12, True, schedules=100, ring=CopierThatDoesNotWait) is not None
