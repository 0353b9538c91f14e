// The report's other views: JUnit XML, the Markdown summary, the HTML page and the diff of two
// reports, on synthetic reports whose every verdict is known.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/views/html_report.hpp"
#include "harness/views/junit.hpp"
#include "harness/views/report_diff.hpp"
#include "harness/views/summary_markdown.hpp"

namespace muoncheck {
namespace {

using nlohmann::json;

json verdict(const std::string& id, const std::string& status, double metric, double threshold, const std::string& msg = "m") {
  return {{"id", id}, {"status", status}, {"metric", metric}, {"threshold", threshold}, {"message", msg}};
}

json scenario(const std::string& name, json invariants, json repro = json::array()) {
  json steps = json::array();
  for (int t = 0; t < 3; ++t)
    steps.push_back({{"step", t}, {"loss", 1.0 - 0.1 * t}, {"exact_loss", 1.0 - 0.1 * t}, {"error_vs_oracle", 1e-6 * (t + 1)},
                     {"control_error", 2e-6 * (t + 1)}});
  return {{"scenario", name}, {"wall_seconds", 1.5}, {"invariants", invariants}, {"repro", repro}, {"steps", steps}};
}

json report(json scenarios, json extra = json::object()) {
  json r = {{"schema", "muoncheck-report/1"},
            {"metadata", {{"command", "check"}, {"backend", "cpu+gloo"}, {"git_commit", "abc"}, {"time", "t"}, {"host", "h"}}},
            {"scenarios", scenarios},
            {"golden", json::array()},
            {"repro", json::array()},
            {"summary", {{"ok", true}, {"scenarios", scenarios.size()}, {"pass", 1}, {"fail", 0}, {"executed", 1}, {"verdicts", 1}}}};
  r.update(extra);
  return r;
}

TEST(Junit, FailuresCarryMessageAndReproSkipsAreSkipped) {
  const auto r = report(json::array({scenario("a", json::array({verdict("trajectory-conforms", "FAIL", 3, 1, "err <3> & \"q\""),
                                                                 verdict("tagging-matches", "PASS", 0, 0),
                                                                 verdict("overflow-skip-clean", "SKIPPED", 0, 0, "no overflow")}),
                                                    json::array({"muoncheck run a --invariant trajectory-conforms"}))}));
  const std::string xml = junit_xml(r);
  EXPECT_NE(xml.find("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"err &lt;3&gt; &amp; &quot;q&quot;\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("repro: muoncheck run a --invariant trajectory-conforms"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"SKIPPED: no overflow\"/>"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("time=\"1.5\""), std::string::npos) << "times are fixed-point with 3 decimals";
  EXPECT_NE(xml.find("time=\"1.500\""), std::string::npos);
}

TEST(Junit, MutantsSurvivingAndSweepCounterexampleAreFailures) {
  const auto r = report(json::array(), {{"mutants", {{"faults", json::array({{{"fault", "f1"}, {"status", "KILLED"}},
                                                                              {{"fault", "f2"}, {"status", "SURVIVED"}}})}}},
                                        {"sweep", {{"seed", 2}, {"cases_run", 10}, {"failure", {{"message", "boom"}, {"repro", "muoncheck run x.json"}}}}}});
  const std::string xml = junit_xml(r);
  EXPECT_NE(xml.find("name=\"mutants\" tests=\"2\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("repro: muoncheck mutants --fault f2"), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"sweep\" tests=\"1\" failures=\"1\""), std::string::npos) << xml;
}

TEST(XmlEscape, DropsControlCharactersXmlForbids) {
  EXPECT_EQ(xml_escape(std::string("a\x01" "b\tc\n", 6)), "ab\tc\n");
  EXPECT_EQ(xml_escape("<&>'\""), "&lt;&amp;&gt;&apos;&quot;");
}

TEST(SummaryMarkdown, CountsFailuresAndRepro) {
  auto r = report(json::array({scenario("a", json::array({verdict("trajectory-conforms", "FAIL", 3, 1, "bad | worse")}))}));
  r["summary"]["ok"] = false;
  r["repro"] = json::array({"muoncheck run a --invariant trajectory-conforms"});
  const std::string md = summary_markdown(r);
  EXPECT_NE(md.find("## muoncheck check: FAILED"), std::string::npos) << md;
  EXPECT_NE(md.find("**a** trajectory-conforms: bad / worse"), std::string::npos) << md;   // a pipe would break the table
  EXPECT_NE(md.find("muoncheck run a --invariant trajectory-conforms"), std::string::npos) << md;
  EXPECT_NE(md.find("cpu+gloo"), std::string::npos);
}

TEST(Html, SelfContainedWithPlotsAndEscapedText) {
  const auto r = report(json::array({scenario("<a>", json::array({verdict("trajectory-conforms", "PASS", 0.1, 1)}))}),
                        {{"mutants", {{"killed", 1}, {"total", 1}, {"faults", json::array({{{"fault", "f1"}, {"status", "KILLED"}}})}}}});
  const std::string html = html_report(r);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));   // the SVG namespace is the only URL
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("&lt;a&gt;"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("<path d=\"M"), std::string::npos) << "each plot draws its series";
  EXPECT_NE(html.find("Mutants: 1 of 1 killed"), std::string::npos);
}

TEST(Html, IndexPutsFailuresFirstLinksEachFailToItsReproAndCollapsesPassing) {
  auto passing = scenario("a-pass", json::array({verdict("trajectory-conforms", "PASS", 0.1, 1)}));
  auto failing = scenario("b-fail", json::array({verdict("trajectory-conforms", "FAIL", 3, 1), verdict("tagging-matches", "PASS", 0, 0)}),
                          json::array({"muoncheck run b-fail.json --invariant trajectory-conforms"}));
  auto insensitive = scenario("c-insensitive", json::array({verdict("step-conforms", "PASS", 0.5, 1)}));
  insensitive["sensitivity"] = {{"band_over_update", 0.42}, {"where", "step-conforms at step 1"}, {"insensitive", true}};
  auto inconclusive = scenario("d-inconclusive", json::array({verdict("step-conforms", "INCONCLUSIVE", NAN, NAN)}));
  inconclusive["notes"] = json::array({"NOTE: 1 verdict INCONCLUSIVE (step-conforms): spread 2 of an update"});
  for (auto& st : failing["steps"]) st["band"] = 4 * st["control_error"].get<double>();
  auto r = report(json::array({passing, failing, insensitive, inconclusive}));
  r["golden"] = json::array({{{"scenario", "a-pass"}, {"status", "PASS"}, {"message", ""}}});
  const std::string html = html_report(r);
  const auto index = html.find("<table class=\"index\">"), index_end = html.find("</table>", index);
  ASSERT_NE(index, std::string::npos) << html;
  const auto row = [&](const std::string& name) { return html.find("href=\"#s-" + name + "\"", index); };
  EXPECT_LT(row("b-fail"), row("c-insensitive")) << "failures first";
  EXPECT_LT(row("c-insensitive"), row("a-pass")) << "INSENSITIVE and INCONCLUSIVE before passing";
  EXPECT_LT(row("d-inconclusive"), row("a-pass"));
  EXPECT_LT(row("a-pass"), index_end);
  const auto fail_row = row("b-fail");
  EXPECT_LT(html.find("<td>3 trajectory-conforms</td>", fail_row), html.find("</tr>", fail_row)) << "worst ratio, named";
  EXPECT_NE(html.find("0.42 <span class=\"INSENSITIVE\">INSENSITIVE</span>", index), std::string::npos);
  // The FAIL row links to the repro line, which carries that anchor.
  EXPECT_NE(html.find("<a href=\"#repro-b-fail-trajectory-conforms\""), std::string::npos) << html;
  EXPECT_NE(html.find("id=\"repro-b-fail-trajectory-conforms\"><code>muoncheck run b-fail.json --invariant trajectory-conforms"),
            std::string::npos) << html;
  // Failing open, passing collapsed; every section after the index, failing first.
  EXPECT_NE(html.find("<section id=\"s-b-fail\">"), std::string::npos);
  EXPECT_NE(html.find("<details id=\"s-a-pass\">"), std::string::npos);
  EXPECT_NE(html.find("<details id=\"s-c-insensitive\">"), std::string::npos) << "passing, with a warning: collapsed too";
  EXPECT_LT(html.find("id=\"s-b-fail\""), html.find("id=\"s-a-pass\""));
  // The console's notes.
  EXPECT_NE(html.find("Insensitive scenarios (1: a bug that changes an update by less than the band can pass)"), std::string::npos);
  EXPECT_NE(html.find("Inconclusive scenarios (1: neither OK nor FAIL"), std::string::npos);
  EXPECT_NE(html.find("NOTE: 1 verdict INCONCLUSIVE (step-conforms)"), std::string::npos);
  // The band is drawn (a filled area) where the report gives one, and only there.
  const auto failing_section = html.find("<section id=\"s-b-fail\">");
  EXPECT_NE(html.find("fill-opacity=\"0.15\"", failing_section), std::string::npos) << "the band on the error plot";
  EXPECT_EQ(html.find("fill-opacity=\"0.15\""), html.find("fill-opacity=\"0.15\"", failing_section)) << "no band where none was given";
}

TEST(SvgPlot, LogAxisLeavesGapsForNonPositiveValues) {
  const std::string svg = svg_plot("t", {{"s", "#000", {1e-3, 0.0, 1e-1}}}, true);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), 'M'), 2) << svg;   // two pieces: the zero is a gap
  EXPECT_NE(svg_plot("t", {{"s", "#000", {NAN}}}, false).find("no data"), std::string::npos);
}

