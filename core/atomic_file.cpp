#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace muoncheck {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& target, const std::string& what, int err) {
  throw Error(ErrorKind::Infrastructure, target + ": " + what + " (" + std::strerror(err) + ")");
}

std::string temporary_of(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

void create_parent(const std::string& path) {
  const fs::path target(path);
  if (!target.has_parent_path()) return;
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) fail(path, "cannot create its folder " + target.parent_path().string(), ec.value());
}

// Writes all of `content` to a new file `tmp` and flushes it to disk; returns errno or 0.
int write_temporary(const std::string& tmp, const std::string& content) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  size_t done = 0;
  int err = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  return err;
}

bool process_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

std::size_t remove_stale_temporaries(const std::string& path) {
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  fs::directory_iterator it(folder, ec), end;
  std::size_t removed = 0;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid == ::getpid()) continue;
    std::error_code tec;
    const auto age = fs::file_time_type::clock::now() - fs::last_write_time(it->path(), tec);
    if (process_gone(pid) || (!tec && age > std::chrono::hours(1))) {
      std::error_code rec;
      removed += fs::remove(it->path(), rec) ? 1 : 0;
    }
  }
  return removed;
}

void check_writable(const std::string& path) {
  create_parent(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) fail(path, "cannot write a file over a folder", EISDIR);
  remove_stale_temporaries(path);
  const std::string tmp = temporary_of(path);
  if (const int err = write_temporary(tmp, ""); err != 0) {
    ::unlink(tmp.c_str());
    fail(path, "cannot create a file beside it (" + tmp + ")", err);
  }
  ::unlink(tmp.c_str());
}

void write_file_atomically(const std::string& path, const std::string& content) {
  create_parent(path);
  remove_stale_temporaries(path);
  const std::string tmp = temporary_of(path);
  if (const int err = write_temporary(tmp, content); err != 0) {
    ::unlink(tmp.c_str());
    fail(path, "cannot write its temporary " + tmp, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot move the finished file " + tmp + " into place", err);
  }
}

}  // namespace muoncheck
