"""heavyball 3.2.1: Muon's Newton-Schulz rounds its input to bf16 stochastically, drawing from torch's
global generator: the same gradient gives a different update under another seed, and every optimizer
step advances the caller's random stream.

    python3 reports/heavyball/upstream/ns_input_stochastic_rounding_repro.py     # exit 1 while it is so

Plain torch + heavyball; CPU. The compile wrapper is switched off (heavyball.utils.compile_mode = None).
"""
import sys

import torch
import heavyball.utils as hu

hu.compile_mode = None
torch.manual_seed(0)
G = torch.randn(2, 3, dtype=torch.float32)   # a small, wide Muon update (mlp.down_proj of a 2x3 layer)

outs = []
for seed in (1, 2):
    torch.manual_seed(seed)
    outs.append(hu.zeropower_via_newtonschulz5(G.clone()))
print("update under seed 1:\n", outs[0], "\nunder seed 2:\n", outs[1])
differs = not torch.equal(outs[0], outs[1])

torch.manual_seed(3)
before = torch.get_rng_state()
hu.zeropower_via_newtonschulz5(G.clone())
consumes = not torch.equal(before, torch.get_rng_state())
print(f"same input, two seeds, different updates: {differs}; the NS call advances torch's global generator: {consumes}")
sys.exit(1 if differs or consumes else 0)
