"""muon-optimizer 0.1.0: `Muon` raises at world size 4 with 5 (or 1, 9, ...) parameters of one
shape: the padding does not complete the last chunk.

    python3 reports/muon-optimizer/upstream/padding_world4_repro.py     # exit 1 while the defect is there

muon.py, Muon.step: `params_pad = params + [torch.empty_like(params[-1])] * (len(params) % W)` adds
len % W tensors where W − len % W are missing (1 instead of 3 here), so the last
`all_gather(params_pad[base_i:base_i + W], ...)` gets a list of 2 outputs for 4 ranks. Known upstream
(KellerJordan/Muon issues #29, #30, pull request #28); the repository's master pads by
`W - len % W`, the PyPI release 0.1.0 does not.

torch + muon-optimizer only, four CPU processes over gloo, one step of five 4x4 parameters.
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
    params = [torch.nn.Parameter(torch.randn(4, 4)) for _ in range(5)]
    for p in params:
        p.grad = torch.randn_like(p)
    try:
        muon.Muon(params, lr=0.02).step()
        results[rank] = "stepped"
    except Exception as e:
        results[rank] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    dist.destroy_process_group()


if __name__ == "__main__":
    world = 4
    with mp.Manager() as manager:
        results = manager.dict()
        ctx = mp.start_processes(rank_main, args=(world, 29533, results), nprocs=world, join=False)
        ctx.join(timeout=180)
        for p in ctx.processes:
            if p.is_alive():
                p.kill()
        got = {r: results.get(r, "no result (killed after 180 s)") for r in range(world)}
    ok = all(v == "stepped" for v in got.values())
    for r, v in got.items():
        print(f"rank {r}: {v}")
    print("OK" if ok else "DEFECT: the last chunk is padded to len % W, not to W")
    sys.exit(0 if ok else 1)
