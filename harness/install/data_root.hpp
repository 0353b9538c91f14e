// Where muoncheck's own data lives (scenarios/, golden/, adapters/): every default folder of
// every command is taken from here, never from the current folder, so the binary works the
// same from any folder. The data folder is, in this order:
//   1. $MUONCHECK_DATA (a folder that does not exist is bad input, never a silent fallback);
//   2. the installed data beside the binary: BIN/../data (the wheel: muoncheck/bin/muoncheck and
//      muoncheck/data/) or BIN/../share/muoncheck (`cmake --install` to a prefix);
//   3. the checkout the binary was built in: the nearest folder above the binary that holds
//      scenarios/ and golden/ (build/harness/muoncheck, build-cuda/bundle/bin/muoncheck).
// None of them: an Infrastructure error naming MUONCHECK_DATA.
#pragma once
#include <string>

namespace muoncheck {

// The data folder (absolute), found as above once per process.
std::string data_root();
// data_root() + "/" + relative.
std::string data_path(const std::string& relative);
// The folder the running binary sits in (from /proc/self/exe).
std::string binary_folder();
// How the data folder was found, for --version: "MUONCHECK_DATA", "installed" or "checkout".
std::string data_root_origin();

}  // namespace muoncheck
