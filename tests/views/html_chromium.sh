#!/bin/sh
# `muoncheck html` renders in a real headless Chromium without console errors, and the page
# fetches nothing. The report has a passing scenario before a failing one (a fault switched on):
# in the DOM Chromium builds, the index lists the failing scenario first, every in-page link
# (index rows, FAIL rows to their repro lines) has its target, and the passing scenario is
# collapsed. Needs chromium (Debian's package, installed by scripts/bootstrap.sh); exit 77 (ctest
# SKIP) without it. With SCREENSHOT=FILE the screenshot is kept (docs/html-report.png).
set -eu
bin=$1
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: no chromium"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" run stage0-basic fp16-overflow --fault momentum-on-overflow --mode trajectory --report "$dir/r.json" >/dev/null 2>&1 || true
"$bin" html "$dir/r.json" -o "$dir/r.html" >/dev/null
grep -q "<svg" "$dir/r.html"
if grep -qE "<script|<link|src=\"http|href=\"http" "$dir/r.html"; then echo "the page loads something"; exit 1; fi
chrome() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
    --user-data-dir="$dir/profile" --enable-logging=stderr --v=0 "$@" "file://$dir/r.html"
}
chrome --window-size=1100,1400 --screenshot="$dir/shot.png" > "$dir/chromium.log" 2>&1 || { cat "$dir/chromium.log"; exit 1; }
[ -s "$dir/shot.png" ] || { echo "no screenshot"; cat "$dir/chromium.log"; exit 1; }
if grep -E "CONSOLE|Uncaught|ERR_FILE_NOT_FOUND|net::ERR" "$dir/chromium.log"; then echo "console errors"; exit 1; fi
chrome --dump-dom > "$dir/dom.html" 2> "$dir/dom.log" || { cat "$dir/dom.log"; exit 1; }
python3 - "$dir/dom.html" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
index = re.search(r'<table class="index">(.*?)</table>', dom, re.S)
assert index, "no index table in the rendered page"
rows = re.findall(r'<tr class="(\w+)"><td><a href="#s-([^"]+)">', index.group(1))
assert [name for _, name in rows] == ["fp16-overflow", "stage0-basic"], rows
assert rows[0][0] == "failing" and rows[1][0] != "failing", rows
ids = set(re.findall(r'\bid="([^"]+)"', dom))
links = re.findall(r'href="#([^"]+)"', dom)
missing = [l for l in links if l not in ids]
assert not missing, f"links without a target: {missing}"
fail_links = [l for l in links if l.startswith("repro-fp16-overflow-")]
assert fail_links, "no FAIL row links to its repro line"
assert '<details id="s-stage0-basic">' in dom, "the passing scenario is not collapsed"
assert dom.index('id="s-fp16-overflow"') < dom.index('id="s-stage0-basic"'), "failing section not first"
print(f"index: {[n for _, n in rows]}; {len(links)} in-page links, all with targets; {len(fail_links)} FAIL -> repro links")
PY
[ -z "${SCREENSHOT:-}" ] || cp "$dir/shot.png" "$SCREENSHOT"
echo "rendered: $(wc -c < "$dir/shot.png") bytes of screenshot, no console errors"
