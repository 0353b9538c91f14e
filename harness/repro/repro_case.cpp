#include "harness/repro/repro_case.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "harness/judge/verify_traces.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/oracle.hpp"
#include "properties/tensor_error.hpp"

namespace muoncheck {

namespace {

constexpr size_t kMaxEmbeddedValues = 400000;   // expected weights written into the script

std::string num(double x) {
  if (std::isnan(x)) return "float('nan')";
  if (std::isinf(x)) return x > 0 ? "float('inf')" : "-float('inf')";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string list(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + num(v[i]);
  return s + "]";
}

constexpr const char* kModelSource = R"PY(

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
            # fp32 arithmetic on the 16-bit model copy, so only the gradient rounds to it, once
            w = getattr(self, local).float()
            x, y = (t.float() for t in batch[p.index])
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


HEADER = "step  param                                     error vs float128   band      ratio"


def check_param(t, name, observed, say):
    """Prints step t's error of param `name`'s fp32 master weight (flat) against the float128
    trajectory, next to its band; returns error / band."""
    err = relative_error(observed, EXPECTED[name][t])
    band = BAND[name][t]
    say(f"{t:4d}  {name:40s}  {err:17.3e}  {band:9.3e}  {err / band:8.2f}" + ("   <- outside" if err > band else ""))
    return err / band


def verdict(worst, raised, who, say):
    """The script's exit status: 1 while the defect shows (a ratio above 1, or `who` raising in an
    ERROR case), else 0."""
    if raised is not None:
        say(f"{who} raised {type(raised).__name__}: {raised}")
        say("DEFECT PRESENT" if EXPECT_ERROR else "the run raised (not the defect this script shows)")
        return 1
    if EXPECT_ERROR:
        say(f"expected: {who} raises; it did not (no defect)")
        return 0
    say("expected: every ratio at most 1 (the error of 8 valid rounding sequences, x alpha, plus a floor)")
    say(f"worst ratio {worst:.3g}: " + ("DEFECT PRESENT" if worst > 1 else "no defect"))
    return 1 if worst > 1 else 0


)PY";

}  // namespace

std::string py_json(const nlohmann::json& j) { return "json.loads(r'''" + j.dump() + "''')"; }

std::string repro_case_source(const ReproCaseData& data, const std::string& data_generator_source) {
  return "# fp32 master weight after each step: the exact trajectory (muoncheck's float128 oracle)\nEXPECTED = {\n" +
         data.expected + "}\n# the relative error allowed per step (alpha x the worst of 8 valid rounding sequences + floor)\nBAND = {\n" +
         data.band + "}\n\n# ---- the data generator (docs/semantics.md §1, verbatim)\n" + data_generator_source +
         kModelSource;
}

std::string observed_verdicts(const Scenario& s, const Trace& t, int control_members, const std::string& who) {
  if (!t.error.empty()) return who + " raises: `" + t.error + "`\n";
  VerifyOptions vo;
  vo.control_members = control_members;
  std::string out;
  for (const auto& v : verify_one_trace(s, t, {}, vo).verdicts)
    out += "- " + v.invariant + ": **" + status_name(v.status) + "** — " + v.message + "\n";
  return out;
}

ReproCaseData repro_case_data(const Scenario& s, int control_members) {
  const Trajectory exact = oracle::run_oracle(s, oracle::Precision::float128);
  const auto controls = oracle::run_control_ensemble(s, control_members);
  size_t values = 0;
  for (const auto& st : exact.steps)
    for (const auto& p : st.params) values += p.weight.size();
  if (values > kMaxEmbeddedValues)
    throw Error(ErrorKind::Usage, s.name + ": " + std::to_string(values) + " expected weight values; a repro script embeds at most " +
                                      std::to_string(kMaxEmbeddedValues) + " (shrink the case first)");
  ReproCaseData out;
  for (size_t i = 0; i < s.model.params.size(); ++i) {
    const auto& p = s.model.params[i];
    std::string dims;
    for (auto d : p.shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    out.shapes += "    (\"" + p.name + "\", [" + dims + "]),\n";
    std::string e = "    \"" + p.name + "\": [", b = e;
    for (size_t st = 0; st < exact.steps.size(); ++st) {
      const auto& w = exact.steps[st].params[i].weight;
      std::vector<const std::vector<double>*> members;
      for (const auto& c : controls) members.push_back(&c.steps[st].params[i].weight);
      e += (st ? ", " : "") + list(w);
      b += (st ? ", " : "") + num(allowed_error(s.tolerance, ensemble_error(members, w)));
    }
    out.expected += e + "],\n";
    out.band += b + "],\n";
  }
  return out;
}

}  // namespace muoncheck
