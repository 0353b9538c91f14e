"""DeepSpeed 0.19.8: minimal case deepspeed-0.19.8-s1-c13 found by `muoncheck sweep --impl deepspeed`.

shrunk from case 13 of `muoncheck sweep --impl deepspeed=0.19.8 --seed 1` (generated (focus general, overflow none))

Standalone: torch, numpy and deepspeed only. Trains the case with the DeepSpeed config
below and compares each step's fp32 master weights with the exact (float128) trajectory;
the band is the error eight valid rounding sequences make, times alpha, plus a floor.
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 deepspeed-0.19.8-s1-c13_repro.py
Exit status 1 while the defect shows, 0 once it is gone.
"""
import json
import os
import sys
import types

os.environ.setdefault("TORCH_COMPILE_DISABLE", "1")
for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                   ("MASTER_PORT", "29541")):   # torchrun sets these; plain python3 runs one process
    os.environ.setdefault(key, value)
import numpy as np  # noqa: E402
import torch  # noqa: E402

CASE = "deepspeed-0.19.8-s1-c13"
CONFIG = json.loads(r'''{"gradient_accumulation_steps":2,"gradient_clipping":0.0,"optimizer":{"params":{"adam_lr":0.0003,"betas":[0.9,0.95],"eps":1e-10,"lr":0.05,"momentum":0.9,"ns_method":"gram","torch_adam":true,"weight_decay":0.0},"type":"Muon"},"steps_per_print":1073741824,"train_batch_size":2,"train_micro_batch_size_per_gpu":1,"zero_optimization":{"contiguous_gradients":true,"overlap_comm":false,"reduce_bucket_size":192,"reduce_scatter":false,"stage":3,"stage3_param_persistence_threshold":0,"stage3_prefetch_bucket_size":76}}''')
HEAD_CONFIG = None
SEED, STEPS, GAS, MICRO_BATCH, DP = 4067, 2, 2, 1, 1
STAGE, ZERO_INIT, PARAM_DTYPE = 3, False, "fp32"
EXPECT_ERROR = False
PARAM_SHAPES = [
    ("l0.embed_tokens.weight", [16, 8]),
    ("l1.mlp.down_proj.weight", [7, 6]),
    ("l2.conv.weight", [1, 2, 2]),
]
INJECTIONS = [
]
# fp32 master weight after each step: the exact trajectory (muoncheck's float128 oracle)
EXPECTED = {
    "l0.embed_tokens.weight": [[0.12509999998769278, 0.015724999998205723, -0.062400000000308771, -0.12490000000647269, -0.18759999999947075, -0.015724999999327319, 0.24990000000024859, -0.17197499999246713, 0.062599999998228753, 0.09365000000040373, 0.23427500000029017, -0.093849999999291306, 0.12509999999965316, 0.093849999999449735, -0.24990000000024554, -0.1250999999893869, 0.14072499999879418, -0.062599999999672917, 0.2342750000003721, -0.031349999999458103, -0.12490000000036103, -0.20302500000064189, -0.062400000000327679, 0.17177500000466864, -0.20322499994174581, 0.10947499999418105, 0.093849999997997369, -0.18740000001239451, 0.1405250000030201, -0.17197499999583238, -0.062599999998362618, 0.24990000010280147, 0.093650000003169823, 0.25009999999901394, -0.20302500000241608, -0.24990000000155344, -0.078224999998525627, 0.15615000000324838, 0.23427500000243856, 0.17197499999008908, -0.031349999996292163, -0.21865000000070128, -0.015525000000379039, -0.062400000001300318, 0.046775000000502671, -0.15634999999924951, 0.10927500000031549, 0.18759999992510176, -0.10927500000321058, 0.18740000000116303, 0.23447499999409585, 0.17177500000172349, -0.093650000003194928, 0.1875999999700407, -0.078224999996757652, -0.2500999999915301, -0.093849999980865406, -0.093849999998835948, 0.062400000000242185, -0.031349999996613129, 0.031349999999596388, -0.09365000000052251, -0.12490000000019562, -0.15615000000663656, 0.2499000000006463, -0.18740000000019211, -0.10927500000033591, -0.1405250000003079, 0.1405250000002557, -0.031349999999488003, -0.031349999999685525, -0.23427500000215226, -0.2499000000759837, 0.062400000001853265, -0.093849999999512115, -0.15634999999548416, -0.062400000000779846, -0.17177500000103715, -0.031150000000396017, 0.031349999983512962, 0.1875999999903446, 0.234275000001409, 0.15615000000059673, -0.20322499999721272, 0.12509999999914737, 0.18759999999878327, 0.20322499999950858, 0.2188499999375848, 0.14052500000281723, -0.24990000000096929, -0.14052500005349874, 9.9999998532639253e-05, 0.046775000002052008, 0.0936500000072919, -0.23427500001108431, 9.9999992174806576e-05, 0.17177500000066459, 0.06259999999977954, -0.14052500000134432, -0.20302500000033868, -0.10947499999959612, 0.2499000000011205, -0.12509999999771551, -0.093650000001921169, 0.093849999997237685, 0.23427500000148063, -0.21865000000065749, -0.21884999999817384, -0.17197499999779339, -0.062599999998278769, 0.093650000000501901, -0.25009999999442839, 0.078224999998750211, 0.23427500000038298, 0.031150000000826954, -0.015724999999393186, -0.12490000000054986, -0.093650000001168979, -0.21865000000080848, -0.046974999996013019, -0.1249000000011186, 0.10927500000045011, 0.0938499999993299, 0.078025000000637348, 0.15634999999639665, -0.10947499999733458, 0.093650000000470177, -0.17197499999730442], [0.12495612905023595, 0.015924581621833172, -0.062410208267836394, -0.12503600852884389, -0.18752481455277939, -0.015923977102004785, 0.24975958076053154, -0.17183180474524759, 0.062799860954035364, 0.093490186537073583, 0.23416418480604956, -0.093919312457160245, 0.12517945701418937, 0.09398181175143204, -0.24975842964534647, -0.12526297334093262, 0.14084103723701683, -0.062611079346488463, 0.23416261486876541, -0.031548581242509512, -0.12470431272826504, -0.20283164679928528, -0.062317184890016961, 0.17160341798163181, -0.20307900372626184, 0.10936162869215454, 0.094024478367692135, -0.18724615712162321, 0.14036374158006934, -0.17187248071881428, -0.062669601699925331, 0.24975256425751072, 0.093471375678982505, 0.25008945439219471, -0.20312242384925627, -0.24974160957240038, -0.07827656642217741, 0.15598454999180489, 0.23429017387677961, 0.17212849334085764, -0.031302065125672185, -0.2184507599720196, -0.015353799021779021, -0.062426224645310696, 0.046715746347045471, -0.15628317377584272, 0.10910898081562752, 0.18745426753122005, -0.10941220270646999, 0.18723733822662769, 0.23433345457643243, 0.17159576646679217, -0.093493760546872501, 0.18745431219910647, -0.078272719855560072, -0.249955533368827, -0.094008127570009578, -0.094040671106815965, 0.0622423071397104, -0.031480147857560113, 0.031500087139747932, -0.093600173800340566, -0.12475837856258409, -0.15598572274533795, 0.24970020629302839, -0.18722720322770114, -0.10919982799198732, -0.14047099757992179, 0.14049674094471562, -0.031419411622473081, -0.031510759937924723, -0.23409255225167003, -0.25004116138059024, 0.062204294251178641, -0.094009997132255829, -0.15642547896068917, -0.0622600152399128, -0.17174987270572625, -0.031005262751885716, 0.03150948750400543, 0.18775470453523041, 0.23408244774457573, 0.15614037818334409, -0.20311001212228438, 0.12501660552536301, 0.18766102310371061, 0.20339284569100624, 0.21870419452299461, 0.14053990957359888, -0.24998172114857029, -0.14064902990968609, 0.00028806635053535629, 0.046601677200680751, 0.093496096773141968, -0.23411590163209925, 0.00027252330583238561, 0.17168428834294641, 0.062691841287298725, -0.14036200116012842, -0.20285084809558929, -0.1096644681965309, 0.24970094729638939, -0.12508077955634941, -0.093519395682287079, 0.094018078717713602, 0.23407506504338144, -0.21845026631502623, -0.21876349675311946, -0.17214304589603505, -0.062572017663697174, 0.093531651466918594, -0.25025590032169764, 0.078420669278831706, 0.23424263059768774, 0.031127233853600354, -0.015910177328380366, -0.12472098050257807, -0.093466795467149491, -0.21860444678318253, -0.047141202550276706, -0.12470526543372661, 0.10907952441823356, 0.094047909420702028, 0.078039268260398989, 0.15621739917515887, -0.10966855261615145, 0.093558229051099437, -0.17215006375582215]],
    "l1.mlp.down_proj.weight": [[0.1873543713240485, 0.2481857049300896, -0.2220831226230828, 0.20224698179834608, -0.11067745364055276, 0.15739847659715098, -0.23382565910313358, 0.18704569806647742, 0.031251764308302156, 0.062310618540979322, -0.031146093216875958, -0.14124491208213993, 0.10179823423163514, -0.024612360352712193, 0.18811592757286502, 0.11216536531103817, 0.24881180154455765, 0.008361045878384132, -0.065016684859913659, -0.19757249793817133, -0.16590376038135107, -0.075592008627788698, -0.23256363434774896, -0.10830071467620844, -0.084195659672176459, 0.11244843986443039, -0.034623224620967223, 0.063658725847966099, 0.15381877668311361, -0.039034109340616081, -0.12030918129396997, 0.18404609875892483, 0.063247801448260227, 0.076711957025115796, 0.12616756782764882, -0.23988480406937243, -0.031417491734233784, -0.17699058238308152, 0.17844905197390731, -0.20558801019308595, 0.027756081838618593, -0.18463838708389696], [0.18800499488934913, 0.23207510084720795, -0.2227038443671672, 0.20628432360296078, -0.12489769012072138, 0.17650964205081965, -0.2323936400297274, 0.18404621943228083, 0.031971510799101086, 0.062742077869831395, -0.035970984404212078, -0.13983947569876828, 0.084566319549477881, -0.00050600112450205977, 0.18058964896981439, 0.11186071567552039, 0.25699720806261123, 0.011546501195420026, -0.068802054008916397, -0.19761008822411447, -0.14240114993322187, -0.063178356755902346, -0.22483240215401801, -0.090826623271505966, -0.09745756092156313, 0.11727902301404385, -0.042232419071148095, 0.066429995445063353, 0.15560485342809449, -0.020512300510443983, -0.11014942923170036, 0.17362364502159766, 0.073746688327532062, 0.077986060052091619, 0.14637270540271469, -0.24628284759312624, -0.033229520788319575, -0.18534541868234108, 0.16118020432731453, -0.21040900823700506, 0.046646671831721144, -0.18043367114090575]],
    "l2.conv.weight": [[-0.02460743071961765, 0.21131489785344656, -0.11908786822720213, 0.43689048503282102], [-0.021398629567443525, 0.19638473516019297, -0.10320354438898617, 0.42958304527579855]],
}
# the relative error allowed per step (alpha x the worst of 8 valid rounding sequences + floor)
BAND = {
    "l0.embed_tokens.weight": [5.7914102725483193e-07, 6.5423824717262283e-07],
    "l1.mlp.down_proj.weight": [0.0084302762785123022, 0.012351524088058501],
    "l2.conv.weight": [0.0007480462643368928, 0.0022139290204560517],
}

