#include "harness/external/stack_dump.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

namespace muoncheck::external {

namespace {

constexpr size_t kPlaceFrames = 3;   // the place and its callers, in as many files
constexpr size_t kRaisedChars = 300;

struct Frame {
  std::string path, function;
  int line = 0;
};

enum class Code { library, adapters, implementation };

std::string short_path(const std::string& path) {
  if (const auto at = path.rfind("site-packages/"); at != std::string::npos) return path.substr(at + 14);
  if (const auto at = path.rfind("/adapters/"); at != std::string::npos) return path.substr(at + 1);
  size_t cut = path.size();
  for (int parts = 0; parts < 4 && cut != std::string::npos && cut > 0; ++parts) cut = path.rfind('/', cut - 1);
  return cut == std::string::npos ? path : path.substr(cut + 1);
}

// torch's, the standard library's (and Python's frozen modules), the adapters', or the implementation's.
Code code_of(const Frame& f) {
  if (f.path.find("/adapters/") != std::string::npos) return Code::adapters;
  const bool stdlib = f.path.rfind("<", 0) == 0 ||
                      (f.path.find("/lib/python3") != std::string::npos && f.path.find("site-packages/") == std::string::npos);
  return stdlib || short_path(f.path).rfind("torch/", 0) == 0 ? Code::library : Code::implementation;
}

std::string where(const Frame& f) { return short_path(f.path) + ":" + std::to_string(f.line) + " in " + f.function; }

// One dump's thread that ran the case: the one whose stack goes through the adapters, else the
// last one (faulthandler lists the main thread last); frames innermost first, as it writes them.
std::vector<Frame> case_thread(const std::vector<std::vector<Frame>>& threads) {
  for (const auto& t : threads)
    if (std::any_of(t.begin(), t.end(), [](const Frame& f) { return code_of(f) == Code::adapters; })) return t;
  return threads.empty() ? std::vector<Frame>{} : threads.back();
}

// The innermost frame of the implementation's code and its callers there (one frame per file, up
// to kPlaceFrames), else the same in the adapters', else the innermost frame.
std::string place_of(const std::vector<Frame>& frames) {
  for (const Code want : {Code::implementation, Code::adapters}) {
    std::vector<const Frame*> chain;
    for (const auto& f : frames)
      if (code_of(f) == want && (chain.empty() || chain.back()->path != f.path) && chain.size() < kPlaceFrames) chain.push_back(&f);
    if (chain.empty()) continue;
    std::string place = "stuck at " + where(*chain.front());
    for (size_t i = 1; i < chain.size(); ++i) place += " < " + where(*chain[i]);
    if (chain.front() != &frames.front()) place += " (innermost: " + where(frames.front()) + ")";
    return place;
  }
  return "stuck at " + where(frames.front());
}

}  // namespace

const std::regex& raised_line() {
  static const std::regex line(R"re(^muoncheck: rank (\d+) raised (.*)$)re");
  return line;
}

std::set<int> ranks_that_raised(const std::string& log_text) {
  std::set<int> out;
  std::istringstream in(log_text);
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, m, raised_line())) out.insert(std::stoi(m[1].str()));
  return out;
}

std::string stuck_at(const std::string& log_text) {
  static const std::regex frame_line(R"re(^\s+File "([^"]+)", line (\d+) in (\S+))re");
  std::vector<std::vector<std::vector<Frame>>> dumps;   // dump -> thread -> frames
  std::vector<std::string> raised;
  std::istringstream in(log_text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, raised_line())) {
      std::string what = "rank " + m[1].str() + " raised " + m[2].str().substr(0, kRaisedChars);
      if (std::find(raised.begin(), raised.end(), what) == raised.end()) raised.push_back(what);
    } else if (line.rfind("Timeout (", 0) == 0) {
      dumps.emplace_back();
    } else if (dumps.empty()) {
      continue;
    } else if (line.rfind("Thread 0x", 0) == 0 || line.rfind("Current thread 0x", 0) == 0) {
      dumps.back().emplace_back();
    } else if (std::regex_search(line, m, frame_line) && !dumps.back().empty()) {
      dumps.back().back().push_back({m[1].str(), m[3].str(), std::stoi(m[2].str())});
    }
  }
  std::vector<std::string> places;
  std::map<std::string, int> ranks;
  for (const auto& d : dumps) {
    const std::vector<Frame> frames = case_thread(d);
    if (frames.empty()) continue;
    const std::string place = place_of(frames);
    if (ranks[place]++ == 0) places.push_back(place);
  }
  std::string out;
  for (const auto& r : raised) out += (out.empty() ? "" : "; ") + r;
  for (const auto& p : places) out += (out.empty() ? "" : "; ") + (ranks[p] > 1 ? std::to_string(ranks[p]) + " ranks " : "") + p;
  return out;
}

}  // namespace muoncheck::external
