// JUnit XML from a muoncheck JSON report, for CI systems that read test results (GitLab,
// Jenkins, GitHub through a reporter action). One <testsuite> per scenario with one <testcase>
// per invariant (FAIL -> <failure> with the message and the repro line; SKIPPED/UNSUPPORTED ->
// <skipped>); the golden comparisons, the mutants' kill table (a fault not killed is a failure)
// and a sweep's counterexample are suites of their own. tests/harness/junit.xsd states the subset
// of the Jenkins/Ant JUnit format this writes; a ctest validates the output against it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace muoncheck {

std::string junit_xml(const nlohmann::json& report);

// Text made safe for XML 1.0 character data and attribute values (escapes, and drops the
// control characters XML forbids).
std::string xml_escape(const std::string& text);

}  // namespace muoncheck