# ---- the data generator (muoncheck's SPEC generator, verbatim)
"""The SPEC data generator, vectorized in numpy, bit for bit the same as core/datagen.cpp.

mix / splitmix64 / h(w0..w5) on uint64 arrays (numpy wraps uint64 arithmetic mod 2^64),
v = ((h >> 40) mod 33 − 16) / 16. Every value is a dyadic rational, exact in fp16, bf16
and fp32. tests/trace/datagen_match.py checks this file against muoncheck's own dump.
"""
import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
INIT, INPUT, TARGET = 1, 2, 3


def _u64(x):
    return np.asarray(x, dtype=np.uint64)


def mix(z):
    z = _u64(z)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def splitmix64(x):
    with np.errstate(over="ignore"):
        return mix(_u64(x) + _GOLDEN)


def hash6(w0, w1, w2, w3, w4, w5):
    """x = 0; x = splitmix64(x ^ w) for each word; words broadcast against each other."""
    words = np.broadcast_arrays(*[_u64(w) for w in (w0, w1, w2, w3, w4, w5)])
    x = np.zeros(words[0].shape, dtype=np.uint64)
    for w in words:
        x = splitmix64(x ^ w)
    return x


def unit_value(h):
    return ((_u64(h) >> np.uint64(40)) % np.uint64(33)).astype(np.int64).astype(np.float64) / 16.0 - 1.0


