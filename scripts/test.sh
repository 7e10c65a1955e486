#!/usr/bin/env bash
# From a fresh clone to passing tests: installs what is missing, builds, runs
# every test. Without a GPU the kernels run through host execution (labels
# kernels and tsan) and the GPU tests skip, saying why. Then the Python package's tests
# (scripts/python.sh --test), unless MULTIFIT_PYTHON=OFF. MULTIFIT_CUDA and
# MULTIFIT_BUILD_DIR as for scripts/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${MULTIFIT_BUILD_DIR:-build}
scripts/build.sh
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
# The Python package: built (the CPU package), installed in .venv, its tests and the lab's notebook.
[ "${MULTIFIT_PYTHON:-ON}" = OFF ] || scripts/python.sh --test
# ctest lists the skipped tests above; say why they skipped, once per reason.
reasons=$(grep -A1 ': Skipped$' "$build"/Testing/Temporary/LastTest.log | grep -v -e ': Skipped$' -e '^--$' |
  sort | uniq -c || true)
[ -z "$reasons" ] || printf 'Skipped, and why:\n%s\n' "$reasons"
