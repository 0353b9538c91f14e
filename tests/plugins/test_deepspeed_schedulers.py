"""The DeepSpeed plugin's config schedulers (adapters/deepspeed/schedulers.py): the rates its own
formulas give every step equal those DeepSpeed's scheduler classes write into a two-group torch
optimizer when driven as the engine drives them (built at iteration −1, stepped once per step);
the mapped scenario says them as a table, an absolute scheduler with one rate for Muon and AdamW;
the cases the semantics cannot say are declined under the knob. The DeepSpeed comparison needs a
DeepSpeed site (importable, $MUONCHECK_DS_SITE, or scripts/deepspeed-site.sh's /tmp folders); it
is skipped without one."""
import json
import os
import subprocess
import sys

import pytest

from adapters import plugins
from adapters.common import scenario as scenario_file
from conftest import ROOT, deepspeed_site
sys.path.insert(0, os.path.join(ROOT, "adapters", "deepspeed"))
import schedulers  # noqa: E402

STEPS = 12
GROUP_LRS = [0.02, 3e-4]   # DeepSpeed Muon's two groups: the Muon rate and the AdamW rate
NAMED = [n for n in schedulers.SCHEDULERS if n != "none"]

# Drives a DeepSpeed scheduler as runtime/engine.py does: _scheduler_from_config builds it on the
# optimizer, _take_model_step steps it (no arguments) after each applied step.
DRIVER = """
import json, os, sys
os.environ.setdefault("DS_ACCELERATOR", "cpu")
import torch
from deepspeed.runtime import lr_schedules
sections, steps, lrs = json.loads(sys.argv[1])
out = {}
for section in sections:
    params = [torch.nn.Parameter(torch.zeros(2)) for _ in lrs]
    opt = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, lrs)])
    sched = getattr(lr_schedules, section["type"])(opt, **section["params"])
    rates = []
    for t in range(steps):
        rates.append([float(g["lr"]) for g in opt.param_groups])
        sched.step()
    try:
        sched.step(epoch=steps + 1)
        takes_epoch = True
    except TypeError:
        takes_epoch = False
    out[section["type"]] = {"rates": rates, "takes_epoch": takes_epoch}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def deepspeed_rates():
    """{scheduler: {rates, takes_epoch}} from DeepSpeed's classes, one process for all of them."""
    site = deepspeed_site()
    if site is None:
        pytest.skip("DeepSpeed is not importable (scripts/deepspeed-site.sh VERSION installs a site)")
    sections = [schedulers.config(name, STEPS, GROUP_LRS[0]) for name in NAMED]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in (site, os.environ.get("PYTHONPATH", "")) if x))
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps([sections, STEPS, GROUP_LRS])], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def expected_rates(name, factors):
    """Per step, per group: R·f(t) for an absolute scheduler (R = the Muon rate), lr₀·f(t) else."""
    if name in schedulers.ABSOLUTE:
        return [[GROUP_LRS[0] * f for _ in GROUP_LRS] for f in factors]
    return [[lr * f for lr in GROUP_LRS] for f in factors]


