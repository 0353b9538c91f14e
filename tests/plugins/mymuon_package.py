"""A throwaway third-party Muon package and its muoncheck plugin, written out as a pip-installable
project (the tests install it with `pip install --target`): `mymuon` is a small Muon written here
(EMA momentum with Nesterov, the standard quintic in bf16, whole matrices), `mymuon_plugin` its
plugin through the entry point group muoncheck.implementations. The plugin module is the whole of
what a new implementation costs; test_third_party_plugin.py checks it stays within 60 lines.
`mymuon-broken` plants a defect in the Muon (momentum ignores beta) to show the sweep finds it; the
`bad-*` plugins each break one thing a plugin gives; `mymuon-picky` declines one knob value."""
import os
import textwrap

MUON = '''
import torch


def newton_schulz(grad, coefficients, steps, eps=1e-7):
    a, b, c = coefficients
    x = grad.bfloat16()
    tall = grad.size(0) > grad.size(1)
    if tall:
        x = x.T
    x = x / (x.norm() + eps)
    for _ in range(steps):
        gram = x @ x.T
        x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


class Muon(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum, nesterov, coefficients, steps):
        super().__init__(params, dict(lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=0.0))
        self.coefficients, self.steps = tuple(coefficients), steps

    @torch.no_grad()
    def step(self):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                buf = self.state[p].setdefault("momentum_buffer", torch.zeros_like(p))
                buf.lerp_(p.grad, 1 - BETA(g["momentum"]))
                u = p.grad.lerp(buf, g["momentum"]) if g["nesterov"] else buf
                rows = p.shape[0]
                u = newton_schulz(u.reshape(rows, -1), self.coefficients, self.steps).view(p.shape)
                p.mul_(1 - g["lr"] * g["weight_decay"])
                p.add_(u.to(p.dtype), alpha=-g["lr"] * max(1.0, rows / (p.numel() // rows)) ** 0.5)


def BETA(beta):
    return beta
'''

PLUGIN = '''
"""muoncheck plugin of mymuon: a plain optimizer; muoncheck wraps the model and runs the loop."""
import torch

import mymuon
from adapters.plugin import Decline, Knob, OptimizerPlugin

FIXED = {"optimizer.momentum_form": "ema", "optimizer.ns_method": "standard", "optimizer.ns_dtype": "bf16",
         "optimizer.per_head": False, "optimizer.scale_rule": "deepspeed", "optimizer.clip.mode": "raw_grad",
         "loss_scaler.type": "none", "overflow": [], "checkpoint": None, "engine.offload_optimizer": None,
         "engine.compile": None, "engine.zero_init": None, "engine.stage": 0,
         "engine.grad_accum_dtype": "fp32", "engine.comm_dtype": "fp32", "engine.param_dtype": "fp32"}


class Plugin(OptimizerPlugin):
    name, title = "mymuon", "My Muon"
    ns_functions = [("mymuon", "newton_schulz")]
    knobs = [Knob("nesterov", [True, False], fields={v: {"optimizer.nesterov": v} for v in (True, False)}),
             Knob("momentum", [0.95, 0.9, 0.5], fields={m: {"optimizer.momentum": m} for m in (0.95, 0.9, 0.5)}),
             Knob("mymuon", ["fixed"], fields={"fixed": FIXED})]

    def version(self):
        return "0.1"

    def declines(self, s, config):
        if s.ns_coefficients is None:
            return Decline("mymuon", "optimizer.ns_coefficients: mymuon takes one (a, b, c) triple")
        return None

    def optimizer(self, muon_groups, adam_groups, s):
        out = []
        if muon_groups:
            out.append(mymuon.Muon(muon_groups, lr=s.lr, momentum=s.momentum, nesterov=s.nesterov,
                                   coefficients=s.ns_coefficients, steps=s.ns_steps))
        if adam_groups:
            out.append(torch.optim.AdamW(adam_groups, lr=s.adam["lr"], betas=tuple(s.adam["betas"]),
                                         eps=s.adam["eps"], weight_decay=s.weight_decay))
        return out
'''

# Plugins with bad input, each the good plugin with one thing broken (the case must be an ERROR
# with its message, never a hang or crash of muoncheck).
BAD = {
    "bad-raise": ("def optimizer(self, muon_groups, adam_groups, s):\n        out = []",
                  "def optimizer(self, muon_groups, adam_groups, s):\n        raise ValueError('planted: optimizer() raises')"),
    "bad-hang": ("def optimizer(self, muon_groups, adam_groups, s):\n        out = []",
                 "def optimizer(self, muon_groups, adam_groups, s):\n        import time\n        time.sleep(3600)"),
    "bad-notrace": ("def optimizer(self, muon_groups, adam_groups, s):\n        out = []",
                    "def optimizer(self, muon_groups, adam_groups, s):\n        import os\n        os._exit(3)"),
    "bad-space": ('Knob("momentum", [0.95, 0.9, 0.5]', 'Knob("momentum", []'),
    "bad-ns": ('ns_functions = [("mymuon", "newton_schulz")]', 'ns_functions = [("mymuon", "newton_schultz")]'),
}

# A good plugin that cannot express one knob value: a sweep declines it when drawn and draws again.
PICKY = {
    "mymuon-picky": ("    def declines(self, s, config):\n",
                     "    def declines(self, s, config):\n        if config['momentum'] == 0.5:\n"
                     "            return Decline('momentum', 'optimizer.momentum 0.5: planted decline')\n"),
}

PYPROJECT = """
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "mymuon-plugins"
version = "0.1"

[project.entry-points."muoncheck.implementations"]
{entry_points}

[tool.setuptools]
py-modules = [{modules}]
"""


def module_of(name):
    return name.replace("-", "_") + "_plugin"


def write(folder):
    """The project in `folder`: mymuon.py, mymuon_broken.py (its momentum ignores beta), the plugin
    `mymuon`, `mymuon-broken` (the same plugin on the broken Muon) and the BAD ones, one module each;
    pyproject.toml with their entry points. Returns the good plugin's source."""
    os.makedirs(folder, exist_ok=True)
    muon = textwrap.dedent(MUON).lstrip()
    sources = {"mymuon": muon, "mymuon_broken": muon.replace("    return beta", "    return 1.0")}
    good = textwrap.dedent(PLUGIN).lstrip()
    plugins = {"mymuon": good,
               "mymuon-broken": good.replace("import mymuon\n", "import mymuon_broken as mymuon\n")
                                    .replace('("mymuon", "newton_schulz")', '("mymuon_broken", "newton_schulz")')}
    for name, (old, new) in {**BAD, **PICKY}.items():
        assert old in good, name
        plugins[name] = good.replace(old, new)
    for name, source in plugins.items():
        sources[module_of(name)] = source.replace('name, title = "mymuon"', f'name, title = "{name}"')
    for module, source in sources.items():
        with open(os.path.join(folder, module + ".py"), "w") as f:
            f.write(source)
    entry_points = "\n".join(f'{n} = "{module_of(n)}:Plugin"' for n in plugins)
    modules = ", ".join(f'"{m}"' for m in sources)
    with open(os.path.join(folder, "pyproject.toml"), "w") as f:
        f.write(PYPROJECT.format(entry_points=entry_points, modules=modules).lstrip())
    return sources[module_of("mymuon")]
