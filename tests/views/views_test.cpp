// The report's other views: JUnit XML, the Markdown summary, the HTML page and the diff of two
// reports, on synthetic reports whose every verdict is known.
#include <gtest/gtest.h>

#include <algorithm>

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
  EXPECT_NE(xml.find("name=\"sweep\" tests=\"2\" failures=\"2\""), std::string::npos) << xml;   // the verdict and the case
}

// The record `sweep --impl NAME --json` writes (the same shape as our own sweep's): a defect with
// its attribution, a case left unshrunk, and the verdict the exit code gave.
json impl_sweep_record(bool known) {
  json attribution = known ? json{{"verdict", "explained"}, {"known", true}, {"text", "known defect ds-clip: conforms with its fix"}}
                           : json{{"verdict", "new"}, {"known", false}, {"text", "NEW: still fails with every applicable fix (ds-clip)"}};
  return {{"command", "sweep"}, {"impl", "deepspeed=0.19.8"}, {"seed", 3}, {"cases_run", 40}, {"seconds", 12.0},
          {"ok", known}, {"failing_cases", 3},
          {"defects", json::array({{{"occurrences", 2}, {"message", "trajectory-conforms: momentum off by 256x"},
                                    {"repro", "muoncheck repro reports/cases/c7.json --for deepspeed"}, {"attribution", attribution}}})},
          {"failures", json::array({{{"case", 7}, {"defect", 1}, {"message", "x"}, {"attribution", attribution}},
                                    {{"case", 9}, {"defect", 1}, {"message", "x"}, {"attribution", attribution}},
                                    {{"case", 31}, {"defect", nullptr}, {"message", "ns-once-per-matrix-per-step: 2 NS calls"},
                                     {"repro", "muoncheck repro reports/cases/c31.json --for deepspeed"}, {"attribution", attribution}}})},
          {"known_defect_problems", json::array()}};
}

TEST(SweepRecord, AFailingImplementationSweepIsAFailureInEveryView) {
  const json r = impl_sweep_record(false);
  const std::string xml = junit_xml(r);
  EXPECT_NE(xml.find("<testsuites name=\"muoncheck sweep\" tests=\"3\" failures=\"3\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("attribution: NEW: still fails"), std::string::npos) << xml;
  EXPECT_NE(xml.find("repro: muoncheck repro reports/cases/c31.json --for deepspeed"), std::string::npos) << xml;
  const std::string md = summary_markdown(r);
  EXPECT_NE(md.find("### Sweep --impl deepspeed=0.19.8"), std::string::npos) << md;
  EXPECT_NE(md.find("FAILED"), std::string::npos) << md;
  EXPECT_NE(md.find("momentum off by 256x"), std::string::npos) << "names the defect: " << md;
  EXPECT_NE(md.find("case 31 (not shrunk)"), std::string::npos) << md;
  EXPECT_NE(md.find("NEW: still fails with every applicable fix"), std::string::npos) << md;
  EXPECT_EQ(md.find("clean"), std::string::npos) << md;
  const std::string html = html_report(r);
  EXPECT_NE(html.find("class=\"FAIL\">FAILED"), std::string::npos) << html;
  EXPECT_NE(html.find("momentum off by 256x"), std::string::npos);
  // Not OK now and OK before: a regression in the diff; the same findings again are none.
  json clean = r;
  clean["ok"] = true, clean["defects"] = json::array(), clean["failures"] = json::array();
  const auto d = diff_reports(clean, r);
  ASSERT_EQ(d.regressions.size(), 2u) << "the defect and the unshrunk case";
  EXPECT_TRUE(std::any_of(d.regressions.begin(), d.regressions.end(),
                          [](const std::string& x) { return x.find("defect 1 (2 cases)") != std::string::npos &&
                                                            x.find("momentum off by 256x") != std::string::npos; }));
  EXPECT_FALSE(diff_reports(r, r).regressed());
  EXPECT_FALSE(diff_reports(r, clean).regressed());
}

TEST(SweepRecord, FailuresExplainedAsKnownAreReportedNotFailed) {
  const json r = impl_sweep_record(true);
  const std::string xml = junit_xml(r);
  EXPECT_NE(xml.find("tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"2\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"known defect: known defect ds-clip"), std::string::npos) << xml;
  EXPECT_NE(summary_markdown(r).find("only known defects"), std::string::npos) << summary_markdown(r);
  EXPECT_NE(html_report(r).find("only known defects"), std::string::npos);
  // Still a failure where the record says the run was not OK (a known-defect problem).
  json stale = r;
  stale["ok"] = false;
  stale["known_defect_problems"] = json::array({"known defect ds-clip no longer reproduces on 0.19.9"});
  EXPECT_NE(junit_xml(stale).find("no longer reproduces"), std::string::npos);
  EXPECT_NE(junit_xml(stale).find("<testsuites name=\"muoncheck sweep\" tests=\"4\" failures=\"2\""), std::string::npos) << junit_xml(stale);
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
