// A known-defect registry: the defects of one implementation that are known, each with where it
// is reported, the versions it lives in, a fix the implementation's plugin can apply on request
// (a runtime replacement or a patch; taken from the upstream pull request where there is one,
// else written by us and said so), the invariants it is expected to move, and a witness case
// (the minimal scenario that shows it). The plugin ships one next to itself
// (adapters/NAME/known_defects.json); a user may keep their own (`--known-defects FILE`).
// The format is docs/known-defects.md's; a malformed entry is Error{BadInput} naming the file,
// the entry's id and the field.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace muoncheck {

struct KnownFix {
  std::string kind;      // "replacement" (module:attribute replaced at run time), "patch" (a
                         // unified diff applied to a copy of the module), "fault" (our own engine:
                         // the planted fault of that id switched off)
  std::string from;      // "upstream" (the pull request's change) or "ours"
  std::string pr;        // the upstream pull request it is taken from ("" for ours)
  std::string target;    // replacement: "module:Qualified.name"; patch: the file it patches; fault: its id
  std::string replacement;   // replacement: "module:attribute", a function of the original returning its replacement
  std::string expects;   // replacement: a line of the original's source the fix was written against ("" for none)
  std::vector<std::string> bound_as;   // replacement: other "module:attribute" names the target is bound under
                                       // (a `from … import` copy), each replaced by the same function
  std::string patch;     // patch: the unified diff (relative paths taken from the registry's folder)
};

struct KnownDefect {
  std::string id;
  std::string title;
  std::string report;                  // the upstream thread, or our own report's path
  std::vector<std::string> versions;   // versions it lives in; "*" for every version
  std::vector<std::string> devices;    // where it shows: "cpu", "cuda"; empty: everywhere (a defect of
                                       // DeepSpeed's CPU code cannot reproduce on the GPU)
  KnownFix fix;
  std::vector<std::string> invariants;   // it is expected to move (each a real invariant id)
  std::string witness;                 // scenario file showing it, relative paths taken from the registry's folder
  std::vector<std::string> witness_needs;   // other entries whose fixes the witness is judged with (with and
                                            // without this one's) where they live: defects that hide this fix there
  std::string cause;                   // one paragraph: what goes wrong, where
  bool lives_in(const std::string& version) const;
  bool shows_on(const std::string& device) const;
};

struct KnownDefects {
  std::string path;             // the file read ("" when none was given)
  std::string implementation;   // the --impl name the registry is for
  std::vector<KnownDefect> defects;

  const KnownDefect* find(const std::string& id) const;
  // The ids of the entries living in `version` whose fix applies at run time (a patch is applied
  // to a copy of the site, scripts/judge-patch.py), in registry order.
  std::vector<std::string> applicable(const std::string& version) const;
  // The fixes d's witness is judged with in `version`: those of its witness_needs living there, and
  // d's own when asked.
  std::vector<std::string> witness_fixes(const KnownDefect& d, const std::string& version, bool with_own_fix) const;
};

// Throws Error{BadInput} naming the file, the entry (index and id) and the field.
KnownDefects load_known_defects(const std::string& path);
KnownDefects known_defects_from_json(const nlohmann::json& j, const std::string& file);

}  // namespace muoncheck
