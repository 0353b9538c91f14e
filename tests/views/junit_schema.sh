#!/bin/sh
# `--junit` output of real runs validates against tests/views/junit.xsd: a failing run (a fault
# switched on), a clean one, and `mutants`-style failures are covered by views_test. Needs xmllint
# (libxml2-utils, installed by scripts/bootstrap.sh); exit 77 (ctest SKIP) without it.
set -eu
bin=$1
command -v xmllint >/dev/null 2>&1 || { echo "SKIP: no xmllint"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" run scenarios/fp16-overflow.json --fault momentum-on-overflow --mode trajectory --junit "$dir/fail.xml" >/dev/null 2>&1 && {
  echo "expected the faulty run to fail"; exit 1; }
grep -q "<failure" "$dir/fail.xml"
"$bin" run scenarios/stage0-basic.json --mode trajectory --junit "$dir/pass.xml" --summary-md "$dir/pass.md" >/dev/null
grep -q "muoncheck run: OK" "$dir/pass.md"
xmllint --noout --schema tests/views/junit.xsd "$dir/fail.xml" "$dir/pass.xml"
# The schema has teeth: a testcase without its classname is rejected.
sed 's/ classname="[^"]*"//' "$dir/pass.xml" > "$dir/broken.xml"
if xmllint --noout --schema tests/views/junit.xsd "$dir/broken.xml" 2>/dev/null; then echo "schema accepted a broken file"; exit 1; fi
echo "junit output valid; a broken file is rejected"
