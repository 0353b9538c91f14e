#include "harness/cli/option_table.hpp"

#include <ctime>

#include <charconv>
#include <cstdio>
#include <set>

#include "core/error.hpp"
#include "harness/external/implementation.hpp"
#include "harness/judge/executed_counts.hpp"
#include "harness/sweep/sweep_defaults.hpp"
#include "harness/install/data_root.hpp"
#include "oracle/control_ensemble.hpp"

namespace muoncheck {

namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// The default of a folder of muoncheck's own data: resolved in the data folder (harness/install/
// data_root.hpp), never in the current folder; --help shows it as "<data>/NAME".
const std::string kDataPrefix = "<data>/";

// An entry's option name: its key up to the "/" of a variant.
std::string name_of(const std::string& key) { return key.substr(0, key.find('/')); }

OptionEntry value(std::string key, std::string help, std::string default_text = "") {
  return {key, {name_of(key), true, false, std::move(help), std::move(default_text)}};
}
OptionEntry repeated(std::string key, std::string help) { return {key, {name_of(key), true, true, std::move(help), ""}}; }
OptionEntry flag(std::string key, std::string help) { return {key, {name_of(key), false, false, std::move(help), ""}}; }

// "deepspeed (DeepSpeed's Muon ...) | torch (...)", from the list of implementations.
std::string impl_help() {
  std::string out;
  for (const auto& i : external::implementations()) out += (out.empty() ? "" : " | ") + i.name + " (" + i.title + ")";
  return out;
}

// Where each implementation's versions live by default, from the list.
std::string site_help() {
  std::string out;
  for (const auto& i : external::implementations()) {
    if (i.sites_variable.empty()) continue;
    out += (out.empty() ? "" : "; ") + i.name + ": $" + i.sites_variable + "/" + i.site_prefix + "VERSION" +
           (i.default_site_root.empty() ? ", else the environment's" : ", else " + i.default_site_root + "VERSION");
  }
  return out;
}

std::vector<OptionEntry> build_table() {
  const std::string precisions = "double | float128 | bin50";
  return {
      // What the implementation runs and how it is judged (run, check, mutants, nightly, sweep, verify).
      repeated("fault", "switch on this fault of the catalogue in the implementation"),
      repeated("fault/mutants",
               "run only this fault's mutant (none given: every fault of the catalogue)"),
      value("mode", "trajectory | stepwise | both", "both"),
      value("oracle-precision", "the oracle's arithmetic: " + precisions, "float128"),
      value("oracle-precision/mutants",
            "the oracle's arithmetic: " + precisions + "; double here, its error far below any fp32 band",
            "double"),
      value("oracle-precision/pairs",
            "the oracle's arithmetic for reading what each scenario did (clip binds, overflow, scale growth): " +
                precisions,
            "double"),
      repeated("invariant", "judge only this invariant (its id)"),
      value("timeout-ms",
            "collective timeout per rank in milliseconds; the same default for every command, sweep included",
            std::to_string(kDefaultCollectiveTimeout.count())),
      value("backend", "cpu | cuda: where the implementation's NS and optimizer math run", "cpu"),
      value("comm", "gloo (host TCP; cuda ranks share the GPUs) | nccl (one GPU per rank): the implementation's "
                    "collectives", "gloo"),
      value("ns-kernel", "default | resident | gemms: which Newton–Schulz path the cuda backend takes: the default's "
                         "rule by shape, the resident kernel for every call (a scenario with a call it cannot run is "
                         "UNSUPPORTED, with the call named), or cuBLASLt's GEMMs for every call (docs/gpu.md)", "default"),
      value("dp", "re-split each scenario's global batch over N ranks, N in [1, 64] (same trajectory; none "
                  "given: the scenario's own)"),
      value("ranks", "threads (one process) | processes (one per rank, started by torchrun, srun or mpirun: "
                     "docs/multi-node.md)", "threads"),
      value("store", "with --ranks processes: the rendezvous directory (Gloo's FileStore), one no earlier run used, "
                     "seen by every rank"),
      value("control-members",
            "size K (at most 64) of the control ensemble (valid rounding sequences) that sets every noise band",
            std::to_string(oracle::kDefaultControlMembers)),
      value("min-executed",
            "not OK when a smaller fraction of the verdicts was executed (PASS/FAIL, not SKIPPED/UNSUPPORTED); "
            "in [0, 1]", number(kDefaultMinExecuted)),
      // Folders.
      value("scenarios", "folder that bare scenario names are looked up in (and, where no scenario is named, "
                         "every scenario is taken from)", kDataPrefix + "scenarios"),
      value("golden", "golden folder", kDataPrefix + "golden"),
      // What a command writes.
      value("report", "write the JSON report to FILE"),
      value("report/check", "write the JSON report to FILE", "out/latest.json"),
      value("report/nightly", "write the JSON report to FILE", "out/nightly.json"),
      value("junit", "also write the verdicts as JUnit XML to FILE (one testcase per scenario and invariant)"),
      value("summary-md", "also write a short Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)"),
      value("json", "also write the results as JSON to FILE (sweep: its record; mutants: the report "
                                 "with its mutants section; noise: the figures)"),
      flag("print-json", "print JSON on stdout instead of a table"),
      value("write-trace", "also write the implementation's run as a trace (docs/trace-format.md) to FILE, "
                                    "or FOLDER/<scenario>.trace.json when FILE is a folder"),
      repeated("trace", "a trace file written by the implementation (docs/trace-format.md)"),
      value("out/trajectory", "write the whole trajectory, tensors included, as JSON to FILE"),
      value("out/html", "the HTML file to write (also -o FILE)"),
      value("out-dir", "the folder to write into (created when missing)"),
      value("out/resolved", "write the resolved scenario to FILE instead of stdout"),
      // The sweep (sweep, nightly).
      value("cases", "number of generated scenarios", std::to_string(kDefaultSweepCases)),
      value("sweep-cases", "most sweep cases", "300"),
      value("seed", "seed of the sweep's case generator, a non-negative integer", std::to_string(kDefaultSweepSeed)),
      value("seed/nightly", "seed of the sweep's case generator, a non-negative integer, or `date`: the UTC date "
                            "as YYYYMMDD, so each night explores new cases", "date"),
      value("budget/sweep", "start no new case after SECONDS; 0: no limit", "0"),
      value("budget/nightly", "SECONDS for the whole job; the sweep gets what is left, at least 60",
            "3600"),
      value("shard", "I/N: judge only the cases whose number is I modulo N (1 <= I <= N): a disjoint part of the "
                     "seeded sweep; `muoncheck merge` joins the N records (docs/sweeps.md)", "1/1"),
      value("focus", "bias the generator toward fault ID's code path (none given: the general generator)"),
      value("cases-dir", "folder for minimal scenarios", kDefaultCasesDir),
      // repro.
      value("for", "the implementation the script is for: " + external::implementation_names() +
                   " (those with a repro template)", "deepspeed"),
      value("out-dir/repro", "folder the script and the report skeleton go to", kDefaultCasesDir),
      value("adapter-dir", "the adapters' shared folder (its data generator, datagen.py, is embedded)",
            kDataPrefix + "adapters/common"),
      // Another implementation under test (sweep, nightly).
      value("impl", "another implementation instead of ours, NAME or NAME=VERSION: " + impl_help() +
                    "; or any plugin of entry point group muoncheck.implementations (one generic resident worker, "
                    "python3 -m adapters.worker --impl NAME; --backend picks its device, --dp its ranks)"),
      value("impl-site", "PYTHONPATH folder holding that implementation; none given: " + site_help() +
                         " (a bare name: the environment's)"),
      flag("installed", "with --impl: judge the implementation installed in this Python environment (no site folder; "
                        "with =VERSION, the installed version must be it)"),
      repeated("fix", "with --impl: apply this fix of the plugin's known defects to every case (ids: its hello line)"),
      repeated("knob", "with --impl: NAME=V1,V2,...: draw the plugin's knob NAME only from these values (a part of its space, e.g. --knob precision=fp16_static,fp16_dynamic on a GPU)"),
      value("max-defects", "with --impl: distinct failures shrunk; later ones are counted only", std::to_string(kDefaultMaxDefects)),
      value("known-defects", "with --impl: a known-defect registry (docs/known-defects.md; the plugin's own is "
                             "adapters/NAME/known_defects.json): a failure its fixes explain does not fail the run; a "
                             "new failure, an entry that no longer reproduces or a fix that no longer applies does"),
      value("shrink-seconds", "with --impl: seconds one defect's shrinking may take (its runs of the "
                              "implementation included)", number(kDefaultShrinkSeconds)),
      value("attribution-seconds", "with --impl: seconds the re-runs attributing one failing case may take, past "
                                   "the first (every fix applied); past it the set found is kept as not shown minimal "
                                   "(0: no bound)", "300"),
      value("workers", "with --impl: resident workers run side by side, N in [1, 16], each taking the next case "
                       "(same cases, same record as one worker; each its own process and log)", "1"),
      value("case-timeout-s", "with --impl: seconds one case may take before the worker is killed and "
                              "the case is an implementation ERROR", "120"),
      // oracle, certify.
      value("precision", "oracle arithmetic: double (quick) | float128 | bin50 (certify)", "float128"),
      flag("control", "the control instead: the same semantics with the scenario's dtypes emulated"),
      value("min-digits", "digits every step must reach", "25"),
      // pairs.
      flag("design", "also propose rows (one value per feature) that cover the uncovered pairs, built greedily"),
  };
}

Error internal(const std::string& what) { return Error(ErrorKind::Internal, "option table: " + what); }

[[noreturn]] void expected(std::string_view key, const std::string& what, const std::string& got) {
  throw Error(ErrorKind::Usage,
              "--" + option_entry(key).spec.name + " expects " + what + ", got \"" + clip_for_message(got) + "\"");
}

// The whole text as a T, or nothing (no sign for unsigned T, no trailing characters).
template <class T>
bool parse_integer(const std::string& text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool parse_double(const std::string& text, double& out) {
  try {
    size_t used = 0;
    out = std::stod(text, &used);
    return used == text.size();
  } catch (const std::exception&) {
    return false;
  }
}

long long integer_in(const cli::Args& args, std::string_view key, long long lo, long long hi) {
  const auto text = option_text(args, key);
  long long v = 0;
  if (!parse_integer(text, v) || v < lo || v > hi)
    expected(key, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", text);
  return v;
}

}  // namespace

const std::vector<OptionEntry>& option_table() {
  static const std::vector<OptionEntry> table = build_table();
  return table;
}

const OptionEntry& option_entry(std::string_view key) {
  for (const auto& e : option_table())
    if (e.key == key) return e;
  throw internal("no option \"" + std::string(key) + "\"");
}

std::vector<cli::OptionSpec> options(const std::vector<std::string>& keys) {
  std::vector<cli::OptionSpec> out;
  std::set<std::string> names;
  for (const auto& key : keys) {
    const auto& e = option_entry(key);
    if (!names.insert(e.spec.name).second) throw internal("--" + e.spec.name + " listed twice (\"" + key + "\")");
    out.push_back(e.spec);
  }
  return out;
}

std::string option_text(const cli::Args& args, std::string_view key) {
  const auto& e = option_entry(key);
  if (const auto& d = e.spec.default_text; !args.value(e.spec.name) && d.starts_with(kDataPrefix))
    return data_path(d.substr(kDataPrefix.size()));
  return args.value_or(e.spec.name, e.spec.default_text);
}

std::chrono::milliseconds timeout_from(const cli::Args& args) {
  const auto text = option_text(args, "timeout-ms");
  long long ms = 0;
  if (!parse_integer(text, ms) || ms < 1) expected("timeout-ms", "a positive number of milliseconds", text);
  return std::chrono::milliseconds(ms);
}

std::uint64_t seed_from(const cli::Args& args, std::string_view key) {
  const auto text = option_text(args, key);
  std::uint64_t seed = 0;
  if (text == "date" && key == "seed/nightly") {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    return static_cast<std::uint64_t>((utc.tm_year + 1900) * 10000 + (utc.tm_mon + 1) * 100 + utc.tm_mday);
  }
  if (!parse_integer(text, seed)) expected(key, key == "seed/nightly" ? "a non-negative integer or date" : "a non-negative integer", text);
  return seed;
}

oracle::Precision precision_from(const cli::Args& args, std::string_view key) {
  const auto text = option_text(args, key);
  oracle::Precision p;
  if (!oracle::parse_precision(text, p)) expected(key, "double|float128|bin50", text);
  return p;
}

impl::ComputeBackend backend_from(const cli::Args& args) {
  const auto text = option_text(args, "backend");
  impl::ComputeBackend b;
  if (!impl::parse_compute_backend(text, b)) expected("backend", "cpu|cuda", text);
  return b;
}

impl::CommBackend comm_from(const cli::Args& args) {
  const auto text = option_text(args, "comm");
  impl::CommBackend c;
  if (!impl::parse_comm_backend(text, c)) expected("comm", "gloo|nccl", text);
  return c;
}

impl::NsKernel ns_kernel_from(const cli::Args& args) {
  const auto text = option_text(args, "ns-kernel");
  impl::NsKernel k;
  if (!impl::parse_ns_kernel(text, k)) expected("ns-kernel", "default|resident|gemms", text);
  return k;
}

CheckMode mode_from(const cli::Args& args) {
  const auto text = option_text(args, "mode");
  if (text == "trajectory") return CheckMode::trajectory;
  if (text == "stepwise") return CheckMode::stepwise;
  if (text == "both") return CheckMode::both;
  expected("mode", "trajectory|stepwise|both", text);
}

int dp_from(const cli::Args& args) {
  if (!args.value("dp")) return 0;
  return static_cast<int>(integer_in(args, "dp", 1, 64));
}

int control_members_from(const cli::Args& args, int min) {
  return static_cast<int>(integer_in(args, "control-members", min, 64));
}

double min_executed_from(const cli::Args& args) {
  const auto text = option_text(args, "min-executed");
  double m = 0;
  if (!parse_double(text, m) || !(m >= 0.0 && m <= 1.0)) expected("min-executed", "a fraction in [0, 1]", text);
  return m;
}

std::pair<int, int> shard_from(const cli::Args& args) {
  const auto text = option_text(args, "shard");
  const auto slash = text.find('/');
  int index = 0, count = 0;
  if (slash == std::string::npos || !parse_integer(text.substr(0, slash), index) ||
      !parse_integer(text.substr(slash + 1), count) || count < 1 || count > 4096 || index < 1 || index > count)
    expected("shard", "I/N with 1 <= I <= N <= 4096", text);
  return {index - 1, count};
}

int workers_from(const cli::Args& args) { return static_cast<int>(integer_in(args, "workers", 1, 16)); }

int positive_int_from(const cli::Args& args, std::string_view key) {
  return static_cast<int>(integer_in(args, key, 1, 1 << 30));
}

double seconds_from(const cli::Args& args, std::string_view key) {
  const auto text = option_text(args, key);
  double s = 0;
  if (!parse_double(text, s) || !(s >= 0.0)) expected(key, "seconds >= 0", text);
  return s;
}

double number_from(const cli::Args& args, std::string_view key) {
  const auto text = option_text(args, key);
  double x = 0;
  if (!parse_double(text, x)) expected(key, "a number", text);
  return x;
}

}  // namespace muoncheck
