#!/usr/bin/env bash
# The report page (scripts/report.py) of a real run, rendered in headless Chromium (render_pages.sh):
# the screenshot is not blank and the page logs no script error; and a missing or foreign document
# is refused with exit 2.
# Skips (77) where Chromium or matplotlib is missing.
# usage: tests/report/check_report.sh MULTIFIT_BINARY
set -euo pipefail
multifit=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
report=$root/scripts/report.py
command -v chromium > /dev/null || command -v chromium-browser > /dev/null ||
  { echo "no chromium: the report is not rendered (Debian: apt-get install chromium)"; exit 77; }
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
# The answer at the top, as the document says it; the title names the sweep and its modes.
answer=$("$python" -c 'import html, json, sys; print(html.escape(json.load(open(sys.argv[1]))["answer"]))' "$work/r.json")
grep -qF "<h1>multifit: seed-pair (2 models; serial, streams, processes, packed)</h1><p><b>$answer</b></p>" \
  "$work/report.html" || { echo "the report does not open with the title and the answer: $answer"; exit 1; }
if grep -q "<script" "$work/report.html"; then echo "the report runs a script; it should open as it is"; exit 1; fi
# A timeline for every mode (its last run of the two), and the recommendation in one sentence last.
for mode in serial streams processes packed; do
  grep -qF "<h3>$mode (run 2 of 2: the last, past the first run's warm-up)</h3>" "$work/report.html" ||
    { echo "the report has no timeline of $mode's last run"; exit 1; }
done
grep -qE "<p><b>Recommendation: [^<]*</b></p></body>" "$work/report.html" ||
  { echo "the report does not end with its recommendation"; exit 1; }
# A search with a scheduler: its best models with their values, and its rungs.
"$multifit" run "$root/examples/tiny-search-asha.json" --backend cpu --quiet --mode packed --json "$work/s.json" > /dev/null
"$python" "$report" "$work/s.json" -o "$work/search.html"
for section in "Best models (packed)" "The scheduler's rungs (packed)" "learning_rate" "trials stopped at a rung"; do
  grep -q "$section" "$work/search.html" || { echo "the search's report has no '$section'"; exit 1; }
done

"$root/tests/report/render_pages.sh" "$work/report.html"

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
