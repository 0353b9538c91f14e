"""DeepSpeed 0.19.8: minimal case deepspeed-0.19.8-s1-c136 found by `muoncheck sweep --impl deepspeed`.

shrunk from case 136 of `muoncheck sweep --impl deepspeed=0.19.8 --seed 1` (generated (focus general, overflow none))

Standalone: torch, numpy and deepspeed only. Trains the case with the DeepSpeed config
below and compares each step's fp32 master weights with the exact (float128) trajectory;
the band is the error eight valid rounding sequences make, times alpha, plus a floor.
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 deepspeed-0.19.8-s1-c136_repro.py
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

CASE = "deepspeed-0.19.8-s1-c136"
CONFIG = json.loads(r'''{"gradient_accumulation_steps":2,"gradient_clipping":0.0,"optimizer":{"params":{"adam_lr":0.0003,"betas":[0.9,0.95],"eps":1e-10,"lr":0.1,"momentum":0.0,"ns_method":"gram","torch_adam":true,"weight_decay":0.0},"type":"Muon"},"steps_per_print":1073741824,"train_batch_size":2,"train_micro_batch_size_per_gpu":1,"zero_optimization":{"allgather_bucket_size":130,"contiguous_gradients":true,"overlap_comm":false,"reduce_bucket_size":148,"reduce_scatter":false,"stage":2}}''')
HEAD_CONFIG = None
SEED, STEPS, GAS, MICRO_BATCH, DP = 6749, 2, 2, 1, 1
STAGE, ZERO_INIT, PARAM_DTYPE = 2, False, "fp32"
EXPECT_ERROR = True
PARAM_SHAPES = [
    ("l0.embed_tokens.weight", [1, 1]),
    ("l1.conv.weight", [1, 1, 1]),
    ("l2.mlp.up_proj.weight", [12, 6]),
    ("l3.conv.weight", [7, 4, 1, 1]),
]
INJECTIONS = [
]
# fp32 master weight after each step: the exact trajectory (muoncheck's float128 oracle)
EXPECTED = {
    "l0.embed_tokens.weight": [[-0.50007499999996308], [-0.50009365195658151]],
    "l1.conv.weight": [[-0.42008882298871097], [-0.45491089871715729]],
    "l2.mlp.up_proj.weight": [[0.1787548476061068, 0.11610751773812028, -0.16987551523935496, -0.12171129999091716, -0.17320366493382142, 0.2051507845509008, 0.074915718868953263, -0.19873546214766497, 0.061393472670188687, -0.14138175256353805, -0.062628586591842311, 0.24874601388723472, -0.0026243950320635956, -0.14883431167763633, 0.011965317228418869, -0.082048676550764116, 0.23803382533533976, -0.068422903809018984, 0.054596213855757532, -0.25944092564705135, -0.21689411040180787, -0.05707334829279035, 0.1999627713116775, -0.014041466015604534, -0.10062737628212234, -0.1357039189363182, 0.04898334245470741, -0.08762764492399229, -0.0035578709124997193, 0.22055424798217368, 0.065802956822671996, -0.18756565481483675, 0.15293337910017238, 0.024176811153423707, -0.090231388729228437, 0.074967016884157134, -0.047288683409181194, -0.025994955013415092, -0.081643875008465178, -0.21937324616179732, 0.17294683086014778, 0.025086151853657739, -0.0024688605194031115, -0.029952529285782282, -0.15560410818181877, -0.0072776571102493807, -0.087402945032581864, 0.11107188779218954, -0.043832533734909633, -0.049071881472260527, 0.15588457625036975, 0.1632930851293404, -0.0059680257493719101, 0.10804925416397057, 0.076895674190939831, 0.045166565923255589, -0.044858158946945517, -0.13620522948115618, 0.21358431403596037, 0.035108678718554671, 0.09429962921223424, 0.092263903075909745, -0.014906772910484931, -0.064734952550803734, 0.25229845777329596, -0.061345291665803041, 0.12215787707528389, -0.19873185016469408, 0.17053089079039804, 0.11033349209900234, -0.048556848205640712, 0.20136705538842231], [0.17900166467166584, 0.12386447407591998, -0.17629922814318297, -0.12116808680671085, -0.16816385271693549, 0.18405276827432701, 0.064713111517256533, -0.21309287693029427, 0.039782086257446191, -0.15426484948537558, -0.060383713024760109, 0.24028587054777248, 0.0057496632068982489, -0.12784757584444381, 0.021076077581232203, -0.071186957577242096, 0.24251801206189244, -0.08793623541450854, 0.064633124739112341, -0.23311729951544591, -0.20707062873865581, -0.044018249837089012, 0.20614143260317241, -0.040791950587615478, -0.096890862707128114, -0.12217313666727148, 0.049142499491518769, -0.082650932058560361, 0.0013074320271642553, 0.19986875263676124, 0.061812255929976655, -0.19271515445779183, 0.14404300069680251, 0.01915222257660891, -0.089032712423684324, 0.070317161505763143, -0.045968139464187131, -0.028888020219788667, -0.074392256566572848, -0.21785424151653499, 0.16938970259608552, 0.039841366053827827, -0.0023400503649430374, -0.03638937237891994, -0.14912678287604572, -0.0073218210811617172, -0.091981236717535345, 0.13020576118795318, -0.043889524609258782, -0.054389943816843353, 0.16067435356784093, 0.16305743805295916, -0.0095565169479829865, 0.12306085289219409, 0.086340461807302635, 0.064646962303923125, -0.030654573122574209, -0.12408563218681816, 0.21576140125323848, 0.025145878753904165, 0.09020230806091771, 0.087886775745579057, -0.02488775749595051, -0.069865347933043595, 0.25415475160088202, -0.068735491203770441, 0.12945621846473318, -0.18366141770580682, 0.18149040888642318, 0.11969929668173389, -0.04686270629012676, 0.19361897634268677]],
    "l3.conv.weight": [[0.21526669909236315, -0.4892834470471385, -0.2239153232930311, -0.23561520972847091, -0.44187899711494488, 0.16088926117909899, -0.43561355962024995, 0.052622360051845611, 0.27568505381280284, 0.39553814202058923, -0.29434677610971177, -0.39751103122003495, 0.37651280464962106, 0.22141377685747762, -0.41094940523347312, -0.064557453336849827, -0.39830666816882254, -0.037764446686522152, -0.19272543731140043, -0.3282695141431457, 0.38065848530329088, 0.18053600576024179, 0.46723186179196835, -0.017243674420433557, -0.069281716385451581, -0.49789326865456418, -0.086010844671688097, 0.45996290664711292], [0.22221806303037789, -0.48307709304594354, -0.24714297432751775, -0.23287684161795094, -0.44306110417461281, 0.14981003727521197, -0.41098949972898113, 0.039313684719741296, 0.2966590140201455, 0.39078531904337288, -0.31600501903021705, -0.41933105581510038, 0.3864805602976637, 0.21293393037781774, -0.40841135534123862, -0.082898073374946021, -0.39317435312182758, -0.038431161776274002, -0.19904881000927974, -0.33297297913713647, 0.37239409382788052, 0.19068992467722287, 0.45868599123881038, 0.0019643277985062343, -0.070151733469161343, -0.50221564881121095, -0.075790909973039597, 0.45507736988419167]],
}
# the relative error allowed per step (alpha x the worst of 8 valid rounding sequences + floor)
BAND = {
    "l0.embed_tokens.weight": [8.1476894155542714e-07, 8.4912747001459243e-07],
    "l1.conv.weight": [0.0020549394267312467, 0.0023942534105834677],
    "l2.mlp.up_proj.weight": [0.022664924302066628, 0.040566277509760031],
    "l3.conv.weight": [0.0095690096801327139, 0.030340020818555049],
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
