// A small command-line parser: `--flag value`, `--flag=value`, repeatable flags,
// boolean switches and positionals, checked against each subcommand's declared
// options so a typo is a Usage error, never silently ignored.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace muoncheck::cli {

struct OptionSpec {
  std::string name;        // without the leading "--"
  bool takes_value = true;
  bool repeatable = false;
  std::string help;
  std::string default_text;   // "" when none; help_text shows it as "(default X)"
};

struct CommandSpec {
  std::string name;        // "run", "golden check", ...
  std::string synopsis;    // one line: usage
  std::string description;
  std::vector<OptionSpec> options;
};

class Args {
 public:
  static Args parse(const CommandSpec& spec, const std::vector<std::string>& argv);

  bool help() const { return help_; }
  bool flag(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  std::vector<std::string> values(const std::string& name) const;
  int int_value_or(const std::string& name, int fallback) const;
  double double_value_or(const std::string& name, double fallback) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  std::string command_;
  bool help_ = false;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positionals_;
};

std::string help_text(const CommandSpec& spec);

}  // namespace muoncheck::cli
