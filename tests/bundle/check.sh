#!/usr/bin/env bash
# The GPU bundle as a GPU machine will use it, checked on this machine. It is
# packed from BUILD_DIR by scripts/gpu-bundle.sh, which itself fails on an
# unresolved library, a GLIBC newer than Debian 12's, a bundle over the size a
# GPU session can carry, or multifit not running from an unpacked copy. Then a
# dry run of scripts/gpu-check.sh from a copy of what travels alone (the bundle
# at gpu-bundle/ and the files scripts/gpu-travel.txt lists): the CPU steps run
# from the bundle, the GPU steps run or, with no GPU here, are skipped; none
# fails, and OUTDIR holds exactly steps.txt, summary.txt and the archive of the
# logs. The same copy less a file the check reads fails at once, naming it
# (exit 2). Last, benchmarks/summarize.py's tables of the check's documents.
set -euo pipefail
trap 'echo "bundle check: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
build=$(cd "${1:?usage: tests/bundle/check.sh BUILD_DIR}" && pwd)
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bundle check: $*" >&2; exit 1; }

scripts/gpu-bundle.sh --from "$build" "$tmp/repo/gpu-bundle"
mapfile -t travel < <(grep -v '^#' scripts/gpu-travel.txt)
git ls-files -z -- "${travel[@]}" | xargs -0 cp --parents -t "$tmp/repo"
"$tmp/repo/scripts/gpu-check.sh" --dry-run "$tmp/out"

[ "$(ls -A "$tmp/out" | tr '\n' ' ')" = "gpu-check.tar.gz steps.txt summary.txt " ] || fail "OUTDIR holds $(ls -A "$tmp/out")"
summary=$tmp/out/summary.txt
grep -q '^ok        cpu_seed_model' "$summary" || fail "the CPU run from the bundle did not pass"
grep -q 'OpenBLAS: .*/multifit-gpu/lib/libopenblas.so.0' "$summary" || fail "multifit did not load the bundle's OpenBLAS"
grep -q '^\(ok\|skipped\)  *gpu_tests' "$summary" || fail "the GPU tests neither ran nor were skipped"
if grep '^FAILED' "$summary"; then fail "a step failed"; fi
tar -tzf "$tmp/out/gpu-check.tar.gz" >"$tmp/archive.txt"
grep -q '^logs/seed_model_cpu.json$' "$tmp/archive.txt" || fail "the archive lacks the result document"

rm "$tmp/repo/labs/12-partitions-change-contention/run.py"
rc=0
"$tmp/repo/scripts/gpu-check.sh" --dry-run "$tmp/out-missing" 2>"$tmp/stderr" || rc=$?
((rc == 2)) || fail "exit $rc with labs/12-partitions-change-contention/run.py missing, not 2"
grep -q '^gpu-check: labs/12-partitions-change-contention/run.py is missing' "$tmp/stderr" ||
  fail "no message naming the missing file: $(cat "$tmp/stderr")"

tests/bundle/summarize_check.py
echo "bundle check: passed"
