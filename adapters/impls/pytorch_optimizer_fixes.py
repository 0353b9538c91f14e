"""pytorch-optimizer's known defects' fixes (reports/pytorch-optimizer/upstream/), as the registry
adapters/pytorch-optimizer/known_defects.json names them (adapters/common/fixes.py applies them)."""
import torch.distributed as dist


def owner_broadcast(original):
    """DistributedMuon.step gathers each chunk of W (correctly padded) params with one all_gather, which
    needs one shape per chunk: rank j's entry of the chunk is broadcast from rank j instead."""
    def all_gather(tensor_list, tensor, group=None, async_op=False):
        for j, t in enumerate(tensor_list):
            dist.broadcast(t, src=j, group=group)
    return all_gather