def close(a, b):
    return all(abs(x - y) <= 1e-12 * max(1.0, abs(y)) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


@pytest.mark.parametrize("name", NAMED)
def test_mapper_rates_equal_deepspeeds_scheduler(deepspeed_rates, name):
    ds = deepspeed_rates[name]
    factors = schedulers.factors(name, STEPS)
    assert len(factors) == STEPS
    assert close(expected_rates(name, factors), ds["rates"]), (name, factors, ds["rates"])
    assert len(set(round(f, 12) for f in factors[:4])) > 1, f"{name}: the rate changes within the first 4 steps"
    # the judge sees a one-step shift: the shifted table differs from what DeepSpeed runs
    shifted = factors[1:] + factors[-1:]
    assert not close(expected_rates(name, shifted), ds["rates"]), name
    # why the plugin drives a config scheduler without lr_kwargs={"epoch": ...}: it takes no `epoch`
    assert ds["takes_epoch"] is False


def base(**optimizer):
    return {"name": "x", "seed": 1, "steps": 4,
            "model": {"params": [{"name": "layers.0.weight", "shape": [8, 16]}, {"name": "norm.weight", "shape": [16]}]},
            "engine": {"stage": 1, "dp": 1, "gas": 1, "micro_batch": 1, "param_dtype": "bf16"},
            "optimizer": dict({"lr": 0.01}, **optimizer)}


@pytest.mark.parametrize("name", NAMED)
def test_mapped_scenario_says_the_table_and_the_absolute_rate(name):
    d = plugins.load("deepspeed")
    out = d.to_scenario({"scheduler": name}, base())
    o = out["optimizer"]
    assert o["lr_schedule"] == {"shape": "table", "factors": schedulers.factors(name, out["steps"])}
    assert out["steps"] >= schedulers.MIN_STEPS.get(name, 4)
    if name in schedulers.ABSOLUTE:
        assert o["lr"] == 0.01 and o["adam"]["lr"] == 0.01   # one absolute rate for Muon and AdamW
    else:
        assert "lr" not in o.get("adam", {})                  # a ratio: the split stands
    engine_knob_config = sys.modules[type(d).__module__].engine_knob_config   # what the engine is given
    s = type("Resolved", (), {"steps": out["steps"], "lr": o["lr"]})()
    assert engine_knob_config(s, {"scheduler": name})["scheduler"] == schedulers.config(name, out["steps"], o["lr"])


@pytest.mark.parametrize("name", NAMED)
def test_a_checkpoint_that_adds_steps_gets_the_table_of_every_step(name):
    """The checkpoint knob raises a 1-step base to 2 steps; the table is the one the scheduler runs
    over those 2 (written for 1 step, its last factor held, step 1 was judged at the wrong rate:
    the 0.19.6 seed-31 sweep's c41, c42 and c205, shrunk to 1-step bases, read as NEW)."""
    d = plugins.load("deepspeed")
    doc = base()
    doc["steps"] = 1
    out = d.to_scenario({"scheduler": name, "checkpoint": "save_load"}, doc)
    assert out["steps"] == max(2, schedulers.MIN_STEPS.get(name, 0))
    assert out["checkpoint"] == {"save_after_step": out["steps"] - 2}
    assert out["optimizer"]["lr_schedule"]["factors"] == schedulers.factors(name, out["steps"])


def resolved(doc, tmp_path):
    path = tmp_path / (doc["name"] + ".json")
    path.write_text(json.dumps(doc))
    return scenario_file.Scenario(scenario_file.resolve(str(path)), str(path))


def test_what_a_config_scheduler_cannot_say_is_declined_under_the_knob(tmp_path):
    d = plugins.load("deepspeed")
    config = {k.name: k.default for k in d.knobs}
    ok = resolved(d.to_scenario({"scheduler": "WarmupLR"}, base()), tmp_path)
    assert sys.modules[type(d).__module__]._scheduler_gap(ok, "WarmupLR") is None   # declines goes on to DeepSpeed's own checks
    dynamic = d.to_scenario({"scheduler": "WarmupLR", "precision": "fp16_dynamic"}, base())
    got = d.declines(resolved(dynamic, tmp_path), dict(config, scheduler="WarmupLR", precision="fp16_dynamic"))
    assert got.knob == "scheduler" and "skipped step" in got.reason
    split = d.to_scenario({"scheduler": "OneCycle"}, base())
    split["optimizer"]["adam"]["lr"] = 3e-4
    got = d.declines(resolved(split, tmp_path), dict(config, scheduler="OneCycle"))
    assert got.knob == "scheduler" and "one absolute rate" in got.reason
    scaled = d.to_scenario({"scheduler": "WarmupCosineLR"}, base(groups=[{"match": "norm", "lr_scale": 0.5}]))
    got = d.declines(resolved(scaled, tmp_path), dict(config, scheduler="WarmupCosineLR"))
    assert got.knob == "scheduler" and "lr_scale" in got.reason


def verify(site, path):
    from conftest import muoncheck
    where = ["--impl-site", site] if site else []
    done = muoncheck("verify", "--impl", "deepspeed", *where, path, "--dp", "1", "--invariant", "trajectory-conforms",
                     timeout=900)
    line = next((x for x in done.stdout.splitlines() if x.strip().startswith("trajectory-conforms")), "")
    return (line.split()[1] if line else None), line or done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.parametrize("name", NAMED)
def test_deepspeed_runs_each_scheduler_as_its_table_says_and_a_shifted_table_fails(name, tmp_path):
    """The judge sees the schedule: the committed scenario of each scheduler conforms in a real
    DeepSpeed run; for WarmupLR, the same scenario with its table shifted by one step does not."""
    site = deepspeed_site()
    if site is None:
        pytest.skip("DeepSpeed is not importable (scripts/deepspeed-site.sh VERSION installs a site)")
    path = os.path.join(ROOT, "scenarios", "deepspeed", f"sched-{name.lower()}-z2-dp1.json")
    doc = json.load(open(path))
    assert doc["implementation_config"] == {"scheduler": name}
    assert doc["optimizer"]["lr_schedule"]["factors"] == schedulers.factors(name, doc["steps"])   # the mapper's table
    status, line = verify(site, path)
    assert status == "PASS", line
    if name != "WarmupLR":
        return
    doc.pop("$schema", None)
    factors = doc["optimizer"]["lr_schedule"]["factors"]
    doc["optimizer"]["lr_schedule"]["factors"] = factors[1:] + factors[-1:]
    doc["name"] = "sched-warmuplr-shifted"
    wrong = tmp_path / "sched-warmuplr-shifted.json"
    wrong.write_text(json.dumps(doc))
    status, line = verify(site, str(wrong))
    assert status == "FAIL", line
