#!/usr/bin/env bash
# From a fresh clone to passing tests: installs what is missing, builds, runs
# every test. Without a GPU the kernels run through host execution (labels
# kernels and tsan) and the GPU tests skip, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
echo "Skipped tests and why:"
ctest --test-dir build -L gpu -V 2>/dev/null | grep -A1 -E '^[0-9]+: .*Skipped$' | grep -vE 'Skipped$|^--$' |
  sort | uniq -c | sed 's/^/  /' || true
