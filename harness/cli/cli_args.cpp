#include "harness/cli/cli_args.hpp"

#include <sstream>

#include "core/error.hpp"

namespace muoncheck::cli {

namespace {

Error usage(const CommandSpec& spec, const std::string& what) {
  return Error(ErrorKind::Usage, "muoncheck " + spec.name + ": " + what + " (see muoncheck " + spec.name + " --help)");
}

// The value of --name read whole by `parse` (std::stoi, std::stod), `fallback` when not given,
// else a Usage error that says what it `expects`.
template <class T, class Parse>
T number_or(const std::string& command, const std::string& name, const std::optional<std::string>& value, T fallback,
            Parse parse, const char* expects) {
  if (!value) return fallback;
  try {
    size_t used = 0;
    const T x = parse(*value, &used);
    if (used == value->size()) return x;
  } catch (...) {
  }
  throw Error(ErrorKind::Usage, "muoncheck " + command + ": --" + name + " expects " + expects + ", got \"" + *value + "\"");
}

const OptionSpec* find(const CommandSpec& spec, const std::string& name) {
  for (const auto& o : spec.options)
    if (o.name == name) return &o;
  return nullptr;
}

}  // namespace

Args Args::parse(const CommandSpec& spec, const std::vector<std::string>& argv) {
  Args a;
  a.command_ = spec.name;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      a.help_ = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      a.positionals_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    const OptionSpec* o = find(spec, name);
    if (!o) throw usage(spec, "unknown option --" + name);
    if (o->takes_value && !inline_value) {
      if (i + 1 >= argv.size()) throw usage(spec, "--" + name + " needs a value");
      value = argv[++i];
    }
    if (!o->takes_value && inline_value) throw usage(spec, "--" + name + " takes no value");
    if (!o->repeatable && a.values_.count(name)) throw usage(spec, "--" + name + " given twice");
    a.values_[name].push_back(value);
  }
  return a;
}

std::optional<std::string> Args::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::string Args::value_or(const std::string& name, const std::string& fallback) const {
  return value(name).value_or(fallback);
}

std::vector<std::string> Args::values(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

int Args::int_value_or(const std::string& name, int fallback) const {
  const auto parse = [](const std::string& text, size_t* used) { return std::stoi(text, used); };
  return number_or<int>(command_, name, value(name), fallback, parse, "an integer");
}

double Args::double_value_or(const std::string& name, double fallback) const {
  const auto parse = [](const std::string& text, size_t* used) { return std::stod(text, used); };
  return number_or<double>(command_, name, value(name), fallback, parse, "a number");
}

std::string help_text(const CommandSpec& spec) {
  std::ostringstream out;
  out << "usage: " << spec.synopsis << "\n\n" << spec.description << "\n";
  if (!spec.options.empty()) out << "\noptions:\n";
  for (const auto& o : spec.options) {
    std::string left = "  --" + o.name + (o.takes_value ? " VALUE" : "");
    if (left.size() < 28) left.resize(28, ' ');
    out << left << " " << o.help << (o.default_text.empty() ? "" : " (default " + o.default_text + ")")
        << (o.repeatable ? " (repeatable)" : "") << "\n";
  }
  out << "  --help                       this text\n";
  return out.str();
}

}  // namespace muoncheck::cli
