// Writes a file so that readers see either the old content or the whole new one:
// write to a sibling temporary "NAME.tmp.PID", flush it to disk, then rename it over
// the target. A crash mid-write never leaves a half-written report or golden file, and
// the temporaries a killed run left behind are removed by the next write or check.
// Every failure is Error{Infrastructure} naming the target and the errno text.
#pragma once
#include <cstddef>
#include <string>

namespace muoncheck {

void write_file_atomically(const std::string& path, const std::string& content);

// Before the work that produces `path` starts: creates its folder, proves a file can be
// created there (a probe temporary, removed again), rejects a target that is a folder,
// and removes stale temporaries. Throws what write_file_atomically would have thrown at
// the end, so a long run never ends in "cannot write the report".
void check_writable(const std::string& path);

// Removes "NAME.tmp.PID" siblings of `path` whose process is gone (or that are more than
// an hour old); returns how many it removed. Never throws.
std::size_t remove_stale_temporaries(const std::string& path);

}  // namespace muoncheck
