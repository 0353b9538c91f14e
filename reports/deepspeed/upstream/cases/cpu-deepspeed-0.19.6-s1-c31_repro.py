"""DeepSpeed 0.19.6: minimal case deepspeed-0.19.6-s1-c31 found by `muoncheck sweep --impl deepspeed`.

shrunk from case 31 of `muoncheck sweep --impl deepspeed=0.19.6 --seed 1` (generated (focus general, overflow none))

Standalone: torch, numpy and deepspeed only. Trains the case with the DeepSpeed config
below and compares each step's fp32 master weights with the exact (float128) trajectory;
the band is the error eight valid rounding sequences make, times alpha, plus a floor.
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 deepspeed-0.19.6-s1-c31_repro.py
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

CASE = "deepspeed-0.19.6-s1-c31"
CONFIG = json.loads(r'''{"bf16":{"enabled":true},"gradient_accumulation_steps":4,"gradient_clipping":0.0,"optimizer":{"params":{"adam_lr":0.0003,"betas":[0.9,0.95],"eps":1e-10,"lr":0.02,"momentum":0.95,"ns_method":"standard","torch_adam":true,"weight_decay":0.0},"type":"Muon"},"steps_per_print":1073741824,"train_batch_size":4,"train_micro_batch_size_per_gpu":1,"zero_optimization":{"contiguous_gradients":true,"overlap_comm":false,"reduce_bucket_size":104,"reduce_scatter":false,"stage":3,"stage3_param_persistence_threshold":0,"stage3_prefetch_bucket_size":4}}''')
HEAD_CONFIG = None
SEED, STEPS, GAS, MICRO_BATCH, DP = 3682, 2, 4, 1, 1
STAGE, ZERO_INIT, PARAM_DTYPE = 3, False, "bf16"
EXPECT_ERROR = False
PARAM_SHAPES = [
    ("l0.embed_tokens.weight", [2, 40]),
    ("l1.self_attn.o_proj.weight", [23, 3]),
]
INJECTIONS = [
]
# fp32 master weight after each step: the exact trajectory (muoncheck's float128 oracle)
EXPECTED = {
    "l0.embed_tokens.weight": [[-0.047174999999675109, 0.039362499999355857, -0.00029999999954261254, -0.023737499999844966, -0.02313750000037668, 0.023137500000189607, 0.10967499999857581, -0.094049999999693462, 0.062200000000173977, 0.062200000000332642, 0.062799999999849809, 0.11688750000074656, 0.086237499999799849, 0.12470000000044494, -0.015325000000475847, -0.00029999999985666834, -0.030950000000192199, 0.11748749999943532, 0.11688750000506395, -0.085637500000234068, -0.07842499999954787, -0.06279999999867604, 0.11748749999978711, -0.10907500000035031, 0.093450000000807429, -0.093450000000874209, -0.10186249999958326, 0.062200000000304762, -0.094049999999776854, -0.023137500000133978, -0.031549999999252371, -0.023737499999464139, 0.10186249999983277, 0.070012500000169703, -0.070612499999614442, 0.093450000000810426, -0.11688750000107466, 0.039362499999509311, -0.070012500000180916, -0.12470000000016761, 0.094049999999575751, -0.085637500000675507, -0.10126250000046022, 0.039362499999659718, -0.023137500007104173, -0.046575000000173818, -0.077825000000272454, 0.06220000000406635, -0.12470000000017181, 0.00811249999945436, 0.038762500000140324, 0.070612499999692421, -0.039362499999582884, 0.008112499999650101, 0.023137500000474556, 0.05498749999983589, -0.047174999999778332, -0.10907500000081895, -0.077825000000194225, -0.023137500016985571, 0.078424999999719247, -0.031549999997255038, 0.11688750056173609, 0.015325000000211158, -0.031549999999092825, -0.023737499999773062, 0.054987499999822699, 0.062200000001349405, -0.085637500000233527, 0.030950000000298513, -0.10907500000072536, 0.086237499999596207, 0.077825000000428662, -0.11688750000017606, 0.10907500000121083, 0.06220000000528516, -0.1247000000001926, -0.070012500000851852, -0.070612499998590622, 0.1168875000006553], [-0.047366612955168558, 0.039589025442399124, -0.0004009008305080911, -0.023911444594479782, -0.02293373488948779, 0.02292317256516678, 0.10997308322152329, -0.094082417459207549, 0.061935956835987405, 0.062004633752489845, 0.063009344728318137, 0.11670102167822803, 0.086379409344004163, 0.1247402679886392, -0.015026138630102501, -0.00050391554904304439, -0.03069528051725598, 0.11757278670544136, 0.11660786409157053, -0.085452747264205112, -0.078695515399595101, -0.06272039335139043, 0.11776571921496665, -0.10894026384098864, 0.093432404225935947, -0.093412863054469178, -0.10207912367740725, 0.061962083198447711, -0.094294512666675587, -0.022901171306483992, -0.031809634658961562, -0.024036936186822164, 0.10205405179214448, 0.069813898596274473, -0.070711996151892109, 0.093191255302747689, -0.1170019609112587, 0.039658558399188637, -0.069803232149025993, -0.12450719428707213, 0.094145952921024331, -0.085741375361673186, -0.10133589863051423, 0.03946043690517189, -0.02308060687677321, -0.046430737676000221, -0.077570780259388239, 0.061970353615658259, -0.12440238391405146, 0.0081788663963366995, 0.038621007955355613, 0.070890279503697168, -0.039267635867240164, 0.0080733598923278423, 0.022859727152788594, 0.055121484267980671, -0.047468073070298322, -0.10879195236088895, -0.077650995842991344, -0.023335365672034356, 0.07872329257482806, -0.031802034037629906, 0.11666695722576353, 0.015269486538829839, -0.031847393237012238, -0.023706833672885137, 0.055276300537145426, 0.062337340431274847, -0.085356369046678343, 0.030650802033975504, -0.10881028101388866, 0.086534839798514993, 0.077710031140894406, -0.11661495855319513, 0.10881692702709882, 0.061968563984890035, -0.12440440615876892, -0.069902273767632597, -0.070788231188786521, 0.11659199687811685]],
    "l1.self_attn.o_proj.weight": [[-0.15655847056256117, 0.069319463368708006, 0.16346196800761362, -0.20164589008770617, 0.33015091871919716, 0.40437193358345697, -0.4121313125775376, -0.25795887093881525, -0.2259626950615933, -0.26023097359810787, 0.33978968250173658, 0.21259176680529646, 0.14255537659971756, -0.33428781359781207, -0.3468869785059161, 0.3380186582312244, 0.21403403225105713, -0.23320263346927647, -0.38420326639797275, -0.22329510119262491, 0.2000860867521051, 0.46448288274662664, 0.3339510655985683, -0.11251423486779681, 0.47624660415956627, 0.12572486867392907, -0.28334091832385344, -0.40355445737550727, 0.28789240311131342, -0.12500422975148234, -0.42544432062872539, -0.24441387347891974, -0.33278668584641957, -0.31362067915440101, -0.34930286842925368, -0.34841020188866034, 0.4634831679164077, 0.1742655789495656, 0.24836902825869195, 0.47825484190736112, -0.40365393748647671, 0.13264568180115693, -0.14462854723303778, 0.20088554840124967, 0.24537352782086674, 0.24920143122260027, -0.37894847036034784, 0.32391239334234379, -0.50494917082647417, 0.26170260511946419, 0.153190926133045, -0.020195356676107168, -0.45576878609901011, -0.17797499298337588, -0.075448519208460935, 0.39597116660640147, -0.17707763920883537, 0.25832228330345347, 0.33201292793166415, 0.34719592772998048, -0.45557770583452734, -0.017024384212396194, -0.20445335386986188, 0.1438193390328901, 0.16416002030924223, -0.07933285401201691, -0.14128716029217786, -0.30418190775764598, -0.32203626361632759], [-0.15945771564596059, 0.065489673596098918, 0.14476305054931096, -0.19966822191893843, 0.29914160704728676, 0.39653189812560796, -0.40993748012735359, -0.26821604400704613, -0.22996474108858306, -0.26852439465510342, 0.33323317533934194, 0.2046925109340175, 0.13803116771067758, -0.32110928855297172, -0.31407340931867733, 0.33158399855073284, 0.20318997268648442, -0.21408000949614656, -0.3864088397737897, -0.22201343691640679, 0.18307954419877986, 0.45095398331085468, 0.31955473579249805, -0.12756237487113969, 0.45858281503970572, 0.12762548275746868, -0.28326424024371566, -0.38776395073610481, 0.27541954908677335, -0.11548909486833543, -0.42719107112052879, -0.23293814717657552, -0.33567478072839046, -0.30995978362383192, -0.35742222492967235, -0.35828757616902718, 0.45676464199470707, 0.16500479830279535, 0.24992626210296831, 0.484298113427935, -0.39690905960439476, 0.13855226584545371, -0.13616384612169982, 0.17700820252516611, 0.24369585273324379, 0.25522594857502556, -0.3756815070071593, 0.32756564828949608, -0.50144688072590693, 0.25141527633913191, 0.14214299926758289, -0.026768842565374238, -0.45447397973229298, -0.17534774080363236, -0.062092426481763517, 0.3879809148792237, -0.17310606825464617, 0.26075241193851129, 0.31785284075751247, 0.35775326395093171, -0.44313370743053226, -0.032128418597833497, -0.18309250295552482, 0.13271052921861667, 0.15710376102464821, -0.071497164704451055, -0.1391301892405811, -0.2936068312895323, -0.33222145342611464]],
}
# the relative error allowed per step (alpha x the worst of 8 valid rounding sequences + floor)
BAND = {
    "l0.embed_tokens.weight": [0.0017434038331411565, 0.0017500553900824634],
    "l1.self_attn.o_proj.weight": [0.021995575422912798, 0.026304058627661733],
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
