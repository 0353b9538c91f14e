"""heavyball 3.2.1: under FSDP2, Muon's step gathers each sharded matrix's update, gradient and parameter
whole, in fp32, on every rank (chainable.py's needs_full_param path: _full_tensor), where the gradients
travel in the mixed-precision reduce dtype (bf16 here).

    python3 reports/heavyball/upstream/fsdp2_full_fp32_gathers_repro.py   # exit 1 while it gathers fp32

Plain torch + heavyball, two CPU ranks over gloo (spawned here).
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run(rank, world, port, result):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.tensor import DTensor
    import heavyball
    import heavyball.utils
    heavyball.utils.compile_mode = None
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 8, bias=False)
    fully_shard(model, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16))
    opt = heavyball.Muon(model.parameters(), lr=0.02, nesterov=False)
    gathered, full = [], DTensor.full_tensor

    def spy(self, *a, **k):
        gathered.append(str(self.dtype))
        return full(self, *a, **k)
    DTensor.full_tensor = spy
    model(torch.randn(4, 8)).float().sum().backward()
    opt.step()
    DTensor.full_tensor = full
    result[rank] = gathered
    dist.destroy_process_group()


if __name__ == "__main__":
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = mp.Manager().dict()
    mp.spawn(run, args=(2, port, result), nprocs=2)
    gathers = result[0]
    print(f"rank 0 gathered {len(gathers)} whole tensors in one step of one 8x8 matrix: {gathers} (reduce dtype bf16)")
    sys.exit(1 if any(g == "torch.float32" for g in gathers) else 0)