def _init_exponent(cols):
    k = 0
    while (1 << (2 * k)) < cols:
        k += 1
    return k


def initial_weight(seed, param):
    """Param p's initial weight in its layer shape (float64, exact)."""
    n = int(np.prod(param.shape))
    v = unit_value(hash6(seed, INIT, param.index, np.arange(n, dtype=np.uint64), 0, 0))
    w = 1.0 + v / 4.0 if len(param.shape) < 2 else np.ldexp(v, -_init_exponent(param.cols))
    return w.reshape(param.shape)


def inputs(seed, param, step, samples):
    """x of each sample: (len(samples), cols)."""
    j = _u64(samples)[:, None]
    e = np.arange(param.cols, dtype=np.uint64)[None, :]
    return unit_value(hash6(seed, INPUT, param.index, step, j, e))


def targets(seed, param, step, samples):
    """y of each sample: (len(samples), rows), or (len(samples), n) for a vector."""
    m = param.cols if len(param.shape) == 1 else param.rows
    j = _u64(samples)[:, None]
    e = np.arange(m, dtype=np.uint64)[None, :]
    return unit_value(hash6(seed, TARGET, param.index, step, j, e))


class P:
    """A parameter as the data generator reads it: index, shape, matrix view (rows, cols)."""
    def __init__(self, index, name, shape):
        self.index, self.name, self.shape = index, name, tuple(shape)
        self.rows = 1 if len(shape) < 2 else shape[0]
        self.cols = shape[0] if len(shape) < 2 else int(np.prod(shape[1:]))


