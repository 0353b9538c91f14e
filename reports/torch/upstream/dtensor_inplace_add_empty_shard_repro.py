"""torch.optim.Muon raises on a one-row matrix sharded over two ranks (FSDP2 / DTensor), torch 2.15.

    python3 reports/torch/upstream/dtensor_inplace_add_empty_shard_repro.py    # exit 1 while the defect is there
    (it starts itself on two ranks with torchrun --standalone; CPU, gloo, no GPU needed)

Found by `muoncheck sweep --impl torch --dp 2` (FSDP2 `fully_shard`, a llama preset with hidden
size 1: its norm-free 1 x N projections are Muon matrices). Isolated to one DTensor op: an in-place
`add_` into a `Shard(0)` DTensor whose dim 0 is smaller than the mesh (1 row over 2 ranks: rank 1
holds an empty shard) of a `Replicate()` operand raises

    RuntimeError: aten.add_.Tensor: in-place operations that require placement changes are not
    supported. The input has placement (Shard(dim=0),), but no valid strategy preserves this placement.

torch.optim.Muon hits it at its last line, `param.add_(update, alpha=-adjusted_lr)` (torch/optim/_muon.py,
`_single_tensor_muon`): the NS result of a one-row matrix comes back `Replicate()`. In 2.15's
single-dim strategy expansion (torch/distributed/tensor/_ops/utils.py, `expand_to_full_mesh_op_strategy`)
the only strategy that keeps `self` at `Shard(0)` needs the other operand redistributed to `Shard(0)`,
and `is_tensor_shardable` rejects that for a dim of size 1 over 2 ranks (uneven sharding is allowed
only for an input already placed so); every remaining strategy replicates `self`, which an in-place
op may not do. torch 2.11 runs both steps (the in-place filtering came with pytorch/pytorch PRs
#172477 and #173572, "single dim fix inplace op expansion", "single-dim expander raises clear
inplace error"). Rows >= the mesh size, or an operand already `Shard(0)`, work. No upstream thread
found for this case.
"""
import os
import subprocess
import sys

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor


def attempt(what, fn):
    try:
        fn()
        return True
    except RuntimeError as e:
        if dist.get_rank() == 0:
            print(f"  {what}: RuntimeError: {str(e).splitlines()[0][:150]}")
        return False


def main():
    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    say = print if dist.get_rank() == 0 else (lambda *a: None)
    say(f"torch {torch.__version__}, {dist.get_world_size()} ranks (gloo)")

    # 1. the op alone: a 1x4 Shard(0) DTensor, add_ of a Replicate() 1x4 operand
    p = distribute_tensor(torch.zeros(1, 4), mesh, [Shard(0)])
    u = distribute_tensor(torch.ones(1, 4), mesh, [Replicate()])
    op_ok = attempt("Shard(0)[1x4].add_(Replicate()[1x4])", lambda: p.add_(u, alpha=-0.5))

    # 2. what a user sees: torch.optim.Muon stepping a 1x4 parameter sharded like FSDP2 shards it
    torch.manual_seed(0)
    w = torch.nn.Parameter(distribute_tensor(torch.randn(1, 4), mesh, [Shard(0)]))
    w.grad = distribute_tensor(torch.randn(1, 4), mesh, [Shard(0)])
    opt = torch.optim.Muon([w], lr=0.02)
    muon_ok = attempt("torch.optim.Muon.step() on a Shard(0) 1x4 parameter", opt.step)

    ok = op_ok and muon_ok
    say("OK: both run" if ok else "DEFECT: an in-place update of a Shard(0) tensor with fewer rows than ranks raises")
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    if "RANK" not in os.environ:   # started plainly: run this file on two ranks, rank 0's status is ours
        sys.exit(subprocess.call([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                                  os.path.abspath(__file__)], stderr=subprocess.DEVNULL))
    sys.exit(main())