TEST(Diff, RegressionsAndImprovements) {
  const auto old_r = report(json::array({scenario("a", json::array({verdict("trajectory-conforms", "PASS", 0.3, 1),
                                                                       verdict("step-conforms", "PASS", 0.1, 1),
                                                                       verdict("tagging-matches", "FAIL", 1, 0),
                                                                       verdict("gas-invariant", "PASS", 0.2, 1),
                                                                       verdict("dp-invariant", "SKIPPED", 0, 0)})),
                                         scenario("gone", json::array({verdict("trajectory-conforms", "PASS", 0.1, 1)}))}),
                            {{"mutants", {{"faults", json::array({{{"fault", "f1"}, {"status", "KILLED"}}})}}}});
  const auto new_r = report(json::array({scenario("a", json::array({verdict("trajectory-conforms", "PASS", 0.9, 1),   // 3x, above 0.5
                                                                       verdict("step-conforms", "PASS", 0.3, 1),         // 3x, below 0.5
                                                                       verdict("tagging-matches", "PASS", 0, 0),
                                                                       verdict("gas-invariant", "SKIPPED", 0, 0),
                                                                       verdict("dp-invariant", "PASS", 0.1, 1)}))}),
                            {{"mutants", {{"faults", json::array({{{"fault", "f1"}, {"status", "SURVIVED"}}})}}}});
  const auto d = diff_reports(old_r, new_r);
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    for (const auto& x : v)
      if (x.find(s) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has(d.regressions, "gone: scenario missing"));
  EXPECT_TRUE(has(d.regressions, "a trajectory-conforms: ratio to the band 0.3 -> 0.9"));
  EXPECT_FALSE(has(d.regressions, "step-conforms"));
  EXPECT_TRUE(has(d.regressions, "a gas-invariant: PASS -> SKIPPED"));
  EXPECT_TRUE(has(d.regressions, "mutant f1: KILLED -> SURVIVED"));
  EXPECT_TRUE(has(d.improvements, "a tagging-matches: FAIL -> PASS"));
  EXPECT_TRUE(has(d.improvements, "a dp-invariant: SKIPPED -> PASS"));
  EXPECT_EQ(d.regressions.size(), 4u);
  EXPECT_FALSE(diff_reports(old_r, old_r).regressed());
  auto worse = old_r;
  worse["scenarios"][0]["invariants"][1]["status"] = "FAIL";
  EXPECT_TRUE(has(diff_reports(old_r, worse).regressions, "a step-conforms: PASS -> FAIL"));
}

}  // namespace
}  // namespace muoncheck
