#!/usr/bin/env bash
# The report page (scripts/report.py) of a real run, rendered in headless Chromium: the screenshot is
# not blank, the page logs no script error, and a missing or foreign document is refused with exit 2.
# Skips (77) where Chromium or matplotlib is missing.
# usage: tests/report/check_report.sh MULTIFIT_BINARY
set -euo pipefail
multifit=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
report=$root/scripts/report.py
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "no chromium: the report is not rendered (Debian: apt-get install chromium)"; exit 77; }
python=python3
python3 -c "import matplotlib" 2>/dev/null || python=/usr/bin/python3
"$python" -c "import matplotlib" 2>/dev/null || { echo "no matplotlib (Debian: apt-get install python3-matplotlib)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$multifit" run "$root/examples/seed-pair.json" --backend cpu --quiet --mode all --repeat 2 \
  --json "$work/r.json" --trace "$work/t.json" > /dev/null
"$python" "$report" "$work/r.json" --trace "$work/t.json" -o "$work/report.html"
for section in "Modes side by side" "Each model against its solo run" "Memory per model" "Timeline" "<svg"; do
  grep -q "$section" "$work/report.html" || { echo "the report has no '$section'"; exit 1; }
done
if grep -q "<script" "$work/report.html"; then echo "the report runs a script; it should open as it is"; exit 1; fi

# Rendered offline, console messages on stderr: an uncaught error or a failed load would show there.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2400 \
  --enable-logging=stderr --v=0 --screenshot="$work/report.png" "file://$work/report.html" \
  > "$work/browser.out" 2> "$work/browser.err" || { cat "$work/browser.err"; echo "chromium failed"; exit 1; }
if grep -E "Uncaught|CONSOLE.*(Error|error)|net::ERR_" "$work/browser.err"; then echo "the page logged errors"; exit 1; fi
"$python" - "$work/report.png" <<'PY'
import sys
import matplotlib.image
pixels = matplotlib.image.imread(sys.argv[1])[..., :3]
ink = (pixels.mean(axis=2) < 0.9).mean()  # the share of pixels that are not near white
print(f"report.png: {pixels.shape[1]}x{pixels.shape[0]}, {ink:.1%} of it drawn")
sys.exit(0 if ink > 0.02 else 1)
PY

# Wrong inputs: one line, exit 2.
set +e
"$python" "$report" "$work/missing.json" -o "$work/x.html" 2> "$work/err"; code=$?
set -e
[ "$code" = 2 ] && grep -q "missing.json: cannot read the result document" "$work/err" || { cat "$work/err"; exit 1; }
echo '{"traceEvents": []}' > "$work/foreign.json"
set +e
"$python" "$report" "$work/foreign.json" -o "$work/x.html" 2> "$work/err"; code=$?
set -e
[ "$code" = 2 ] && grep -q "not a multifit result document" "$work/err" || { cat "$work/err"; exit 1; }
echo "report: rendered, and wrong inputs refused"
