#include "harness/repro/deepspeed_repro.hpp"

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/repro/repro_case.hpp"

namespace muoncheck {

namespace {

// The script's body after its data and model: injections, training, comparison.
constexpr const char* kScriptBody = R"PY(
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
    worst, raised = 0.0, None
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
        say(HEADER)
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
                worst = max(worst, check_param(t, p.name, full.detach().float().cpu().reshape(-1).numpy(), say))
    except Exception as e:
        raised = e
    return verdict(worst, raised, "DeepSpeed", say)


if __name__ == "__main__":
    sys.exit(main())
)PY";

}  // namespace

ReproFiles deepspeed_repro(const Scenario& s, const Trace& t, const std::string& data_generator_source,
                           const std::string& script_name, int control_members) {
  if (!t.impl_details.contains("deepspeed_config"))
    throw Error(ErrorKind::Usage, t.source + ": the trace carries no implementation.details.deepspeed_config "
                                  "(traces of adapters/deepspeed/resident_worker.py do; rerun the case through it)");
  const bool expect_error = !t.error.empty();
  const ReproCaseData data = repro_case_data(s, control_members);
  std::string injections;
  for (const auto& inj : s.overflow)
    injections += "    {\"step\": " + std::to_string(inj.step) + ", \"micro_step\": " + std::to_string(inj.micro_step) +
                  ", \"rank\": " + std::to_string(inj.rank) + ", \"param\": \"" + inj.param + "\", \"index\": " +
                  std::to_string(inj.index) + ", \"value\": \"" + (inj.value == OverflowValue::inf ? "inf" : "nan") + "\"},\n";
  const auto& e = s.engine;
  const std::string version = t.impl_version;
  const std::string run_line = "TORCH_COMPILE_DISABLE=1 torchrun --nproc-per-node " + std::to_string(e.dp) + " " + script_name;
  ReproFiles f;
  f.script = "\"\"\"DeepSpeed " + version + ": minimal case " + s.name + " found by `muoncheck sweep --impl deepspeed`.\n\n" +
             s.description + "\n\nStandalone: torch, numpy and deepspeed only. Trains the case with the DeepSpeed config\n"
             "below and compares each step's fp32 master weights with the exact (float128) trajectory;\n"
             "the band is the error eight valid rounding sequences make, times alpha, plus a floor.\n    " +
             run_line + "\nExit status 1 while the defect shows, 0 once it is gone.\n\"\"\"\n"
             "import json\nimport os\nimport sys\nimport types\n\nos.environ.setdefault(\"TORCH_COMPILE_DISABLE\", \"1\")\n"
             "for key, value in ((\"RANK\", \"0\"), (\"LOCAL_RANK\", \"0\"), (\"WORLD_SIZE\", \"1\"), (\"MASTER_ADDR\", \"127.0.0.1\"),\n"
             "                   (\"MASTER_PORT\", \"29541\")):   # torchrun sets these; plain python3 runs one process\n"
             "    os.environ.setdefault(key, value)\n"
             "import numpy as np  # noqa: E402\nimport torch  # noqa: E402\n\n"
             "CASE = \"" + s.name + "\"\nCONFIG = " + py_json(t.impl_details["deepspeed_config"]) + "\n"
             "HEAD_CONFIG = " + (t.impl_details.contains("head_config") ? py_json(t.impl_details["head_config"]) : "None") + "\n"
             "SEED, STEPS, GAS, MICRO_BATCH, DP = " + std::to_string(s.seed) + ", " + std::to_string(s.steps) + ", " +
             std::to_string(e.gas) + ", " + std::to_string(e.micro_batch) + ", " + std::to_string(e.dp) + "\n"
             "STAGE, ZERO_INIT, PARAM_DTYPE = " + std::to_string(e.stage) + ", " + (e.stage == 3 && e.zero_init ? "True" : "False") +
             ", \"" + std::string(dtype_name(e.param_dtype)) + "\"\nEXPECT_ERROR = " + (expect_error ? "True" : "False") +
             "\nPARAM_SHAPES = [\n" + data.shapes + "]\nINJECTIONS = [\n" + injections + "]\n" +
             repro_case_source(data, data_generator_source) + kScriptBody;

  // The report skeleton.
  const std::string observed = observed_verdicts(s, t, control_members, "DeepSpeed");
  const auto& d = t.impl_details;
  f.report = "# DeepSpeed " + version + ": TITLE (one line: what is wrong, where)\n\n"
             "Found by `muoncheck sweep --impl deepspeed=" + version + "`, case `" + s.name + "` (" + s.description + ").\n\n"
             "## Versions\n\n- deepspeed " + version + ", torch " + d.value("torch", std::string("?")) + ", device " +
             d.value("device", std::string("?")) + (d.contains("nccl") && d["nccl"].is_string() ? ", NCCL " + d["nccl"].get<std::string>() : "") +
             "\n\n## What the minimal case needs\n\nZeRO stage " + std::to_string(e.stage) + ", dp " + std::to_string(e.dp) +
             ", gas " + std::to_string(e.gas) + ", " + std::string(dtype_name(e.param_dtype)) + ", " +
             std::to_string(s.model.params.size()) + " params, " + std::to_string(s.steps) + " steps. DeepSpeed config:\n\n```json\n" +
             d["deepspeed_config"].dump(2) + "\n```\n\n## Reproduce\n\n```\n" + run_line + "\n```\n\n"
             "## Expected vs observed (muoncheck's verdicts on the case)\n\n" + observed +
             "\n## Impact\n\nHOW OFTEN (share of the sweep's cases with these features) AND HOW LARGE (the ratio above).\n\n"
             "## Suspected code location\n\nFILE:LINE in deepspeed " + version + " — WHY.\n\n## Upstream\n\nNEW, or adds to #N.\n";
  return f;
}

}  // namespace muoncheck
