// docs/invariants.md's "What each invariant reads" table is the invariant table's: the same
// ids in the same order, each with the parts it reads and the variant runs it compares against.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "properties/invariant_table.hpp"

namespace muoncheck {
namespace {

std::string joined(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs) out += (out.empty() ? "" : ", ") + x;
  return out.empty() ? "—" : out;
}

std::string row_text(const InvariantRow& row) {
  std::vector<std::string> needs, variants;
  for (const auto p : row.needs) needs.push_back(part_name(p));
  for (const auto k : row.variants) variants.push_back(variant_kind_name(k));
  return "| `" + row.id + "` | " + joined(needs) + " | " + joined(variants) + " |";
}

TEST(InvariantTableDoc, DocsListTheTableAsTheCodeHasIt) {
  std::ifstream in("docs/invariants.md");
  ASSERT_TRUE(in) << "run from the source root";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto begin = doc.find("<!-- invariant-table: begin -->");
  const auto end = doc.find("<!-- invariant-table: end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  std::string want = "<!-- invariant-table: begin -->\n| id | reads | variant runs |\n|---|---|---|\n";
  for (const auto& row : invariant_table()) want += row_text(row) + "\n";
  EXPECT_EQ(doc.substr(begin, end - begin), want);
}

TEST(InvariantTable, EveryRowHasAFunctionAndAUniqueId) {
  std::set<std::string> ids;
  for (const auto& row : invariant_table()) {
    EXPECT_NE(row.judge, nullptr) << row.id;
    EXPECT_TRUE(ids.insert(row.id).second) << row.id;
    EXPECT_EQ(find_invariant(row.id), &row);
  }
  EXPECT_EQ(find_invariant("no-such-invariant"), nullptr);
}

}  // namespace
}  // namespace muoncheck
