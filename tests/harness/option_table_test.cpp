// The one option table (harness/cli/option_table.hpp): every command's options come from it
// entry by entry, no two entries collide, an unknown key is an Internal error, and the
// options several commands share parse and default the same way in each.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <set>
#include <string>
#include <sys/wait.h>

#include "core/error.hpp"
#include "harness/sweep/sweep_runner.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "impl/faults/fault_catalogue.hpp"
#include "run_muoncheck.hpp"

namespace muoncheck {
namespace {

bool same(const cli::OptionSpec& a, const cli::OptionSpec& b) {
  return a.name == b.name && a.takes_value == b.takes_value && a.repeatable == b.repeatable && a.help == b.help &&
         a.default_text == b.default_text;
}

const Command& command(const std::string& name) {
  static const auto all = all_commands();
  for (const auto& c : all)
    if (c.spec.name == name) return c;
  throw std::runtime_error("no command " + name);
}

using Run = testing::RunResult;
Run run_binary(const std::string& args) { return testing::run_muoncheck(args); }

TEST(OptionTable, EveryCommandsOptionsComeFromTheTable) {
  const auto commands = all_commands();
  ASSERT_EQ(commands.size(), 17u);
  for (const auto& c : commands) {
    std::set<std::string> names;
    for (const auto& o : c.spec.options) {
      EXPECT_TRUE(names.insert(o.name).second) << c.spec.name << ": --" << o.name << " twice";
      int matches = 0;
      for (const auto& e : option_table()) matches += same(e.spec, o);
      EXPECT_EQ(matches, 1) << c.spec.name << ": --" << o.name << " (\"" << o.help << "\") is not one table entry";
    }
  }
}

TEST(OptionTable, NoTwoEntriesShareAKeyAndNamesAreSharedOnlyByDeclaredVariants) {
  std::set<std::string> keys;
  for (const auto& e : option_table()) {
    EXPECT_TRUE(keys.insert(e.key).second) << "key \"" << e.key << "\" twice";
    // A name is shared only by entries keyed "NAME/VARIANT": the key says which meaning it is.
    EXPECT_EQ(e.spec.name, e.key.substr(0, e.key.find('/'))) << e.key;
    EXPECT_FALSE(e.spec.help.empty()) << e.key;
    EXPECT_EQ(e.spec.help.find("(default"), std::string::npos) << e.key << ": the default belongs in default_text";
    if (!e.spec.takes_value) EXPECT_TRUE(e.spec.default_text.empty()) << e.key;
  }
  for (size_t i = 0; i < option_table().size(); ++i)
    for (size_t j = i + 1; j < option_table().size(); ++j)
      EXPECT_FALSE(same(option_table()[i].spec, option_table()[j].spec))
          << option_table()[i].key << " and " << option_table()[j].key << " are one option twice";
}

// One meaning per option name: every entry of a name takes a value or none alike, repeats alike,
// and names a folder or a file alike (`--out FILE` everywhere, `--out-dir DIR` for a folder).
std::vector<std::string> meaning_conflicts(const std::vector<OptionEntry>& table) {
  const auto folder = [](const cli::OptionSpec& o) {
    return o.help.find("folder") != std::string::npos || o.help.find("FOLDER") != std::string::npos ||
           o.help.find("DIR") != std::string::npos;
  };
  std::vector<std::string> out;
  for (size_t i = 0; i < table.size(); ++i)
    for (size_t j = i + 1; j < table.size(); ++j) {
      const auto& a = table[i].spec;
      const auto& b = table[j].spec;
      if (a.name != b.name) continue;
      if (a.takes_value != b.takes_value || a.repeatable != b.repeatable || (a.takes_value && folder(a) != folder(b)))
        out.push_back(table[i].key + " / " + table[j].key);
    }
  return out;
}

TEST(OptionTable, EachNameMeansOneThingInEveryCommand) {
  EXPECT_EQ(meaning_conflicts(option_table()), std::vector<std::string>{});
  // Planted: --json as a FILE in one command and a switch in another, --out as a file and a folder.
  const std::vector<OptionEntry> planted = {
      {"json/file", {"json", true, false, "write JSON to FILE", ""}},
      {"json/print", {"json", false, false, "print JSON", ""}},
      {"out/file", {"out", true, false, "write to FILE", ""}},
      {"out/dir", {"out", true, false, "the folder to write into", ""}}};
  EXPECT_EQ(meaning_conflicts(planted), (std::vector<std::string>{"json/file / json/print", "out/file / out/dir"}));
}

TEST(OptionTable, AnUnknownKeyOrANameTwiceIsAnInternalError) {
  for (const std::vector<std::string>& keys : {std::vector<std::string>{"no-such-option"},
                                               std::vector<std::string>{"fault", "seeds"},
                                               std::vector<std::string>{"report", "report/check"},
                                               std::vector<std::string>{"report", "report"}}) {
    try {
      options(keys);
      ADD_FAILURE() << "accepted " << keys.back();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Internal) << e.what();
    }
  }
  EXPECT_EQ(options({"fault", "mode"}).size(), 2u);
}

TEST(OptionTable, ANegativeSeedIsAUsageErrorInSweepAndNightly) {
  for (const char* name : {"sweep", "nightly"}) {
    for (const std::vector<std::string>& argv : {std::vector<std::string>{"--seed", "-1"},
                                                 std::vector<std::string>{"--seed=-1"}}) {
      const auto& c = command(name);
      try {
        c.run(cli::Args::parse(c.spec, argv));   // parsed before any work: returns at once
        ADD_FAILURE() << name << " accepted --seed -1";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage) << name << ": " << e.what();
        EXPECT_NE(std::string(e.what()).find("--seed"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("\"-1\""), std::string::npos) << e.what();
      }
    }
    const auto r = run_binary(std::string(name) + " --seed -1");
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.output;
    EXPECT_NE(r.output.find("usage: --seed expects a non-negative integer"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("got \"-1\""), std::string::npos) << r.output;
  }
}

// --workers: only with --impl, in [1, 16]; both checked before any worker starts.
TEST(OptionTable, WorkersNeedImplAndAreBetweenOneAndSixteenInSweepAndNightly) {
  const auto usage = [](const std::string& name, const std::vector<std::string>& argv, const std::string& says) {
    const auto& c = command(name);
    try {
      c.run(cli::Args::parse(c.spec, argv));
      ADD_FAILURE() << name << " accepted " << argv.back();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << name << ": " << e.what();
    }
  };
  for (const char* name : {"sweep", "nightly"}) {
    usage(name, {"--workers", "2"}, "--workers needs --impl");
    for (const char* bad : {"0", "17", "-1", "two"})
      usage(name, {"--impl", "deepspeed", "--workers", bad}, "--workers expects an integer in [1, 16], got \"" + std::string(bad) + "\"");
  }
  EXPECT_EQ(workers_from(cli::Args::parse(command("sweep").spec, {})), 1);
  EXPECT_EQ(workers_from(cli::Args::parse(command("nightly").spec, {"--workers", "16"})), 16);
  const auto r = run_binary("sweep --workers 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(OptionTable, NightlySeedDefaultsToTheUtcDate) {
  const auto& c = command("nightly");
  const auto drawn = seed_from(cli::Args::parse(c.spec, {}), "seed/nightly");
  EXPECT_GE(drawn, 20260101u);   // YYYYMMDD
  EXPECT_LE(drawn, 99991231u);
  EXPECT_EQ(seed_from(cli::Args::parse(c.spec, {"--seed", "date"}), "seed/nightly"), drawn);
  EXPECT_EQ(seed_from(cli::Args::parse(c.spec, {"--seed", "42"}), "seed/nightly"), 42u);
  const auto& sweep = command("sweep");
  EXPECT_THROW(seed_from(cli::Args::parse(sweep.spec, {"--seed", "date"})), Error);   // only the nightly draws one
}

TEST(OptionTable, TimeoutDefaultIsTheSameForEveryCommand) {
  int commands_with_timeout = 0;
  for (const auto& c : all_commands())
    for (const auto& o : c.spec.options)
      if (o.name == "timeout-ms") {
        ++commands_with_timeout;
        EXPECT_EQ(o.default_text, "60000") << c.spec.name;
      }
  EXPECT_GE(commands_with_timeout, 5);   // run, check, mutants, nightly, sweep
  const cli::CommandSpec spec{"t", "", "", options({"timeout-ms"})};
  EXPECT_EQ(timeout_from(cli::Args::parse(spec, {})), std::chrono::milliseconds(60000));
  EXPECT_EQ(JudgeOptions{}.timeout, std::chrono::milliseconds(60000));
  EXPECT_EQ(SweepOptions{}.timeout, std::chrono::milliseconds(60000));
  for (const char* bad : {"0", "-5", "1e3", "ten"}) {
    try {
      timeout_from(cli::Args::parse(spec, {"--timeout-ms", bad}));
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
      EXPECT_NE(std::string(e.what()).find("--timeout-ms"), std::string::npos) << e.what();
    }
  }
}

TEST(OptionTable, SharedParsersRejectBadValuesNamingTheOption) {
  const cli::CommandSpec spec{"t", "", "", options({"backend", "comm", "ns-kernel", "oracle-precision", "mode", "dp"})};
  const auto usage = [&](const std::vector<std::string>& argv, auto parse, const std::string& option) {
    try {
      parse(cli::Args::parse(spec, argv));
      ADD_FAILURE() << "accepted " << argv.back();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
      EXPECT_NE(std::string(e.what()).find("--" + option), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(argv.back()), std::string::npos) << e.what();
    }
  };
  usage({"--backend", "tpu"}, [](const cli::Args& a) { return backend_from(a); }, "backend");
  usage({"--comm", "mpi"}, [](const cli::Args& a) { return comm_from(a); }, "comm");
  usage({"--ns-kernel", "fast"}, [](const cli::Args& a) { return ns_kernel_from(a); }, "ns-kernel");
  usage({"--oracle-precision", "half"}, [](const cli::Args& a) { return precision_from(a); }, "oracle-precision");
  usage({"--mode", "all"}, [](const cli::Args& a) { return mode_from(a); }, "mode");
  usage({"--dp", "65"}, [](const cli::Args& a) { return dp_from(a); }, "dp");
  const auto none = cli::Args::parse(spec, {});
  EXPECT_EQ(backend_from(none), impl::ComputeBackend::cpu);
  EXPECT_EQ(comm_from(none), impl::CommBackend::gloo);
  EXPECT_EQ(ns_kernel_from(none), impl::NsKernel::by_shape);
  for (const auto k : {impl::NsKernel::by_shape, impl::NsKernel::resident, impl::NsKernel::gemms})
    EXPECT_EQ(ns_kernel_from(cli::Args::parse(spec, {"--ns-kernel", impl::ns_kernel_name(k)})), k);
  EXPECT_EQ(precision_from(none), oracle::Precision::float128);
  EXPECT_EQ(mode_from(none), CheckMode::both);
  EXPECT_EQ(dp_from(none), 0);
  // mutants' documented default: the double oracle unless --oracle-precision is given.
  const cli::CommandSpec mutants{"m", "", "", options({"oracle-precision/mutants"})};
  EXPECT_EQ(precision_from(cli::Args::parse(mutants, {}), "oracle-precision/mutants"), oracle::Precision::float64);
  EXPECT_EQ(precision_from(cli::Args::parse(mutants, {"--oracle-precision", "float128"}), "oracle-precision/mutants"),
            oracle::Precision::float128);
}

TEST(OptionTable, HelpListsEveryOptionWithItsHelpAndDefault) {
  for (const auto& c : all_commands()) {
    const auto r = run_binary(c.spec.name + " --help");
    EXPECT_EQ(r.exit_code, 0) << c.spec.name;
    EXPECT_EQ(r.output, cli::help_text(c.spec)) << c.spec.name;
    for (const auto& o : c.spec.options) {
      EXPECT_NE(r.output.find("--" + o.name), std::string::npos) << c.spec.name << " --" << o.name;
      EXPECT_NE(r.output.find(o.help), std::string::npos) << c.spec.name << " --" << o.name;
      if (!o.default_text.empty())
        EXPECT_NE(r.output.find(o.help + " (default " + o.default_text + ")"), std::string::npos)
            << c.spec.name << " --" << o.name << ":\n" << r.output;
    }
  }
}

// Help texts count the catalogue, never a number written by hand.
TEST(OptionTable, NightlyHelpCountsTheFaultCatalogue) {
  const std::string want = std::to_string(impl::fault_catalogue().size()) + " faults of the catalogue";
  const auto& help = command("nightly").spec.description;
  EXPECT_NE(help.find(want), std::string::npos) << help;
}

}  // namespace
}  // namespace muoncheck