PARAMS = [P(i, name, shape) for i, (name, shape) in enumerate(PARAM_SHAPES)]


class Node(torch.nn.Module):
    """One module of a tree named like the case's params; each owns the loss terms of its params:
    1/(2m)·‖W x − y‖² for a matrix (W viewed as rows × cols), 1/(2n)·‖w ⊙ x − y‖² for a vector."""
    def __init__(self, tree):
        super().__init__()
        self.terms = []
        for name, child in tree["children"].items():
            self.add_module(name, Node(child))
        for local, p in tree["params"]:
            w = torch.from_numpy(initial_weight(SEED, p).astype(np.float32))
            self.register_parameter(local, torch.nn.Parameter(w))
            self.terms.append((local, p))

    def forward(self, batch):
        total = 0
        for local, p in self.terms:
            w = getattr(self, local)
            x, y = batch[p.index]
            if len(p.shape) == 1:
                term = ((w * x - y) ** 2).sum(-1) / (2 * p.cols)
            else:
                term = ((x @ w.reshape(p.rows, -1).t() - y) ** 2).sum(-1) / (2 * p.rows)
            total = total + term.mean()
        for child in self.children():
            total = total + child(batch)
        return total


def tree():
    root = {"children": {}, "params": []}
    for p in PARAMS:
        *path, local = p.name.split(".")
        node = root
        for part in path:
            node = node["children"].setdefault(part, {"children": {}, "params": []})
        node["params"].append((local, p))
    return root


