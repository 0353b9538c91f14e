"""The scenario's model as torch modules: a tree of nn.Modules whose parameters carry the scenario's
names and layer shapes, each leaf computing the loss of docs/semantics.md §2 of its own parameters.

`model.layers.0.self_attn.q_proj.weight` is the `weight` of module `model.layers.0.self_attn.q_proj`,
so an implementation that tags by name reads real names, and a wrapper that works per module
(deepspeed.zero.Init, FSDP2's fully_shard) sees real modules. Initial weights come from the
generator of docs/semantics.md §1 with the scenario's seed; the loss of a matrix W (viewed as rows × cols) on a sample is
1/(2m)·‖W x − y‖², of a vector w 1/(2n)·‖w ⊙ x − y‖², each averaged over the micro-batch.
"""
import functools

import numpy as np
import torch

from . import datagen as data
from . import ranks


class Node(torch.nn.Module):
    """One module of the tree; `terms` are the loss terms of the parameters it owns.

    Children and parameters are created inside __init__ (from a name tree), because
    deepspeed.zero.Init partitions a module's own parameters when its __init__ returns:
    a parameter attached afterwards would stay a full tensor and hide the placeholder case.
    """

    def __init__(self, tree=None, seed=0):
        super().__init__()
        self.terms = []   # (local name, param index, rank, rows, cols)
        tree = tree or {"children": {}, "params": []}
        for name, child in tree["children"].items():
            self.add_module(name, Node(child, seed))
        for local, p in tree["params"]:
            init = torch.from_numpy(data.initial_weight(seed, p).astype(np.float32))
            self.register_parameter(local, torch.nn.Parameter(init))
            self.terms.append((local, p.index, len(p.shape), p.rows, p.cols))

    def forward(self, batch):
        total = None
        for local, index, rank, rows, cols in self.terms:
            # The arithmetic is fp32 whatever the model copy's dtype (the muoncheck semantics: the
            # forward/backward reads the weights rounded to param_dtype, and only the micro-step
            # gradient rounds to it, once, where autograd casts it back to the parameter's dtype).
            # A bf16 forward would also round the residual and r/(2m) per sample, which no valid
            # rounding sequence of the control has: after cancellation over samples that is 100x
            # the band. For fp32 params `.float()` is the tensor itself.
            w = getattr(self, local).float()
            x, y = (t.float() for t in batch[index])
            if rank == 1:   # 1/(2n)·‖w ⊙ x − y‖²
                r = w * x - y
                term = (r * r).sum(-1) / (2 * cols)
            else:           # 1/(2m)·‖W x − y‖², W viewed as (rows, cols)
                r = x @ w.reshape(rows, -1).t() - y
                term = (r * r).sum(-1) / (2 * rows)
            term = term.mean()   # mean over this micro-batch
            total = term if total is None else total + term
        return total


def name_tree(params):
    """{"children": {name: subtree}, "params": [(local name, Param)]} from dotted names."""
    root = {"children": {}, "params": []}
    for p in params:
        *path, local = p.name.split(".")
        node = root
        for part in path:
            node = node["children"].setdefault(part, {"children": {}, "params": []})
        node["params"].append((local, p))
    return root


class ScenarioModel(Node):
    def __init__(self, scenario):
        super().__init__(name_tree(scenario.params), scenario.seed)
        owners = []
        for p in scenario.params:
            node = self
            for part in p.name.split(".")[:-1]:
                node = node._modules[part]
            if all(node is not o for o in owners):
                owners.append(node)
        object.__setattr__(self, "_owners", owners)   # a plain list: not registered twice

    def forward(self, batch):
        total = None
        for node in self._owners:
            term = Node.forward(node, batch) if node is self else node(batch)
            total = term if total is None else total + term
        return total


def make_batch(s, step, micro_step, device, dtype):
    samples = tuple(s.global_sample(micro_step, ranks.rank(), i) for i in range(s.micro_batch))
    return {index: (torch.from_numpy(x).to(device=device, dtype=dtype), torch.from_numpy(y).to(device=device, dtype=dtype))
            for index, (x, y) in _batch_values(s.seed, tuple((p.index, tuple(p.shape), p.rows, p.cols) for p in s.params), step, samples).items()}


@functools.lru_cache(maxsize=512)
def _batch_values(seed, params, step, samples):
    """{param index: (x, y)} as float64 arrays: a pure function of its arguments, kept because a case's
    partner runs and its attribution re-runs read the same batches (the generator costs milliseconds
    a batch in numpy's per-call overhead)."""
    out = {}
    for index, shape, rows, cols in params:
        p = _Shape(index, shape, rows, cols)
        # never written: make_batch converts (float64 to the param dtype), which copies
        out[index] = (data.inputs(seed, p, step, list(samples)), data.targets(seed, p, step, list(samples)))
    return out


class _Shape:
    """What the generator reads of a param: its index, layer shape and matrix view."""

    def __init__(self, index, shape, rows, cols):
        self.index, self.shape, self.rows, self.cols = index, shape, rows, cols
