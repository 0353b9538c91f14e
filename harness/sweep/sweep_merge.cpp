#include "harness/sweep/sweep_merge.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "impl/math/compute.hpp"
#include "impl/run_impl.hpp"

namespace muoncheck {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& file, const std::string& field, const std::string& what) {
  throw Error(ErrorKind::BadInput, file + ": " + field + ": " + what);
}

const json& field(const std::string& file, const json& j, const std::string& name) {
  if (!j.is_object() || !j.contains(name)) bad(file, name, "missing (not a record of `muoncheck sweep --json`)");
  return j.at(name);
}

template <class T>
T value(const std::string& file, const json& j, const std::string& name) {
  try {
    return field(file, j, name).get<T>();
  } catch (const json::exception&) {
    bad(file, name, "of the wrong type: " + j.at(name).dump().substr(0, 60));
  }
}

SweepCaseRecord case_from(const std::string& file, const json& c) {
  SweepCaseRecord r;
  r.number = value<int>(file, c, "case");
  r.unsupported = value<bool>(file, c, "unsupported");
  r.inconclusive = value<bool>(file, c, "inconclusive");
  const json& spread = field(file, c, "spread");
  r.spread = spread.is_null() ? INFINITY : value<double>(file, c, "spread");
  r.counts.executed = value<int>(file, c, "executed");
  r.counts.verdicts = value<int>(file, c, "verdicts");
  r.counts.skipped = value<int>(file, c, "skipped");
  r.counts.unsupported = value<int>(file, c, "unsupported_verdicts");
  r.counts.inconclusive = value<int>(file, c, "inconclusive_verdicts");
  for (const auto& i : field(file, c, "idle"))
    r.counts.idle.push_back({value<std::string>(file, i, "scenario"), value<std::string>(file, i, "why"),
                               value<std::string>(file, i, "repro")});
  if (const json& u = field(file, c, "unconfirmed"); !u.is_null())
    r.unconfirmed = UnconfirmedCase{r.number, value<std::vector<std::string>>(file, u, "invariants"),
                                    value<std::string>(file, u, "message")};
  r.failed = value<bool>(file, c, "failed");
  return r;
}

generators::ScenarioSize size_from(const std::string& file, const json& z) {
  generators::ScenarioSize s;
  s.params = value<int>(file, z, "params");
  s.elements = value<int64_t>(file, z, "elements");
  s.steps = value<int>(file, z, "steps");
  s.dp = value<int>(file, z, "dp");
  s.gas = value<int>(file, z, "gas");
  return s;
}

SweepCounterexample failure_from(const std::string& file, const json& f) {
  SweepCounterexample c;
  c.found_after = value<int>(file, f, "found_after");
  c.invariants = value<std::vector<std::string>>(file, f, "invariants");
  c.message = value<std::string>(file, f, "message");
  c.original_size = size_from(file, field(file, f, "original"));
  c.shrunk_size = size_from(file, field(file, f, "shrunk"));
  c.shrink_steps = value<int>(file, f, "shrink_steps");
  c.shrink_judgements = value<int>(file, f, "shrink_judgements");
  c.path = value<std::string>(file, f, "scenario_file");
  c.repro = value<std::string>(file, f, "repro");
  c.regenerate = value<std::string>(file, f, "regenerate");
  return c;
}

}  // namespace

MergedSweep merge_sweep_records(const std::vector<std::pair<std::string, json>>& records) {
  if (records.empty()) throw Error(ErrorKind::Usage, "merge: no sweep record given");
  const auto& [first_file, first] = records.front();
  MergedSweep m;
  SweepOptions& o = m.options;
  o.seed = value<uint64_t>(first_file, first, "seed");
  o.cases = value<int>(first_file, first, "cases_requested");
  o.faults = value<std::vector<std::string>>(first_file, first, "faults");
  o.focus.label = value<std::string>(first_file, first, "focus");
  o.budget_seconds = value<double>(first_file, first, "budget_seconds");
  o.min_executed = value<double>(first_file, first, "min_executed");
  if (!impl::parse_compute_backend(value<std::string>(first_file, first, "backend"), o.backend))
    bad(first_file, "backend", "not cpu or cuda");
  if (!impl::parse_comm_backend(value<std::string>(first_file, first, "comm"), o.comm)) bad(first_file, "comm", "not gloo or nccl");
  m.shards = value<int>(first_file, field(first_file, first, "shard"), "count");
  if (static_cast<int>(records.size()) != m.shards)
    throw Error(ErrorKind::Usage, "merge: " + first_file + " is one of " + std::to_string(m.shards) + " shards, " +
                                      std::to_string(records.size()) + " record(s) given");

  std::map<int, std::string> shard_files;   // 1-based shard index -> its file
  std::vector<SweepCaseRecord> cases;
  std::map<int, SweepCounterexample> failures;   // by the case that failed
  for (const auto& [file, r] : records) {
    if (value<std::string>(file, r, "command") != "sweep") bad(file, "command", "not a record of `muoncheck sweep`");
    for (const char* same : {"seed", "cases_requested", "faults", "focus", "budget_seconds", "min_executed", "backend", "comm"})
      if (field(file, r, same) != first.at(same))
        bad(file, same, r.at(same).dump() + ", but " + first_file + " has " + first.at(same).dump() + ": not shards of one sweep");
    const json& shard = field(file, r, "shard");
    const int index = value<int>(file, shard, "index");
    if (value<int>(file, shard, "count") != m.shards) bad(file, "shard.count", "differs from " + first_file + "'s");
    if (index < 1 || index > m.shards) bad(file, "shard.index", std::to_string(index) + " is not in 1.." + std::to_string(m.shards));
    if (const auto [it, fresh] = shard_files.emplace(index, file); !fresh)
      bad(file, "shard.index", "shard " + std::to_string(index) + " is also " + it->second);
    for (const auto& c : field(file, r, "cases")) {
      cases.push_back(case_from(file, c));
      const int n = cases.back().number;
      if (n < 1 || n > o.cases || (n - 1) % m.shards != index - 1)
        bad(file, "cases", "case " + std::to_string(n) + " is not one of shard " + std::to_string(index) + "/" +
                               std::to_string(m.shards) + "'s");
      if (cases.back().failed) failures.emplace(n, failure_from(file, field(file, r, "failure")));
    }
    m.result.budget_exhausted = m.result.budget_exhausted || value<bool>(file, r, "budget_exhausted");
    m.result.seconds = std::max(m.result.seconds, value<double>(file, r, "seconds"));
  }
  std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) { return a.number < b.number; });
  // One machine stops at the first confirmed failure: the cases after it are not the sweep's.
  const int last = failures.empty() ? o.cases : failures.begin()->first;
  for (const auto& c : cases)
    if (c.number <= last) m.result.add(c);
  if (!failures.empty()) m.result.failure = failures.begin()->second;
  return m;
}

}  // namespace muoncheck
