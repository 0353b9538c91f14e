#include "harness/noise_options.hpp"

#include <string>

#include "core/error.hpp"
#include "oracle/control_ensemble.hpp"

namespace muoncheck {

cli::OptionSpec control_members_option() {
  return {"control-members", true, false,
          "size K of the control ensemble (valid rounding sequences) that sets every noise band (default " +
              std::to_string(oracle::kDefaultControlMembers) + ")"};
}

int control_members_from(const cli::Args& args, int min) {
  const int k = args.int_value_or("control-members", oracle::kDefaultControlMembers);
  if (k < min || k > 64)
    throw Error(ErrorKind::Usage, "--control-members expects an integer in [" + std::to_string(min) + ", 64], got " +
                                      std::to_string(k));
  return k;
}

}  // namespace muoncheck
