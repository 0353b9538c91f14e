#include "harness/repro/torch_repro.hpp"

#include "core/error.hpp"
#include "harness/repro/repro_case.hpp"

namespace muoncheck {

namespace {

// The script's body after its data and model: DDP or FSDP2 as the adapter ran it, training, comparison.
constexpr const char* kScriptBody = R"PY(

def wrap(model, device):
    """The model under DDP or FSDP2 as the adapter wrapped it; the tensors the optimizers step, by name."""
    dtype = DTYPES[PARAM_DTYPE]
    by_name = dict(model.named_parameters())
    if SETTINGS["parallelism"] == "ddp":
        masters = None
        if dtype != torch.float32:   # bf16: the module holds bf16 params, the optimizers step fp32 copies
            masters = {n: torch.nn.Parameter(p.detach().clone().float()) for n, p in by_name.items()}
            model.to(dtype)
        ids = [device.index] if device.type == "cuda" else None
        module = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids, bucket_cap_mb=SETTINGS["bucket_cap_mb"])
        return module, dict(model.named_parameters()), masters
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mesh = init_device_mesh(device.type, (DP,))
    reduce = DTYPES[SETTINGS["mp_reduce_dtype"]]
    mp = MixedPrecisionPolicy(param_dtype=dtype if dtype != torch.float32 else None,
                              reduce_dtype=reduce if reduce != dtype else None)
    owners = [m for m in model.modules() if m is not model and any(True for _ in m.parameters(recurse=False))]
    for m in owners:
        fully_shard(m, mesh=mesh, reshard_after_forward=SETTINGS["reshard_after_forward"], mp_policy=mp)
    fully_shard(model, mesh=mesh, reshard_after_forward=SETTINGS["reshard_after_forward"], mp_policy=mp)
    return model, dict(model.named_parameters()), None


def main():
    import contextlib
    import torch.distributed as dist
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if torch.cuda.is_available() else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    rank = dist.get_rank()
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"torch {torch.__version__}, {device.type}, {SETTINGS['parallelism']}, dp {DP}; case {CASE}")
    worst, raised = 0.0, None
    try:
        module, params, masters = wrap(Node(tree()).to(device), device)
        stepped = masters or params
        opts = []
        for spec in OPTIMIZERS:
            groups = [{**{k: v for k, v in g.items() if k != "param"}, "params": [stepped[g["param"]]],
                       "lr": LR[g["param"]][0]} for g in spec["groups"]]
            cls = getattr(torch.optim, spec["class"])
            takes = inspect.signature(cls).parameters   # defaults may hold settings the constructor derives
            opts.append(cls(groups, **{k: v for k, v in spec["defaults"].items() if k in takes}))
        say(HEADER)
        for t in range(STEPS):
            for opt, spec in zip(opts, OPTIMIZERS):
                for g, gs in zip(opt.param_groups, spec["groups"]):
                    g["lr"] = LR[gs["param"]][t]
            for k in range(GAS):
                last = k == GAS - 1
                if SETTINGS["parallelism"] == "ddp":
                    sync = contextlib.nullcontext() if last else module.no_sync()
                else:
                    module.set_requires_gradient_sync(last)
                    sync = contextlib.nullcontext()
                with sync:
                    loss = module(batch(t, k, rank, device, DTYPES[PARAM_DTYPE]))
                    (loss / GAS).backward()
            if masters:
                for n, m in masters.items():
                    m.grad, params[n].grad = params[n].grad.float(), None
            if CLIP > 0:
                torch.nn.utils.clip_grad_norm_([stepped[p.name] for p in PARAMS], CLIP)
            for opt in opts:
                opt.step()
            for opt in opts:
                opt.zero_grad(set_to_none=True)
            if masters:
                with torch.no_grad():
                    for n, m in masters.items():
                        params[n].copy_(m)
            for p in PARAMS:
                w = stepped[p.name].detach()
                full = w.full_tensor() if hasattr(w, "full_tensor") else w
                worst = max(worst, check_param(t, p.name, full.float().cpu().reshape(-1).numpy(), say))
    except Exception as e:
        raised = e
    finally:
        dist.destroy_process_group()
    return verdict(worst, raised, "torch", say)


if __name__ == "__main__":
    sys.exit(main())
)PY";

std::string lr_table(const Scenario& s, const nlohmann::json& lr_by_step) {
  std::string out;
  for (size_t i = 0; i < s.model.params.size(); ++i) {
    out += "    \"" + s.model.params[i].name + "\": [";
    for (size_t t = 0; t < lr_by_step.size(); ++t) out += (t ? ", " : "") + lr_by_step[t].at(i).dump();
    out += "],\n";
  }
  return out;
}

}  // namespace

