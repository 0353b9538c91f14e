#include "harness/install/data_root.hpp"

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "core/error.hpp"

namespace muoncheck {

namespace fs = std::filesystem;

namespace {

bool holds_data(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "scenarios", ec) && fs::is_directory(dir / "golden", ec);
}

std::pair<std::string, std::string> find_data_root() {
  if (const char* env = std::getenv("MUONCHECK_DATA"); env && *env) {
    std::error_code ec;
    const fs::path dir = fs::absolute(env, ec);
    if (ec || !fs::is_directory(dir, ec))
      throw Error(ErrorKind::BadInput, std::string("MUONCHECK_DATA=") + env + ": no such folder (it names the folder "
                                                                              "holding scenarios/, golden/ and adapters/)");
    return {dir.lexically_normal().string(), "MUONCHECK_DATA"};
  }
  const fs::path bin = binary_folder();
  for (const fs::path& candidate : {bin.parent_path() / "data", bin.parent_path() / "share" / "muoncheck"})
    if (holds_data(candidate)) return {candidate.lexically_normal().string(), "installed"};
  for (fs::path dir = bin; !dir.empty(); dir = dir.parent_path()) {
    if (holds_data(dir)) return {dir.string(), "checkout"};
    if (dir == dir.root_path()) break;
  }
  throw Error(ErrorKind::Infrastructure,
              "no muoncheck data folder (scenarios/, golden/, adapters/) beside " + bin.string() +
                  " or above it: set MUONCHECK_DATA to one, or reinstall the muoncheck wheel");
}

const std::pair<std::string, std::string>& found() {
  static const auto root = find_data_root();
  return root;
}

}  // namespace

std::string binary_folder() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error(ErrorKind::Infrastructure, "cannot read /proc/self/exe: " + ec.message());
  return exe.parent_path().string();
}

std::string data_root() { return found().first; }
std::string data_root_origin() { return found().second; }
std::string data_path(const std::string& relative) { return data_root() + "/" + relative; }

}  // namespace muoncheck
