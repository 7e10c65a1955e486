#!/usr/bin/env bash
# From a fresh clone to passing tests: installs what is missing, builds, runs
# every test. Without a GPU the kernels run through host execution (labels
# kernels and tsan) and the GPU tests skip, saying why. Then the Python package's tests
# (scripts/python.sh --test), unless MULTIFIT_PYTHON=OFF. MULTIFIT_CUDA and
# MULTIFIT_BUILD_DIR as for scripts/build.sh. Ends with how long the build and
# the tests took (on 2 cores the tests take some 5 minutes, half of it ThreadSanitizer's).
#
# --quick is the edit-test loop, under a minute after its build on 2 cores: it builds only
# what it runs, then the tests labelled unit, kernels (host execution, not ThreadSanitizer, at
# the small sizes of tests/parity/test_sizes.h: MULTIFIT_TEST_SIZES=small) and cli, not those
# labelled cli-slow (mpirun, workers killed and signalled, thousands of models). No
# ThreadSanitizer, no sanitizers, no Python, no labs: the whole run before a commit.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/test.sh [--quick]   (--quick: the unit tests, the kernels at small sizes and the cli tests
  but the slow ones; under a minute after its build on 2 cores)"
quick=false
case "${1:-}" in
  "") ;;
  --quick) quick=true ;;
  -h | --help) echo "$usage"; exit 0 ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
build=${MULTIFIT_BUILD_DIR:-build}
start=$SECONDS
if $quick; then
  scripts/build.sh unit_tests study_tests hostexec_tests cli_tests multifit
else
  scripts/build.sh
  # The Python package as its tests install it (the CPU package unless MULTIFIT_CUDA says), so that
  # its build counts as the build's.
  [ "${MULTIFIT_PYTHON:-ON}" = OFF ] || MULTIFIT_CUDA=${MULTIFIT_CUDA:-OFF} scripts/python.sh
fi
built=$SECONDS
if $quick; then
  MULTIFIT_TEST_SIZES=small ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -L 'unit|kernels|cli' -LE slow
else
  ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
  # The Python package: its tests and the lab's notebook.
  [ "${MULTIFIT_PYTHON:-ON}" = OFF ] || scripts/python.sh --test
fi
# ctest lists the skipped tests above; say why they skipped, once per reason.
reasons=$(grep -A1 ': Skipped$' "$build"/Testing/Temporary/LastTest.log | grep -v -e ': Skipped$' -e '^--$' |
  sort | uniq -c || true)
[ -z "$reasons" ] || printf 'Skipped, and why:\n%s\n' "$reasons"
echo "test.sh$($quick && echo ' --quick'): built in $((built - start)) s, tested in $((SECONDS - built)) s"
