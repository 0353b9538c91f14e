"""What the two adapters call a recorded reduction: inside backward every reduction is a gradient
reduction, whatever its size (a model of one 1×1 weight reduces a one-element bucket there; size
alone made it a `scalar` and comm-dtype-respected FAILed a conforming DeepSpeed run, sweep case
cpu-seed2-deepspeed-0.19.6-s2-c64); in the optimizer step a one-element reduction is a `scalar`."""
import os
import sys

import torch

from adapters.common import optimizer_trace as torch_trace

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "adapters", "deepspeed"))
import trace_v2 as deepspeed_trace  # noqa: E402  (the DeepSpeed adapter's modules import each other flat)


class _NoNs:
    inside = 0


def test_torch_adapter_one_element_reduction_in_backward_is_a_gradient_reduction():
    where = ["train"]
    purpose = torch_trace.classify(_NoNs(), lambda: where[0])
    assert purpose("all_reduce", 1) == "grad_reduce"
    assert purpose("all_gather", 1) == "param_gather"
    where[0] = "step"
    assert purpose("all_reduce", 1) == "scalar"
    assert purpose("all_reduce", 64) == "grad_reduce"


def test_deepspeed_adapter_one_element_reduction_in_backward_is_a_gradient_reduction():
    r = deepspeed_trace.CollectiveRecorder()
    one = torch.zeros(1, dtype=torch.bfloat16)
    r.in_backward = True
    r._record("all_reduce", (one,), {})
    r.in_backward, r.in_step, r.phase = False, True, "boundary"
    r._record("all_reduce", (one.float(),), {})
    r._record("all_reduce", (torch.zeros(8),), {})
    assert [(c["purpose"], c["dtype"]) for c in r.log] == [("grad_reduce", "bf16"), ("scalar", "fp32"),
                                                           ("grad_reduce", "fp32")]
