"""DeepSpeed 0.19.6: minimal case deepspeed-0.19.6-s1-c1 found by `muoncheck sweep --impl deepspeed`.

shrunk from case 1 of `muoncheck sweep --impl deepspeed=0.19.6 --seed 1` (generated (focus general, overflow none))

Standalone: torch, numpy and deepspeed only. Trains the case with the DeepSpeed config
below and compares each step's fp32 master weights with the exact (float128) trajectory;
the band is the error eight valid rounding sequences make, times alpha, plus a floor.
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 deepspeed-0.19.6-s1-c1_repro.py
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

CASE = "deepspeed-0.19.6-s1-c1"
CONFIG = json.loads(r'''{"gradient_accumulation_steps":4,"gradient_clipping":0.01,"optimizer":{"params":{"adam_lr":0.0003,"betas":[0.9,0.95],"eps":1e-08,"lr":0.02,"momentum":0.95,"ns_method":"standard","torch_adam":true,"weight_decay":0.1},"type":"Muon"},"steps_per_print":1073741824,"train_batch_size":8,"train_micro_batch_size_per_gpu":2,"zero_optimization":{"allgather_bucket_size":500000000,"contiguous_gradients":true,"overlap_comm":false,"reduce_bucket_size":58,"reduce_scatter":false,"stage":2}}''')
HEAD_CONFIG = None
SEED, STEPS, GAS, MICRO_BATCH, DP = 7702, 3, 4, 2, 1
STAGE, ZERO_INIT, PARAM_DTYPE = 2, False, "fp32"
EXPECT_ERROR = False
PARAM_SHAPES = [
    ("l0.self_attn.q_proj.weight", [3, 1]),
    ("l1.mlp.up_proj.weight", [4, 21]),
    ("l2.conv.weight", [4, 3, 1]),
]
INJECTIONS = [
]
# fp32 master weight after each step: the exact trajectory (muoncheck's float128 oracle)
EXPECTED = {
    "l0.self_attn.q_proj.weight": [[0.31110816477847092, -0.12325340667388689, 0.67925982758044767], [0.30682339689948324, -0.11637126225475268, 0.66425671809680564], [0.29884052297743441, -0.11574175864918898, 0.63995308860768119]],
    "l1.mlp.up_proj.weight": [[0.061609734657576083, -0.0617463387496286, -0.064684501597517971, 0.039351836164662486, -0.029945517348734917, 0.10793089936754581, 0.03183743590462812, 0.11794322195463938, 0.092274664800151923, 0.0095685274594461047, -0.049352336788910448, -0.071703508399458771, 0.016140824648106886, -0.11488430981868056, -0.040421183128221259, -0.06808829100151409, -0.0076507547361741313, -0.08713498685736755, -0.045087572115277155, -0.093779278264370602, 0.013998795147289442, -0.096029561250364576, 0.093608362594400293, -0.01539669296923782, 0.038337885475351358, -0.11914165526359762, 0.1165036028267767, 0.040800897777863866, 0.032870751408770209, -0.0071273923665018, 0.10868037741771239, 0.10929427570733864, -0.10269546740793604, -0.12362257321397969, 0.11666771292472612, -0.11623202834227468, 0.1014712757103567, 0.022638935643079033, 0.039952512164112948, -0.08715749204296723, 0.10747931244307371, -0.069335687825938089, 0.086230907396004031, 0.049061441982159282, -0.055907189291594397, 0.060747155087932901, 0.11675288491426859, -0.0011324805124245827, 0.030728217998364733, 0.094014175178781384, -0.05387843379969786, -0.054499887563358697, -0.09113287204935637, 0.0089920111833031151, -0.068803734057632529, 0.046372682412536274, 0.094951830438020732, 0.1148327077962276, 0.10796451633000148, -0.0071264595912701543, 0.062625117554146972, -0.025892490145352366, -0.093400199254328131, 0.076782342561259431, 0.12361130383088226, 0.029129991662501745, -0.080534288246969649, -0.10125070509013764, 0.063178316294950715, -0.068694197642112279, 0.020768425318167777, -9.9534951988629339e-05, 0.085897041362824028, 0.031849593246602255, 0.070578561973013806, 0.064703046047213081, -0.077628588051971176, 0.070562389472275805, 0.024269750840795995, 0.030347727199389066, 0.07724570186569317, 0.12450781640055156, -0.0097903306037009866, 0.10575718199562123], [0.062217518814661421, -0.061287504533384794, -0.068390278740819127, 0.044644773558256967, -0.030836425180539272, 0.10466010923835085, 0.033410723247375353, 0.11607562439875561, 0.090600787141570882, 0.014029283182821565, -0.054271160485530712, -0.070345692234238325, 0.017985075267412168, -0.11126535317682679, -0.042417640350795392, -0.062598932008795419, -0.004501132061916679, -0.090813714860820571, -0.044233345836496907, -0.092985415648774605, 0.012472655525169392, -0.095236640095416714, 0.09058804694238036, -0.010780440194495386, 0.040583567710529123, -0.11900009365472708, 0.11788745355851399, 0.043764751061108283, 0.028540818870268689, -0.0032634579088326125, 0.10729215798308199, 0.10888180633657717, -0.10064758993585927, -0.1194308912522274, 0.11628207796810834, -0.11067114514270862, 0.098993085110453294, 0.027325431675278046, 0.040048223391309479, -0.085631272369168829, 0.10088061897005834, -0.072953446186420412, 0.085082479377737774, 0.051033273443009008, -0.056252119334092389, 0.056223962800219275, 0.11904968815784864, -0.0036703234036217346, 0.027469233954780934, 0.094323689546275569, -0.053995983657348819, -0.051659579435270088, -0.088862970324258148, 0.011790655499409868, -0.068834857345055497, 0.045290628700905902, 0.094959213688406582, 0.10776518283570845, 0.10679088059418218, -0.0079479741446349117, 0.063067702888850385, -0.028255387126682425, -0.096167782310458486, 0.070780510198155205, 0.11861902661327985, 0.024452744280498852, -0.084605039673301366, -0.098480775171906634, 0.060925831156194488, -0.06730183196233476, 0.014028075119802936, -0.0047553520888795331, 0.088647241301299792, 0.034670022060328438, 0.069211626290895875, 0.067059550987400837, -0.078435328302490767, 0.068981672808394887, 0.024134662057967476, 0.032135188150368053, 0.078861640400418265, 0.12403785217502251, -0.010048805173209087, 0.10483263738514019], [0.064725876274878219, -0.061261484643434873, -0.076569937018508949, 0.042486801440057634, -0.025803269173452006, 0.098508543484779179, 0.038682392003507038, 0.1172895447935787, 0.091490903740356594, 0.017474791257718333, -0.058255346023568695, -0.068576038510912221, 0.028297894707140038, -0.10434150111970883, -0.043646092412550207, -0.061395725440630725, 0.0035050601204138694, -0.096184507911666536, -0.039167440370998334, -0.092370221115018941, 0.0094315508884719387, -0.092661482665498951, 0.091244340844724672, -0.0078921679259033942, 0.040589457657059284, -0.12033113969899664, 0.11507440731924352, 0.047293482062102744, 0.021024495252349146, -0.0019974343841132908, 0.10399161806748883, 0.098664799268345066, -0.095364015889116624, -0.11810964642243431, 0.11788484109215196, -0.10453959404247255, 0.094803167959611412, 0.028295868546379693, 0.04405441761549464, -0.082784079413269554, 0.098975281083427957, -0.072546110437733055, 0.085118679336203207, 0.055789866324632009, -0.058388138457381583, 0.054184004801315515, 0.12630585153578969, -0.0085355721198094783, 0.02433077377435007, 0.095266758360178352, -0.056210377362784114, -0.042959370510603577, -0.087317494758558031, 0.014955968202362507, -0.073494783800465174, 0.042752284707833946, 0.086296197318684625, 0.10595409209301408, 0.10202783060470763, -0.0084425085505983703, 0.06880053602564927, -0.032197343074009517, -0.098581792777340874, 0.063991593687868289, 0.10765032876363678, 0.02492420601074494, -0.083079530100176685, -0.097566975566934611, 0.058143981355712353, -0.059691911020399807, 0.011632906597797622, 0.0018567997187727953, 0.088987555970125892, 0.043562619203350202, 0.070099532298030467, 0.070540645825298703, -0.083484870943978884, 0.06916999941108283, 0.025236733658280643, 0.032430731075702948, 0.083116709910085629, 0.12336866308179295, -0.011762433409361905, 0.097785881286526544]],
    "l2.conv.weight": [[0.063984454518764555, -0.46303136016384516, 0.028049643482739504, -0.27865167620930764, 0.34885983662470321, -0.3691648027834552, -0.095619166853949097, -0.033448548456200232, -0.3075563193317582, 0.24462438795240343, 0.18924277230607842, 0.15825908572775926], [0.059176596492018015, -0.45009118904302886, 0.028987758842093803, -0.27765957561993265, 0.3513013542111692, -0.35301091572455606, -0.087702452874648174, -0.030780731221011954, -0.31105446112693341, 0.23419838031634882, 0.18081644658988394, 0.1613900648868595], [0.042298251790259506, -0.4338627112051977, 0.033059273276272616, -0.27181277736518777, 0.35014687752918611, -0.33778109903805553, -0.083605591723028311, -0.017882890453322735, -0.32155095363590319, 0.21950815526589598, 0.1746898831287472, 0.15812813058646658]],
}
# the relative error allowed per step (alpha x the worst of 8 valid rounding sequences + floor)
BAND = {
    "l0.self_attn.q_proj.weight": [0.00094306099592162329, 0.002861882071738096, 0.0048153204165510078],
    "l1.mlp.up_proj.weight": [0.0037240112708144661, 0.0087919289378919352, 0.018313787831160354],
    "l2.conv.weight": [0.0024302049617635465, 0.0087331882570781897, 0.01424766932546785],
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