ReproFiles torch_repro(const Scenario& s, const Trace& t, const std::string& data_generator_source,
                       const std::string& script_name, int control_members) {
  const auto& d = t.impl_details;
  for (const char* key : {"optimizers", "lr_by_step", "parallelism"})
    if (!d.contains(key))
      throw Error(ErrorKind::Usage, t.source + ": the trace carries no implementation.details." + std::string(key) +
                                        " (traces of adapters/torch/run.py and resident_worker.py do; rerun the case through it)");
  const bool expect_error = !t.error.empty();
  const ReproCaseData data = repro_case_data(s, control_members);
  nlohmann::json settings = {{"parallelism", d["parallelism"]}};
  for (const char* key : {"bucket_cap_mb", "reshard_after_forward", "mp_reduce_dtype"})
    if (d.contains(key)) settings[key] = d[key];
  const auto& e = s.engine;
  const std::string version = t.impl_version;
  const std::string run_line = "torchrun --nproc-per-node " + std::to_string(e.dp) + " " + script_name;
  ReproFiles f;
  f.script = "\"\"\"torch " + version + ": minimal case " + s.name + " found by `muoncheck sweep --impl torch`.\n\n" +
             s.description + "\n\nStandalone: torch and numpy only. Trains the case with the optimizers below (torch.optim.Muon\n"
             "for the Muon params, torch.optim.AdamW for the rest) under " + d["parallelism"].get<std::string>() +
             " and compares each step's fp32 master weights with the exact\n(float128) trajectory; the band is the error "
             "eight valid rounding sequences make, times alpha, plus a floor.\n    " + run_line +
             "\nExit status 1 while the defect shows, 0 once it is gone.\n\"\"\"\n"
             "import inspect\nimport json\nimport os\nimport sys\n\n"
             "for key, value in ((\"RANK\", \"0\"), (\"LOCAL_RANK\", \"0\"), (\"WORLD_SIZE\", \"1\"), (\"MASTER_ADDR\", \"127.0.0.1\"),\n"
             "                   (\"MASTER_PORT\", \"29541\")):   # torchrun sets these; plain python3 runs one process\n"
             "    os.environ.setdefault(key, value)\n"
             "import numpy as np  # noqa: E402\nimport torch  # noqa: E402\n\n"
             "CASE = \"" + s.name + "\"\nSETTINGS = " + py_json(settings) + "\nOPTIMIZERS = " + py_json(d["optimizers"]) + "\n"
             "SEED, STEPS, GAS, MICRO_BATCH, DP = " + std::to_string(s.seed) + ", " + std::to_string(s.steps) + ", " +
             std::to_string(e.gas) + ", " + std::to_string(e.micro_batch) + ", " + std::to_string(e.dp) + "\n"
             "PARAM_DTYPE, CLIP = \"" + std::string(dtype_name(e.param_dtype)) + "\", " + std::to_string(s.optimizer.clip.max_norm) +
             "\nDTYPES = {\"fp32\": torch.float32, \"fp16\": torch.float16, \"bf16\": torch.bfloat16}\nEXPECT_ERROR = " +
             (expect_error ? "True" : "False") + "\nPARAM_SHAPES = [\n" + data.shapes + "]\n# each param's lr at each step\nLR = {\n" +
             lr_table(s, d["lr_by_step"]) + "}\n" + repro_case_source(data, data_generator_source) + kScriptBody;

  const std::string observed = observed_verdicts(s, t, control_members, "torch");
  f.report = "# torch " + version + ": TITLE (one line: what is wrong, where)\n\n"
             "Found by `muoncheck sweep --impl torch=" + version + "`, case `" + s.name + "` (" + s.description + ").\n\n"
             "## Versions\n\n- torch " + version + ", device " + d.value("device", std::string("?")) + ", backend " +
             d.value("backend", std::string("?")) + "\n\n## What the minimal case needs\n\n" + d["parallelism"].get<std::string>() +
             " (stage " + std::to_string(e.stage) + "), dp " + std::to_string(e.dp) + ", gas " + std::to_string(e.gas) + ", " +
             std::string(dtype_name(e.param_dtype)) + ", " + std::to_string(s.model.params.size()) + " params, " +
             std::to_string(s.steps) + " steps. Optimizers:\n\n```json\n" + d["optimizers"].dump(2) + "\n```\n\n## Reproduce\n\n```\n" +
             run_line + "\n```\n\n## Expected vs observed (muoncheck's verdicts on the case)\n\n" + observed +
             "\n## Impact\n\nHOW OFTEN (share of the sweep's cases with these features) AND HOW LARGE (the ratio above).\n\n"
             "## Suspected code location\n\nFILE:LINE in torch " + version + " — WHY.\n\n## Upstream\n\nNEW, or adds to #N.\n";
  return f;
}

}  // namespace muoncheck
