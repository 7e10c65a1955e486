#!/usr/bin/env bash
# The GPU bundle as a GPU machine will use it, checked on this machine. It is
# packed from BUILD_DIR by scripts/gpu-bundle.sh, which itself fails on an
# unresolved library, a GLIBC newer than Debian 12's, a bundle over the size a
# GPU session can carry, or multifit not running from an unpacked copy. Then a
# dry run of scripts/gpu-check.sh from it: the CPU steps run from the bundle,
# the GPU steps run or, with no GPU here, are skipped; none fails, and OUTDIR
# holds steps.txt, summary.txt, logs/ and the archive of logs/.
set -euo pipefail
trap 'echo "bundle check: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
build=$(cd "${1:?usage: tests/bundle/check.sh BUILD_DIR}" && pwd)
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

scripts/gpu-bundle.sh --from "$build" "$tmp/bundle"
MULTIFIT_BUNDLE=$tmp/bundle/multifit-gpu.tar.gz scripts/gpu-check.sh --dry-run "$tmp/out"

fail() { echo "bundle check: $*" >&2; exit 1; }
[ "$(ls "$tmp/out" | tr '\n' ' ')" = "gpu-check.tar.gz logs steps.txt summary.txt " ] || fail "OUTDIR holds $(ls "$tmp/out")"
summary=$tmp/out/summary.txt
grep -q '^ok       cpu_seed_model' "$summary" || fail "the CPU run from the bundle did not pass"
grep -q 'OpenBLAS: .*/multifit-gpu/lib/libopenblas.so.0' "$summary" || fail "multifit did not load the bundle's OpenBLAS"
grep -q '^\(ok\|skipped\)  *gpu_tests' "$summary" || fail "the GPU tests neither ran nor were skipped"
if grep '^FAILED' "$summary"; then fail "a step failed"; fi
tar -tzf "$tmp/out/gpu-check.tar.gz" >"$tmp/archive.txt"
grep -q '^logs/seed_model_cpu.json$' "$tmp/archive.txt" || fail "the archive lacks the result document"
echo "bundle check: passed"
