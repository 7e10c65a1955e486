#!/usr/bin/env bash
# Renders each page in headless Chromium, offline: the page logs no script error and no failed load,
# and its screenshot is not blank (more than 2% of it drawn). Skips (77) where Chromium or matplotlib
# (which reads the screenshot) is missing.
# usage: tests/report/render_pages.sh PAGE.html...
set -euo pipefail
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "no chromium: the pages are not rendered (Debian: apt-get install chromium)"; exit 77; }
python=python3
python3 -c "import matplotlib" 2>/dev/null || python=/usr/bin/python3
"$python" -c "import matplotlib" 2>/dev/null || { echo "no matplotlib (Debian: apt-get install python3-matplotlib)"; exit 77; }
[ $# -gt 0 ] || { echo "render_pages.sh: no page given"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for page in "$@"; do
  [ -f "$page" ] || { echo "$page: no such page"; exit 1; }
  # Console messages on stderr: an uncaught error or a failed load would show there.
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2400 \
    --enable-logging=stderr --v=0 --screenshot="$work/page.png" "file://$(realpath "$page")" \
    > "$work/browser.out" 2> "$work/browser.err" || { cat "$work/browser.err"; echo "$page: chromium failed"; exit 1; }
  if grep -E "Uncaught|CONSOLE.*(Error|error)|net::ERR_" "$work/browser.err"; then echo "$page: the page logged errors"; exit 1; fi
  "$python" - "$work/page.png" "$page" <<'PY'
import sys
import matplotlib.image
pixels = matplotlib.image.imread(sys.argv[1])[..., :3]
ink = (pixels.mean(axis=2) < 0.9).mean()  # the share of pixels that are not near white
print(f"{sys.argv[2]}: {pixels.shape[1]}x{pixels.shape[0]}, {ink:.1%} of it drawn")
sys.exit(0 if ink > 0.02 else 1)
PY
done
