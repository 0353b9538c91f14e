"""pytorch-optimizer 4.1.0: under FSDP2, Muon with ns_method="gram_newton_schulz" gathers each sharded
matrix's update whole, in fp32, on every rank (utils/matrix.py: _orthogonalize_dtensor, g.full_tensor(),
before its fp16 cast), where the gradients travel in the mixed-precision reduce dtype (bf16 here); the
default newton_schulz casts to bf16 first and gathers bf16.

    python3 reports/pytorch-optimizer/upstream/fsdp2_full_fp32_gather_repro.py   # exit 1 while it gathers fp32

Plain torch + pytorch_optimizer, two CPU ranks over gloo (spawned here).
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
    import pytorch_optimizer
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 8, bias=False)
    fully_shard(model, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16))
    opt = pytorch_optimizer.Muon([{"params": list(model.parameters()), "use_muon": True}], lr=0.02, ns_method="gram_newton_schulz")
    gathered, full = [], DTensor.full_tensor

    def spy(self, *a, **k):
        gathered.append(str(self.dtype))
        return full(self, *a, **k)
    DTensor.full_tensor = spy
    model(torch.randn(4, 16)).float().sum().backward()
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
    print(f"rank 0 gathered {len(gathers)} whole tensors in one step of one 8x16 matrix (gram_newton_schulz): {gathers} (reduce dtype bf16)")
    sys.exit(1 if any(g == "torch.float32" for g in gathers) else 0)
