#include "harness/external/stack_dump.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

namespace muoncheck::external {

namespace {

constexpr long kCallers = 2;

struct Frame {
  std::string path, function;
  int line = 0;
};

std::string short_path(const std::string& path) {
  if (const auto at = path.rfind("site-packages/"); at != std::string::npos) return path.substr(at + 14);
  size_t cut = path.size();
  for (int parts = 0; parts < 4 && cut != std::string::npos && cut > 0; ++parts) cut = path.rfind('/', cut - 1);
  return cut == std::string::npos ? path : path.substr(cut + 1);
}

bool library_frame(const Frame& f) {
  const std::string p = short_path(f.path);
  const bool stdlib = f.path.find("/lib/python3") != std::string::npos && f.path.find("site-packages/") == std::string::npos;
  return stdlib || p.rfind("torch/", 0) == 0 || f.path.find("/adapters/") != std::string::npos;
}

std::string where(const Frame& f) { return short_path(f.path) + ":" + std::to_string(f.line) + " in " + f.function; }

// One dump's thread that ran the case: the one whose stack goes through the adapters, else the
// last one (faulthandler lists the main thread last); frames innermost first, as it writes them.
std::vector<Frame> case_thread(const std::vector<std::vector<Frame>>& threads) {
  for (const auto& t : threads)
    if (std::any_of(t.begin(), t.end(), [](const Frame& f) { return f.path.find("/adapters/") != std::string::npos; })) return t;
  return threads.empty() ? std::vector<Frame>{} : threads.back();
}

}  // namespace

std::string stuck_at(const std::string& log_text) {
  static const std::regex frame_line(R"re(^\s+File "([^"]+)", line (\d+) in (\S+))re");
  std::vector<std::vector<std::vector<Frame>>> dumps;   // dump -> thread -> frames
  std::istringstream in(log_text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.rfind("Timeout (", 0) == 0) dumps.emplace_back();
    else if (dumps.empty()) continue;
    else if (line.rfind("Thread 0x", 0) == 0 || line.rfind("Current thread 0x", 0) == 0) dumps.back().emplace_back();
    else if (std::regex_search(line, m, frame_line) && !dumps.back().empty())
      dumps.back().back().push_back({m[1].str(), m[3].str(), std::stoi(m[2].str())});
  }
  std::vector<std::string> places;
  std::map<std::string, int> ranks;
  for (const auto& d : dumps) {
    const std::vector<Frame> frames = case_thread(d);
    if (frames.empty()) continue;
    auto own = std::find_if(frames.begin(), frames.end(), [](const Frame& f) { return !library_frame(f); });
    std::string place = "stuck at " + where(own == frames.end() ? frames.front() : *own);
    if (own != frames.end())   // its callers in the implementation, up to kCallers of them
      for (auto c = own + 1; c != frames.end() && c - own <= kCallers && !library_frame(*c); ++c) place += " < " + where(*c);
    if (own != frames.end() && own != frames.begin()) place += " (innermost: " + where(frames.front()) + ")";
    if (ranks[place]++ == 0) places.push_back(place);
  }
  std::string out;
  for (const auto& p : places) out += (out.empty() ? "" : "; ") + (ranks[p] > 1 ? std::to_string(ranks[p]) + " ranks " : "") + p;
  return out;
}

}  // namespace muoncheck::external
