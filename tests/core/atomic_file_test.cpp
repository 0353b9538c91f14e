// Bad input, the report target: checked writable before any work, errors naming the target
// and the errno text, and the temporaries of a killed run cleaned up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace muoncheck {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

fs::path fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("muoncheck-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string error_of(void (*f)(const std::string&), const std::string& path) {
  try {
    f(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Infrastructure);
    return e.what();
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}

// A folder nobody can create files in, root included: one under a regular file.
TEST(AtomicFile, UnwritableTargetIsRefusedUpFrontNamingTargetAndErrno) {
  const auto dir = fresh_dir("unwritable");
  std::ofstream(dir / "file") << "x";
  const auto target = (dir / "file" / "report.json").string();
  EXPECT_THAT(error_of(check_writable, target), AllOf(StartsWith(target + ": cannot create its folder"), HasSubstr("Not a directory")));
  const auto on_folder = dir.string();
  EXPECT_THAT(error_of(check_writable, on_folder), AllOf(StartsWith(on_folder + ": "), HasSubstr("Is a directory")));
  try {
    write_file_atomically(target, "{}");
    ADD_FAILURE() << "wrote under a file";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(StartsWith(target + ": "), HasSubstr("Not a directory")));
  }
  fs::remove_all(dir);
}

TEST(AtomicFile, ReadOnlyMountIsRefusedUpFront) {
  if (!fs::exists("/proc/self")) GTEST_SKIP() << "no /proc";
  // procfs accepts no new files, whoever asks: the probe fails with the errno named.
  const std::string target = "/proc/self/muoncheck-report.json";
  EXPECT_THAT(error_of(check_writable, target), AllOf(StartsWith(target + ": cannot create a file beside it"), HasSubstr("(")));
}

TEST(AtomicFile, StaleTemporariesOfAKilledRunAreRemovedAndLiveOnesKept) {
  const auto dir = fresh_dir("stale");
  const auto target = (dir / "r.json").string();
  // A pid that certainly is gone: a child that has exited and been reaped.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const auto stale = target + ".tmp." + std::to_string(child);
  const auto live = target + ".tmp." + std::to_string(::getppid());   // our parent is alive
  const auto other = (dir / "other.json.tmp.1").string();             // not this target's
  for (const auto& p : {stale, live, other}) std::ofstream(p) << "partial";
  write_file_atomically(target, "{}");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(target));
  std::ofstream(stale) << "partial";
  check_writable(target);   // the up-front check cleans too
  EXPECT_FALSE(fs::exists(stale));
  fs::remove_all(dir);
}

TEST(AtomicFile, CheckWritableLeavesNothingBehind) {
  const auto dir = fresh_dir("probe");
  check_writable((dir / "sub" / "r.json").string());
  EXPECT_TRUE(fs::is_directory(dir / "sub"));
  EXPECT_TRUE(fs::is_empty(dir / "sub"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace muoncheck
