#!/bin/sh
# `muoncheck html` renders in a real headless Chromium without console errors, and the page
# fetches nothing. Needs chromium (Debian's package, installed by scripts/bootstrap.sh); exit 77
# (ctest SKIP) without it. With SCREENSHOT=FILE the screenshot is kept (docs/html-report.png).
set -eu
bin=$1
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: no chromium"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" run scenarios/fp16-overflow.json --fault momentum-on-overflow --mode trajectory --report "$dir/r.json" >/dev/null 2>&1 || true
"$bin" html "$dir/r.json" -o "$dir/r.html" >/dev/null
grep -q "<svg" "$dir/r.html"
if grep -qE "<script|<link|src=\"http|href=\"http" "$dir/r.html"; then echo "the page loads something"; exit 1; fi
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --user-data-dir="$dir/profile" --window-size=1100,1400 --enable-logging=stderr --v=0 \
  --screenshot="$dir/shot.png" "file://$dir/r.html" > "$dir/chromium.log" 2>&1 || { cat "$dir/chromium.log"; exit 1; }
[ -s "$dir/shot.png" ] || { echo "no screenshot"; cat "$dir/chromium.log"; exit 1; }
if grep -E "CONSOLE|Uncaught|ERR_FILE_NOT_FOUND|net::ERR" "$dir/chromium.log"; then echo "console errors"; exit 1; fi
[ -z "${SCREENSHOT:-}" ] || cp "$dir/shot.png" "$SCREENSHOT"
echo "rendered: $(wc -c < "$dir/shot.png") bytes of screenshot, no console errors"
