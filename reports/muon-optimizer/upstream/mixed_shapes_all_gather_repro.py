"""muon-optimizer 0.1.0: `Muon` fails (or hangs) at world size ≥ 2 when one all-gather chunk holds
parameters of different shapes.

    python3 reports/muon-optimizer/upstream/mixed_shapes_all_gather_repro.py     # exit 1 while the defect is there

muon.py, Muon.step: after each chunk of W = world_size parameters it calls
`dist.all_gather(params_pad[base_i:base_i + W], params_pad[base_i + rank])`. all_gather needs every
output tensor to have the input's shape; the parameters are only sorted by shape, so two matrices
of different shapes in one chunk (here 63x3 and 4x64, as in any model whose hidden matrices are not
all one shape) make gloo raise "invalid tensor size" on one rank while the other waits in the
collective (NCCL was not tried here). SingleDeviceMuon and world size 1 are not affected.

torch + muon-optimizer only, two CPU processes over gloo, one step; each rank must end with both
parameters stepped. The parent kills the ranks after 180 s (the hang).
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def rank_main(rank, world, port, results):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    import muon
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(63, 3)), torch.nn.Parameter(torch.randn(4, 64))]
    for p in params:
        p.grad = torch.randn_like(p)
    try:
        muon.Muon(params, lr=0.02).step()
        results[rank] = "stepped"
    except Exception as e:
        results[rank] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    dist.destroy_process_group()


if __name__ == "__main__":
    world = 2
    with mp.Manager() as manager:
        results = manager.dict()
        ctx = mp.start_processes(rank_main, args=(world, 29531, results), nprocs=world, join=False)
        ctx.join(timeout=180)
        hung = [p.pid for p in ctx.processes if p.is_alive()]
        for p in ctx.processes:
            if p.is_alive():
                p.kill()
        got = {r: results.get(r, "no result (waiting in all_gather: killed)") for r in range(world)}
    ok = all(v == "stepped" for v in got.values())
    for r, v in got.items():
        print(f"rank {r}: {v}")
    print("OK" if ok else "DEFECT: Muon cannot gather a chunk of differently shaped parameters")
    sys.exit(0 if ok else 1)
