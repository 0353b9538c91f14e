"""DeepSpeed 0.19.6: minimal case deepspeed-0.19.6-s1-c120 found by `muoncheck sweep --impl deepspeed`.

shrunk from case 120 of `muoncheck sweep --impl deepspeed=0.19.6 --seed 1` (generated (focus general, overflow none))

Standalone: torch, numpy and deepspeed only. Trains the case with the DeepSpeed config
below and compares each step's fp32 master weights with the exact (float128) trajectory;
the band is the error eight valid rounding sequences make, times alpha, plus a floor.
    TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node 1 deepspeed-0.19.6-s1-c120_repro.py
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

CASE = "deepspeed-0.19.6-s1-c120"
CONFIG = json.loads(r'''{"gradient_accumulation_steps":8,"gradient_clipping":0.0,"optimizer":{"params":{"adam_lr":0.0003,"betas":[0.9,0.95],"eps":1e-10,"lr":0.02,"momentum":0.95,"ns_method":"gram","torch_adam":true,"weight_decay":0.0},"type":"Muon"},"steps_per_print":1073741824,"train_batch_size":16,"train_micro_batch_size_per_gpu":2,"zero_optimization":{"allgather_bucket_size":8,"contiguous_gradients":true,"overlap_comm":false,"reduce_bucket_size":20,"reduce_scatter":false,"stage":1}}''')
HEAD_CONFIG = None
SEED, STEPS, GAS, MICRO_BATCH, DP = 9498, 3, 8, 2, 1
STAGE, ZERO_INIT, PARAM_DTYPE = 1, False, "fp32"
EXPECT_ERROR = False
PARAM_SHAPES = [
    ("model.embed_tokens.weight", [11, 2]),
    ("model.layers.0.self_attn.q_proj.weight", [2, 2]),
    ("model.layers.0.self_attn.k_proj.weight", [2, 2]),
    ("model.layers.0.self_attn.v_proj.weight", [2, 2]),
    ("model.layers.0.self_attn.o_proj.weight", [2, 2]),
    ("model.layers.0.mlp.gate_proj.weight", [2, 2]),
    ("model.layers.0.mlp.up_proj.weight", [2, 2]),
    ("model.layers.0.mlp.down_proj.weight", [2, 2]),
    ("model.layers.0.input_layernorm.weight", [2]),
    ("model.layers.0.post_attention_layernorm.weight", [2]),
    ("model.norm.weight", [2]),
    ("lm_head.weight", [11, 2]),
]
INJECTIONS = [
]
# fp32 master weight after each step: the exact trajectory (muoncheck's float128 oracle)
EXPECTED = {
    "model.embed_tokens.weight": [[-0.40595000000180337, 0.46845000000118697, -0.40595000000279147, -0.12470000000149017, 0.37470000000236825, 0.31220000000090103, 0.030950000018668, -0.46845000000102671, -0.18720000000173989, 0.34345000000819509, -0.3434500000021094, 0.24970000000655163, -0.15595000000629694, -0.46845000000190412, 0.34345000000524223, -0.46845000000352116, 0.37470000000405451, 0.12470000000155455, -0.43720000000314663, -0.37470000000127746, -0.43720000000155174, -0.12529999998877109], [-0.4056526604725656, 0.46816416779737013, -0.40565017072466758, -0.12441495783688043, 0.37440137301287646, 0.31194892467291402, 0.030730534706471909, -0.46824477314575169, -0.18690055567315256, 0.34334398938890337, -0.34321028213812621, 0.24957672999714239, -0.15565938143388375, -0.46815619706066042, 0.34331165158921073, -0.46814991331992512, 0.37442728866136471, 0.12459900718406246, -0.43690384979089014, -0.37442905544624849, -0.43693487313943519, -0.12515987144868992], [-0.40538238285773498, 0.46787735588671142, -0.40536378279807361, -0.12414342920104988, 0.37410791073765842, 0.31167792527374016, 0.03090355762196037, -0.46802772909351531, -0.18665642818096517, 0.3431446267306108, -0.3431581528105821, 0.24937433423657315, -0.15537920113739859, -0.46788076662180694, 0.34312848234046261, -0.46790829869447226, 0.37414434453170553, 0.12445649396388841, -0.43664009515488972, -0.37416166999775075, -0.43666278763729982, -0.12494383175616523]],
    "model.layers.0.self_attn.q_proj.weight": [[-0.0037733392036203256, 0.1430182010544685, 0.35939353745547864, 0.030554633229015981], [-0.019243857008697188, 0.15626108324730309, 0.35216685480625959, 0.016881985994957199], [-0.020357833767783415, 0.17331895468869779, 0.33797793205598631, 0.016333789370859279]],
    "model.layers.0.self_attn.k_proj.weight": [[-0.42399898603184849, 0.25359635767216776, 0.058291115372583392, 0.017350170444724224], [-0.41177125853377416, 0.24665456631901633, 0.051236120505162117, 0.0055865032239614809], [-0.40112692545205936, 0.23388007733241742, 0.039971267251143909, -0.011458900170738045]],
    "model.layers.0.self_attn.v_proj.weight": [[-0.23868905250365352, 0.30177642163863516, -0.36561862876515866, -0.3574327633433183], [-0.22441197835515223, 0.28537080735632042, -0.35574849731436331, -0.34795836473065317], [-0.21725178782599264, 0.27364776525967044, -0.33669112519361388, -0.33566077147191997]],
    "model.layers.0.self_attn.o_proj.weight": [[-0.18274118929584604, -0.10539285639295806, -0.26697147533493909, -0.097105034746320235], [-0.1721643535019966, -0.096510068874269411, -0.25765088315835977, -0.10749448952715762], [-0.1772279805485453, -0.11182750839565084, -0.24462908993411112, -0.11383990279646035]],
    "model.layers.0.mlp.gate_proj.weight": [[-0.18152321990047723, 0.046448757019333091, -0.32931975080081538, -0.052494478755324925], [-0.16915626938188177, 0.038142824659615784, -0.31871256360394473, -0.034160666556387921], [-0.17142223092601896, 0.056670513559719332, -0.30253161097896203, -0.037670803458986581]],
    "model.layers.0.mlp.up_proj.weight": [[0.0054583706244296171, 0.45010753169152246, 0.14348963847430393, -0.33786851425841402], [-0.0090304662188990265, 0.44027457246361462, 0.1283503169836126, -0.32713985345358654], [-0.021370337321065119, 0.43324517351920366, 0.12134684575714878, -0.3144826523726707]],
    "model.layers.0.mlp.down_proj.weight": [[0.33848135676389357, 0.20530166879062581, -0.075772571343190792, 0.47338083885790572], [0.31934159077219421, 0.20527687767989841, -0.082726825092314715, 0.45796683689133649], [0.30392907954533582, 0.20272046836189528, -0.074991698655592548, 0.43848948954861455]],
    "model.layers.0.input_layernorm.weight": [[1.0622000000000904, 0.92157500000017334], [1.0619124672403175, 0.92128995931882884], [1.0616230300018459, 0.92100042240058677]],
    "model.layers.0.post_attention_layernorm.weight": [[0.99970000000013726, 1.01532500000031], [0.99940330032511493, 1.0150372292542584], [0.99910628384113664, 1.0147444478059278]],
    "model.norm.weight": [[0.98407500000014447, 0.85907500000035331], [0.98380373396749488, 0.85879738078714873], [0.98355190717589525, 0.8585141458061617]],
    "lm_head.weight": [[-0.1872000000022836, -0.094049999997037614, -0.062200000007868614, -0.34345000000382542, -0.49970000000294745, 0.15595000000387058, -0.43720000000454301, 0.031549999986149935, -0.031549999995395109, 0.12529999998107055, 0.18720000000237372, -0.12470000000200937, 0.062799999977174795, 0.34345000000439796, -0.31220000000409137, 0.062200000004507476, -0.3122000000030119, 0.40595000000278897, 0.06279999998913495, -0.34404999998603364, 0.31220000004727189, -0.094049999980629753], [-0.18692395323311572, -0.094152004741157896, -0.061919038466583115, -0.34316539166417231, -0.49941050102291634, 0.15578388127556889, -0.43691351797885231, 0.03175297658404376, -0.031844780616003578, 0.12510441184274551, 0.18690179480693264, -0.12440986324959831, 0.062851455666434561, 0.34319211572807629, -0.31190095568884108, 0.061900317371957676, -0.31190974412038674, 0.40571756455172542, 0.063048377608635811, -0.34387779752808195, 0.31197235738998974, -0.093897552624792185], [-0.18681408767846197, -0.094266791932288568, -0.061697982180311327, -0.34288764683366912, -0.49911879332236614, 0.15563717644943148, -0.43662198413674014, 0.031998364941581266, -0.032003891078437097, 0.12489128705102791, 0.18660686608517363, -0.12412163286344381, 0.062670685529444617, 0.34295807270356748, -0.31176532572814497, 0.06160038552354194, -0.31166261267324435, 0.40546866220383232, 0.063286798910408365, -0.3436612744529014, 0.31178440240094368, -0.093684756677873626]],
}
# the relative error allowed per step (alpha x the worst of 8 valid rounding sequences + floor)
BAND = {
    "model.embed_tokens.weight": [6.2498716761419935e-07, 6.9329459295386441e-07, 7.4134319455659063e-07],
    "model.layers.0.self_attn.q_proj.weight": [0.0021552191415883572, 0.0028968386321675246, 0.0034469996401017872],
    "model.layers.0.self_attn.k_proj.weight": [0.0013351943665396459, 0.0020210821164257787, 0.0021921468050711255],
    "model.layers.0.self_attn.v_proj.weight": [0.0014166479361484728, 0.0012836990484854064, 0.0022359641298342974],
    "model.layers.0.self_attn.o_proj.weight": [0.0016090591455488693, 0.002389634071686241, 0.0046952669138268354],
    "model.layers.0.mlp.gate_proj.weight": [0.0017506374464797143, 0.0026752846659485433, 0.0034952023069573118],
    "model.layers.0.mlp.up_proj.weight": [0.00063521985579878168, 0.00080600729302267554, 0.0023795938668758486],
    "model.layers.0.mlp.down_proj.weight": [0.0008917575408767908, 0.0018595079689283419, 0.0016642868742670295],
    "model.layers.0.input_layernorm.weight": [7.1983824816390237e-07, 7.0261483428175162e-07, 7.3351029502844243e-07],
    "model.layers.0.post_attention_layernorm.weight": [6.7367779870678837e-07, 6.705680895632199e-07, 6.804769494575057e-07],
    "model.norm.weight": [6.3221287206133594e-07, 6.161111203106178e-07, 6.2958317360696414e-07],
    "lm_head.weight": [6.405119034738363e-07, 6.8782168776490379e-07, 7.5688888680889543e-07],
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
