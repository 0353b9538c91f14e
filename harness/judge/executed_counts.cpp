#include "harness/judge/executed_counts.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "harness/judge/process_info.hpp"

namespace muoncheck {

namespace {

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * share);
  return buf;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// "14 UNSUPPORTED; trajectory-conforms: backend cuda: ..." (the counts, then the first verdict's reason)
std::string not_executed_text(const ScenarioResult& r) {
  int skipped = 0, unsupported = 0, inconclusive = 0;
  const Verdict* first = nullptr;
  for (const auto& v : r.verdicts) {
    skipped += v.status == Status::skipped;
    unsupported += v.status == Status::unsupported;
    inconclusive += v.status == Status::inconclusive;
    if (!first) first = &v;
  }
  if (!first) return "no invariant was asked for";
  std::string t;
  if (unsupported) t += std::to_string(unsupported) + " UNSUPPORTED";
  if (skipped) t += (t.empty() ? "" : ", ") + std::to_string(skipped) + " SKIPPED";
  if (inconclusive) t += (t.empty() ? "" : ", ") + std::to_string(inconclusive) + " INCONCLUSIVE";
  return t + "; " + first->invariant + ": " + first->message;
}

}  // namespace

int executed_count(const ScenarioResult& r) {
  int n = 0;
  for (const auto& v : r.verdicts) n += v.status == Status::pass || v.status == Status::fail;
  return n;
}

void ExecutedCounts::add(const ScenarioResult& r, const std::string& idle_repro) {
  const int n = executed_count(r);
  executed += n;
  verdicts += static_cast<int>(r.verdicts.size());
  for (const auto& v : r.verdicts) {
    skipped += v.status == Status::skipped;
    unsupported += v.status == Status::unsupported;
    inconclusive += v.status == Status::inconclusive;
  }
  if (n == 0 && !r.error)   // an errored scenario is reported as an error, not as idle
    idle.push_back({r.scenario, executed_text(0, static_cast<int>(r.verdicts.size())) + " (" + not_executed_text(r) + ")",
                    idle_repro});
}

std::string idle_repro_line(const ScenarioResult& r) {
  return r.verdicts.empty() ? repro_line(r) : repro_line(r, r.verdicts.front().invariant);
}

ExecutedCounts executed_counts_of(const std::vector<ScenarioResult>& results) {
  ExecutedCounts c;
  for (const auto& r : results) c.add(r, idle_repro_line(r));
  return c;
}

std::string executed_text(int executed, int verdicts) {
  return "executed " + std::to_string(executed) + " of " + std::to_string(verdicts) + " invariant verdicts";
}

std::string executed_text(const ExecutedCounts& c) {
  return executed_text(c.executed, c.verdicts) + " (" + percent(c.share()) + ")";
}

std::vector<std::string> executed_problems(const ExecutedCounts& c, double min_executed, const std::string& run_repro) {
  std::vector<std::string> out;
  for (const auto& i : c.idle)
    out.push_back("scenario " + i.scenario + " judged nothing: " + i.why + "; reproduce: " + i.repro);
  const bool said = c.executed == 0 && !c.idle.empty();   // every verdict is in an idle scenario above
  if (c.share() < min_executed && !said)
    out.push_back(executed_text(c) + ", below --min-executed " + number(min_executed) + " (" +
                  std::to_string(c.skipped) + " SKIPPED, " + std::to_string(c.unsupported) + " UNSUPPORTED, " +
                  std::to_string(c.inconclusive) + " INCONCLUSIVE)" +
                  ": too little was judged to call the run conforming; reproduce: " + run_repro);
  return out;
}

std::string this_command_line() {
  const auto& argv = process_argv();
  std::string line = "muoncheck";
  for (size_t i = 1; i < argv.size(); ++i) {
    const bool quote = argv[i].empty() || argv[i].find_first_of(" \t'\"$") != std::string::npos;
    line.push_back(' ');
    if (quote) line.push_back('\'');
    for (char ch : argv[i]) {
      if (ch == '\'') line.append("'\\''");
      else line.push_back(ch);
    }
    if (quote) line.push_back('\'');
  }
  return line;
}

}  // namespace muoncheck