def batch(step, micro_step, rank, device, dtype):
    samples = [(micro_step * DP + rank) * MICRO_BATCH + i for i in range(MICRO_BATCH)]
    return {p.index: (torch.from_numpy(inputs(SEED, p, step, samples)).to(device, dtype),
                      torch.from_numpy(targets(SEED, p, step, samples)).to(device, dtype)) for p in PARAMS}


def relative_error(x, exact):
    exact = np.asarray(exact, dtype=np.float64)
    d = np.linalg.norm(np.asarray(x, dtype=np.float64) - exact)
    return float("inf") if not np.isfinite(d) else float(d / max(np.linalg.norm(exact), 1e-30))


def main():
    import deepspeed
    from deepspeed.utils import safe_get_full_fp32_param
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if torch.cuda.is_available() else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    deepspeed.init_distributed(dist_backend="nccl" if device.type == "cuda" else "gloo")
    rank = torch.distributed.get_rank()
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[PARAM_DTYPE]
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"deepspeed {deepspeed.__version__}, torch {torch.__version__}, {device.type}, dp {DP}; case {CASE}")
    clock = {"step": 0, "micro_step": 0}
    try:
        with deepspeed.zero.Init(config_dict_or_path=CONFIG, enabled=ZERO_INIT):
            model = Node(tree())
        if HEAD_CONFIG:
            model.config = types.SimpleNamespace(**HEAD_CONFIG)   # where DeepSpeed reads head counts
        engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=CONFIG)
        named = dict(engine.module.named_parameters())
        # stage 0 with 16-bit params: the wrapper (FP16_UnfusedOptimizer) steps fp32 copies of them
        opt = engine.optimizer
        masters = {id(lp): hp for lg, hg in zip(getattr(opt, "fp16_groups", None) or [], getattr(opt, "fp32_groups", None) or [])
                   for lp, hp in zip(lg, hg) if torch.is_tensor(hp) and hp.shape == lp.shape}
        for inj in INJECTIONS:
            if inj["rank"] != rank:
                continue
            def hook(grad, inj=inj):
                if (clock["step"], clock["micro_step"]) != (inj["step"], inj["micro_step"]):
                    return grad
                grad = grad.clone()
                grad.view(-1)[inj["index"]] = float(inj["value"])
                return grad
            named[inj["param"]].register_hook(hook)
        worst = 0.0
        say("step  param                                     error vs float128   band      ratio")
        for t in range(STEPS):
            clock["step"] = t
            for k in range(GAS):
                clock["micro_step"] = k
                loss = engine(batch(t, k, rank, device, dtype))
                engine.backward(loss)
                engine.step()
            for p in PARAMS:
                w = named[p.name]
                full = safe_get_full_fp32_param(w) if STAGE > 0 else masters.get(id(w), w)
                observed = full.detach().float().cpu().reshape(-1).numpy()
                err = relative_error(observed, EXPECTED[p.name][t])
                band = BAND[p.name][t]
                worst = max(worst, err / band)
                say(f"{t:4d}  {p.name:40s}  {err:17.3e}  {band:9.3e}  {err / band:8.2f}" + ("   <- outside" if err > band else ""))
    except Exception as e:
        say(f"DeepSpeed raised {type(e).__name__}: {e}")
        say("DEFECT PRESENT" if EXPECT_ERROR else "the run raised (not the defect this script shows)")
        return 1
    if EXPECT_ERROR:
        say("expected: DeepSpeed raises; it did not (no defect)")
        return 0
    say("expected: every ratio at most 1 (the error of 8 valid rounding sequences, x alpha, plus a floor)")
    say(f"worst ratio {worst:.3g}: " + ("DEFECT PRESENT" if worst > 1 else "no defect"))
    return 1 if worst > 1 else 0


if __name__ == "__main__":
    sys.exit(main())
