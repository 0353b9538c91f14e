#!/bin/sh
# reports/conformance-matrix.html (as scripts/conformance-matrix.py writes it) renders in a real
# headless Chromium without console errors and fetches nothing. Needs chromium (Debian's package,
# scripts/bootstrap.sh); exit 77 (ctest SKIP) without it. SCREENSHOT=FILE keeps the screenshot.
set -eu
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: no chromium"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 scripts/conformance-matrix.py --out-json "$dir/m.json" --out-html "$dir/m.html" > /dev/null
grep -q "Muon conformance matrix" "$dir/m.html"
if grep -qE "<script|<link|src=\"http|href=\"http" "$dir/m.html"; then echo "the page loads something"; exit 1; fi
for d in reports/*/; do cp -r "$d" "$dir/" 2>/dev/null || true; done   # the per-implementation folders the page links into
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --user-data-dir="$dir/profile" --window-size=1400,1600 --enable-logging=stderr --v=0 \
  --screenshot="$dir/shot.png" "file://$dir/m.html" > "$dir/chromium.log" 2>&1 || { cat "$dir/chromium.log"; exit 1; }
[ -s "$dir/shot.png" ] || { echo "no screenshot"; cat "$dir/chromium.log"; exit 1; }
if grep -E "CONSOLE|Uncaught|ERR_FILE_NOT_FOUND|net::ERR" "$dir/chromium.log"; then echo "console errors"; exit 1; fi
[ -z "${SCREENSHOT:-}" ] || cp "$dir/shot.png" "$SCREENSHOT"
echo "rendered: $(wc -c < "$dir/shot.png") bytes of screenshot, no console errors"
