"""emerging-optimizers 0.3.0: under FSDP2, Muon's step raises for a weight with fewer rows than ranks:
the orthogonalized update comes back Replicate, the parameter is Shard(0), and
OrthogonalizedOptimizer.step's in-place `p.add_(orth_grad, ...)` has no sharding strategy.

    python3 reports/emerging-optimizers/upstream/fsdp2_update_placement_repro.py   # exit 1 while it raises

Plain torch + emerging-optimizers, two CPU ranks over gloo (spawned here). Python < 3.12 needs
typing.override, which the package imports (supplied from typing_extensions below).
"""
import os
import sys
import typing

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

if not hasattr(typing, "override"):
    import typing_extensions
    typing.override = typing_extensions.override


def run(rank, world, port, result):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    from torch.distributed.fsdp import fully_shard
    from emerging_optimizers.orthogonalized_optimizers import Muon
    torch.manual_seed(0)
    model = torch.nn.Linear(24, 1, bias=False)   # weight 1×24: one row, two ranks
    fully_shard(model)
    opt = Muon(model.parameters(), lr=0.02)
    model(torch.randn(4, 24)).sum().backward()
    try:
        opt.step()
        result[rank] = 0
    except RuntimeError as e:
        print(f"rank {rank}: {str(e).splitlines()[0][:160]}")
        result[rank] = 1
    dist.destroy_process_group()


if __name__ == "__main__":
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = mp.Manager().dict()
    mp.spawn(run, args=(2, port, result), nprocs=2)
    failed = any(result.values())
    print("Muon.step under FSDP2 with a 1-row weight:", "raises" if failed else "runs")
    sys.exit(1 if failed else 0)
