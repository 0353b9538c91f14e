"""The NS counter: it fails loudly when a plugin's ns_functions wrap nothing, attributes a call
an optimizer defers past its parameter loop to the parameter whose update it is, and gives a call no
frame ties to a param to a Muon param before an Adam param of the same shape."""
import sys
import types

import pytest
import torch

from adapters.common.ns_counter import NsCounter
from adapters.plugin import PluginError


def test_a_counter_that_wraps_nothing_fails_loudly():
    counter = NsCounter([("w", torch.nn.Parameter(torch.zeros(2, 3)))])
    with pytest.raises(PluginError, match="ns_functions: none of them exists"):
        counter.install_functions([("torch.optim._muon", "no_such_function"), ("no_such_module", "ns")], "plugin 'x'")
    counter.install_functions([("torch.optim._muon", "_zeropower_via_newtonschulz")], "plugin 'x'")   # the control
    counter.uninstall()


def _module():
    m = types.ModuleType("deferring_muon")
    m.ns = lambda G: G
    sys.modules[m.__name__] = m
    return m


def _deferred_step(module, params):
    """Collects every update first, orthogonalizes after its loop (the `p` left in this frame is the
    last parameter, whatever the call)."""
    updates = []
    for p in params:
        updates.append(p.detach().clone())
    for u in updates:
        module.ns(u)


@pytest.mark.parametrize("shapes", [[(2, 3), (4, 5)], [(2, 3), (2, 3), (4, 5)]])
def test_deferred_calls_go_to_the_parameter_whose_update_they_are(shapes):
    params = [torch.nn.Parameter(torch.zeros(*s)) for s in shapes]
    counter = NsCounter([(f"p{i}", p) for i, p in enumerate(params)])
    module = _module()
    counter.install(module, ("ns",))
    try:
        _deferred_step(module, params)
    finally:
        counter.uninstall()
    assert counter.unattributed == 0
    assert [counter.calls.get(i, 0) for i in range(len(params))] == [1] * len(params)


def test_a_call_no_frame_names_goes_to_the_muon_param_of_its_shape_not_to_an_adam_one():
    """As at DeepSpeed's stage 0 with bf16 params: the optimizer steps fp32 copies, so the frame's
    `p` is no param of the model, and the Adam-stepped param of the same shape comes first."""
    params = [torch.nn.Parameter(torch.zeros(2, 2)), torch.nn.Parameter(torch.zeros(2, 2))]   # Adam, Muon
    module = _module()
    counter = NsCounter([("lm_head", params[0]), ("q_proj", params[1])], muon=[1])
    counter.install(module, ["ns"])
    try:
        master = params[1].detach().float().clone()   # the fp32 copy the optimizer steps

        def step(p=master):
            module.ns(p)
        step()
    finally:
        counter.uninstall()
    assert counter.calls == {1: 1}, counter.calls
