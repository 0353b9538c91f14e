// MUONCHECK_RC_PROP(Suite, Name, cases): RC_GTEST_PROP with its own case count, for
// properties whose every case runs the implementation and the oracles (seconds, not
// microseconds). RC_PARAMS still applies: its seed and reproduce= strings are honoured,
// and an explicit max_success there overrides the bound.
#pragma once
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/detail/TestListenerAdapter.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace muoncheck::testing {

template <typename Testable>
void check_bounded(Testable&& testable, int cases) {
  using namespace rc::detail;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  TestParams params = configuration().testParams;
  const char* env = std::getenv("RC_PARAMS");
  if (env == nullptr || std::string(env).find("max_success") == std::string::npos) params.maxSuccess = cases;
  TestListenerAdapter quiet;
  const auto result = checkProperty(toProperty(std::forward<Testable>(testable)), metadata, params, quiet,
                                    configuration().reproduce);
  if (!result.template is<SuccessResult>()) {
    std::ostringstream ss;
    printResultMessage(result, ss);
    FAIL() << ss.str();
  }
}

}  // namespace muoncheck::testing

#define MUONCHECK_RC_PROP(Suite, Name, Cases)                                                  \
  void muoncheck_prop_##Suite##_##Name();                                                      \
  TEST(Suite, Name) { ::muoncheck::testing::check_bounded(&muoncheck_prop_##Suite##_##Name, Cases); } \
  void muoncheck_prop_##Suite##_##Name()
