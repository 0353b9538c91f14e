// Bad input, the loader cases: each is a BadInput naming the file,
// the JSON path, what was expected and what was got (clipped) — never a crash, never an
// internal error, never an allocation of the input's claimed size.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/bounded_json.hpp"
#include "core/error.hpp"
#include "core/scenario_io.hpp"

namespace muoncheck {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string error_of_text(const std::string& text) {
  try {
    parse_scenario_text(text, "bad.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "loaded: " << text.substr(0, 200);
  return "";
}

std::string with_params(const std::string& shape) {
  return R"({"name": "t", "model": {"params": [{"name": "w", "shape": )" + shape + "}]}}";
}

TEST(BoundedInput, NestingSixtyThousandDeepIsBadInputNotAStackOverflow) {
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  EXPECT_THAT(error_of_text(R"({"name": "t", "model": )" + deep + "}"),
              AllOf(StartsWith("bad.json: at /model/0/0/"), HasSubstr("expected arrays and objects nested at most 64 deep")));
}

TEST(BoundedInput, NumberBeyondADoubleNamesFileAndPath) {
  EXPECT_THAT(error_of_text(R"({"name": "t", "optimizer": {"lr": 1e400}, "model": {"params": []}})"),
              AllOf(StartsWith("bad.json: at /optimizer/lr: expected a number within the range of a double"),
                    HasSubstr("got number 1e400")));
  EXPECT_THAT(error_of_text(with_params("[4, -1e400]")), StartsWith("bad.json: at /model/params/0/shape/1: expected a number"));
}

TEST(BoundedInput, NumberOverflowInAFileNamesTheFile) {
  const auto path = (std::filesystem::temp_directory_path() / "muoncheck-1e400.json").string();
  std::ofstream(path) << R"({"name": "muoncheck-1e400", "seed": 1e400, "model": {"params": [{"name": "w", "shape": [2]}]}})";
  try {
    load_scenario(path);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_THAT(e.what(), StartsWith(path + ": at /seed: expected a number within the range of a double"));
  }
  std::filesystem::remove(path);
}

TEST(BoundedInput, GiantShapesAreRejectedBeforeAnythingIsAllocated) {
  EXPECT_THAT(error_of_text(with_params("[1000000, 1000000]")),
              AllOf(StartsWith("bad.json: at /model/params/0/shape: expected a shape of at most 4194304 elements")));
  EXPECT_THAT(error_of_text(with_params("[2147483648, 2147483648]")),
              StartsWith("bad.json: at /model/params/0/shape/0: expected a positive integer dimension of at most 4194304"));
  // Four dims of 2^31 used to overflow the element count to 0 and load.
  EXPECT_THAT(error_of_text(with_params("[2147483648, 2147483648, 2147483648, 2147483648]")),
              StartsWith("bad.json: at /model/params/0/shape/0: expected a positive integer dimension"));
  EXPECT_THAT(error_of_text(with_params("[2048, 2048, 2048, 2048]")),
              StartsWith("bad.json: at /model/params/0/shape: expected a shape of at most 4194304 elements"));
  EXPECT_THAT(error_of_text(R"({"name": "t", "model": {"preset": "llama", "hidden": 65536}})"),
              AllOf(StartsWith("bad.json: at /model/preset: expected params of at most 4194304 elements each"),
                    HasSubstr("model.embed_tokens.weight")));
}

TEST(BoundedInput, AHundredThousandCharacterValueIsClippedInTheMessage) {
  const std::string name(100000, 'x');
  const auto e = error_of_text(R"({"name": ")" + name + R"(", "model": {"params": [{"name": "w", "shape": [2]}]}, ")" + name + R"(": 1})");
  EXPECT_THAT(e, AllOf(StartsWith("bad.json: at /"), HasSubstr("\u2026 (100"), HasSubstr("chars)")));
  EXPECT_LT(e.size(), 1000u) << e;   // not 200,000
}

TEST(BoundedInput, SyntaxErrorsAndEmptyFilesAreBadInputWithAPlace) {
  EXPECT_THAT(error_of_text(""), StartsWith("bad.json: at /: expected valid JSON, got line 1, column 1: unexpected end of input"));
  EXPECT_THAT(error_of_text(R"({"name": "t", "model": {"params": [{"name": "w", "sha)"),
              AllOf(StartsWith("bad.json: at /model/params/0"), HasSubstr("expected valid JSON, got line 1, column 54: ")));
}

TEST(BoundedInput, TooManyValuesIsBadInput) {
  std::string many = "[";
  for (int i = 0; i < (1 << 23) + 1; ++i) many += i ? ",0" : "0";
  many += "]";
  try {
    parse_json_bounded(many, "many.json");
    ADD_FAILURE() << "parsed";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("many.json: at /8388607: expected at most 8388608 JSON values in the file"));
  }
}

TEST(BoundedInput, JsonPointerEscapesKeysInPaths) {
  EXPECT_THAT(error_of_text(R"({"name": "t", "a/b~c": {"x": 1e999}})"), StartsWith("bad.json: at /a~1b~0c/x: expected a number"));
}

}  // namespace
}  // namespace muoncheck
