#include "harness/views/junit.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "harness/views/report_fields.hpp"

namespace muoncheck {

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') break;   // not allowed in XML 1.0
        out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {

using views::str;

// A count or time that may be absent reads as 0.
double num(const nlohmann::json& j, const char* key) {
  const double x = views::number(j, key);
  return std::isnan(x) ? 0.0 : x;
}

// xs:decimal: fixed notation, never an exponent.
std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s > 0 && s < 1e12 ? s : 0.0);
  return buf;
}

struct Case {
  std::string classname, name, outcome, message, detail;   // outcome: pass | failure | skipped
  double seconds = 0.0;
};

struct Suite {
  std::string name;
  double seconds = 0.0;
  std::vector<Case> cases;
  int count(const std::string& outcome) const {
    int n = 0;
    for (const auto& c : cases) n += c.outcome == outcome;
    return n;
  }
};

Suite scenario_suite(const nlohmann::json& s) {
  Suite suite{str(s, "scenario"), num(s, "wall_seconds"), {}};
  const auto repro = s.value("repro", nlohmann::json::array());
  for (const auto& inv : s.value("invariants", nlohmann::json::array())) {
    Case c{suite.name, str(inv, "id"), "pass", "", "", 0.0};
    const std::string status = str(inv, "status");
    if (status == "FAIL") {
      c.outcome = "failure";
      c.message = str(inv, "message");
      std::string line;
      for (const auto& r : repro)
        if (r.is_string() && r.get<std::string>().find("--invariant " + c.name) != std::string::npos) line = r;
      c.detail = c.message + (line.empty() ? "" : "\nrepro: " + line);
    } else if (status == "SKIPPED" || status == "UNSUPPORTED" || status == "INCONCLUSIVE") {
      c.outcome = "skipped";   // INCONCLUSIVE: its message gives the reason and the figure that decided it
      c.message = status + ": " + str(inv, "message");
    }
    suite.cases.push_back(c);
  }
  return suite;
}

void write_suite(std::ostringstream& out, const Suite& s) {
  out << "  <testsuite name=\"" << xml_escape(s.name) << "\" tests=\"" << s.cases.size() << "\" failures=\""
      << s.count("failure") << "\" errors=\"0\" skipped=\"" << s.count("skipped") << "\" time=\"" << seconds_text(s.seconds) << "\">\n";
  for (const auto& c : s.cases) {
    out << "    <testcase classname=\"" << xml_escape(c.classname) << "\" name=\"" << xml_escape(c.name) << "\" time=\""
        << seconds_text(c.seconds) << "\"";
    if (c.outcome == "pass") {
      out << "/>\n";
      continue;
    }
    out << ">\n";
    if (c.outcome == "failure")
      out << "      <failure message=\"" << xml_escape(c.message) << "\" type=\"" << xml_escape(c.name) << "\">"
          << xml_escape(c.detail) << "</failure>\n";
    else
      out << "      <skipped message=\"" << xml_escape(c.message) << "\"/>\n";
    out << "    </testcase>\n";
  }
  out << "  </testsuite>\n";
}

}  // namespace

std::string junit_xml(const nlohmann::json& report) {
  std::vector<Suite> suites;
  for (const auto& s : report.value("scenarios", nlohmann::json::array())) suites.push_back(scenario_suite(s));
  if (const auto golden = report.value("golden", nlohmann::json::array()); !golden.empty()) {
    Suite g{"golden", 0.0, {}};
    for (const auto& x : golden) {
      Case c{"golden", str(x, "scenario"), str(x, "status") == "PASS" ? "pass" : "failure", str(x, "message"), "", 0.0};
      c.detail = c.message + "\nrepro: muoncheck golden check " + c.name;
      g.cases.push_back(c);
    }
    suites.push_back(g);
  }
  if (const auto* mutants = views::mutants_of(report)) {
    Suite m{"mutants", num(*mutants, "seconds"), {}};
    for (const auto& f : mutants->value("faults", nlohmann::json::array())) {
      const std::string status = str(f, "status");
      Case c{"mutants", str(f, "fault"), status == "KILLED" ? "pass" : "failure", "fault " + status, "", num(f, "seconds")};
      c.detail = "the fault " + c.name + " is " + status + " (no symptom invariant failed)\nrepro: muoncheck mutants --fault " + c.name;
      m.cases.push_back(c);
    }
    suites.push_back(m);
  }
  if (const auto* sweep = views::sweep_of(report)) {
    // One case for the sweep's verdict (a failure whenever the sweep exited 1), then one per
    // finding: a defect or case not explained as known is a failure, a known one is skipped.
    Suite w{"sweep", num(*sweep, "seconds"), {}};
    const std::string impl = str(*sweep, "impl");
    const auto findings = views::sweep_findings(*sweep);
    Case c{"sweep", (impl.empty() ? "" : impl + " ") + "seed " + std::to_string(sweep->value("seed", 0)) + ", " +
                        std::to_string(sweep->value("cases_run", 0)) + " cases",
           "pass", "", "", num(*sweep, "seconds")};
    if (views::sweep_failed(*sweep)) {
      int unexplained = 0;
      for (const auto& f : findings) unexplained += !f.known;
      c.outcome = "failure";
      c.message = std::to_string(unexplained) + " finding" + (unexplained == 1 ? "" : "s") + " not explained by a known defect";
      c.detail = c.message;
      for (const auto& p : sweep->value("coverage_problems", nlohmann::json::array()))
        if (p.is_string()) c.detail += "\nnot OK: " + p.get<std::string>();
    }
    w.cases.push_back(c);
    for (const auto& f : findings) {
      Case d{"sweep", f.title, f.known ? "skipped" : "failure", f.message, "", 0.0};
      if (f.known) d.message = "known defect: " + f.attribution + " (" + f.message + ")";
      d.detail = f.message + (f.attribution.empty() ? "" : "\nattribution: " + f.attribution) +
                 (f.repro.empty() ? "" : "\nrepro: " + f.repro) + (f.regenerate.empty() ? "" : "\nregenerate: " + f.regenerate);
      w.cases.push_back(d);
    }
    suites.push_back(w);
  }

  size_t tests = 0;
  int failures = 0, skipped = 0;
  double seconds = 0.0;
  for (const auto& s : suites) tests += s.cases.size(), failures += s.count("failure"), skipped += s.count("skipped"), seconds += s.seconds;
  const auto& meta = report.value("metadata", nlohmann::json::object());
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"muoncheck " << xml_escape(str(meta, "command").empty() ? str(report, "command") : str(meta, "command"))
      << "\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\"" << skipped << "\" time=\""
      << seconds_text(seconds) << "\">\n";
  for (const auto& s : suites) write_suite(out, s);
  out << "</testsuites>\n";
  return out.str();
}

}  // namespace muoncheck
