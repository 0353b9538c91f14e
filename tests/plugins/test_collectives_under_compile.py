"""The collective recorder (adapters/common/collectives.py) sees the collectives of a function
torch.compile compiled — compiled before the recorder was active, or under it — as it sees eager
ones; and it records gather and scatter, the kinds to or from one root rank."""
import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fc

from adapters.common.collectives import CollectiveRecorder


@pytest.fixture(scope="module")
def world():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1")
    dist.init_process_group("gloo")
    yield
    dist.destroy_process_group()


def step(x):
    return fc.all_reduce(x * 2, "sum", dist.group.WORLD) + 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_compiled_function_s_collectives_are_recorded(world, backend):
    torch._dynamo.reset()
    compiled = torch.compile(step, backend=backend)
    x = torch.ones(8)
    compiled(x)   # compiled outside the recorder first: the cached graph runs under it below
    recorder = CollectiveRecorder(lambda kind, n: "grad_reduce")
    with recorder:
        out = compiled(x)
    assert torch.equal(out, step(x))
    assert [(c["kind"], c["elements"], c["dtype"]) for c in recorder.log] == [("all_reduce", 8, "fp32")]


def test_gather_and_scatter_are_recorded_with_the_root_s_size(world):
    recorder = CollectiveRecorder(lambda kind, n: "state_export")
    x = torch.ones(6)
    with recorder:
        out = [torch.zeros(6)]
        dist.gather(x, out, dst=0)
        y = torch.zeros(6)
        dist.scatter(y, [torch.ones(6)], src=0)
    assert [(c["kind"], c["elements"]) for c in recorder.log] == [("gather", 6), ("scatter", 6)]
