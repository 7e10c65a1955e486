#!/usr/bin/env bash
# scripts/gpu-check.sh's plumbing on a machine without a GPU, from a build's bin/ (no bundle), in one of three
# cases:
#   stopped        a dry run given TERM in the middle of a step keeps what the finished steps wrote:
#                  steps.txt with their lines, their logs, and a summary.txt saying where it stopped
#   deadline       a dry run with --deadline 2 stops the step running at the deadline and skips every
#                  later one, each with a line, and exits 0 (time running out is no failure)
#   gpu-not-found  a fake nvidia-smi that lists a GPU which multifit cannot find (what a driver too old
#                  for CUDA 13 looks like) fails the check, naming the cause, even in a dry run
# usage: tests/bundle/gpu_check_dry_run.sh BIN_DIR stopped|deadline|gpu-not-found
set -euo pipefail
trap 'echo "gpu-check dry run: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
bin=$(cd "${1:?usage: tests/bundle/gpu_check_dry_run.sh BIN_DIR stopped|deadline|gpu-not-found}" && pwd)
case=${2:?usage: tests/bundle/gpu_check_dry_run.sh BIN_DIR stopped|deadline|gpu-not-found}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "gpu-check dry run: $*" >&2; [ ! -f "$out/steps.txt" ] || sed 's/^/  steps.txt: /' "$out/steps.txt" >&2; exit 1; }
out=$tmp/out

# The binaries, with a multifit whose `train` hangs: a stop then always lands inside cpu_seed_model, after
# info, cpu_help and the skipped GPU steps have ended.
hanging_train() {
  mkdir "$tmp/bin"
  printf '#!/bin/sh\n[ "$1" = train ] && exec sleep 60\nexec %q "$@"\n' "$bin/multifit" >"$tmp/bin/multifit"
  chmod +x "$tmp/bin/multifit"
}

if [ "$case" = stopped ]; then
  hanging_train
  scripts/gpu-check.sh --dry-run --binaries "$tmp/bin" "$out" >"$tmp/stdout" 2>&1 &
  pid=$!
  for _ in $(seq 100); do [ -f "$out/logs/cpu_seed_model.log" ] && break; sleep 0.1; done
  [ -f "$out/logs/cpu_seed_model.log" ] || fail "cpu_seed_model did not start within 10 s"
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  pid=""
  ((rc == 143)) || fail "exit $rc after TERM, not 143"
  grep -q '^ok       info ' "$out/steps.txt" || fail "steps.txt lacks info"
  grep -q '^ok       cpu_help ' "$out/steps.txt" || fail "steps.txt lacks cpu_help"
  grep -q '^skipped  gpu_tests (no CUDA device' "$out/steps.txt" || fail "steps.txt does not say why gpu_tests skipped"
  grep -q '^FAILED   cpu_seed_model (stopped by SIGTERM' "$out/steps.txt" || fail "the stopped step is not recorded"
  if grep -q 'kernel_bench' "$out/steps.txt"; then fail "steps after the stopped one ran"; fi
  for f in logs/info.log logs/cpu_help.log logs/device.txt summary.txt gpu-check.tar.gz; do
    [ -s "$out/$f" ] || fail "OUTDIR lacks $f"
  done
  grep -q '^gpu-check: stopped by SIGTERM during cpu_seed_model' "$out/summary.txt" || fail "summary.txt: $(head -1 "$out/summary.txt")"
  # listed to a file: under pipefail, grep -q leaving early would fail the pipe with tar's SIGPIPE
  tar -tzf "$out/gpu-check.tar.gz" >"$tmp/listing" || fail "the archive does not list"
  grep -q '^logs/cpu_help.log$' "$tmp/listing" || fail "the archive lacks logs/cpu_help.log"
elif [ "$case" = deadline ]; then
  hanging_train
  rc=0
  scripts/gpu-check.sh --dry-run --deadline 2 --binaries "$tmp/bin" "$out" >"$tmp/stdout" 2>&1 || rc=$?
  ((rc == 0)) || fail "exit $rc at the deadline, not 0"
  grep -q '^ok       cpu_help ' "$out/steps.txt" || fail "steps.txt lacks cpu_help"
  grep -q '^skipped  cpu_seed_model (stopped at the deadline' "$out/steps.txt" || fail "cpu_seed_model not stopped at the deadline"
  for s in kernel_bench study_tiny labs scaling peers_w1; do
    grep -q "^skipped  $s (past the deadline)" "$out/steps.txt" || fail "$s not skipped as past the deadline"
  done
  grep -q '^gpu-check: finished' "$out/summary.txt" || fail "summary.txt: $(head -1 "$out/summary.txt")"
elif [ "$case" = gpu-not-found ]; then
  mkdir "$tmp/fake"
  printf '#!/bin/sh\necho "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)"\n' >"$tmp/fake/nvidia-smi"
  chmod +x "$tmp/fake/nvidia-smi"
  rc=0
  PATH=$tmp/fake:$PATH scripts/gpu-check.sh --dry-run --binaries "$bin" "$out" >"$tmp/stdout" 2>&1 || rc=$?
  ((rc != 0)) || fail "exit 0 with a GPU listed that multifit cannot find"
  grep -q 'nvidia-smi lists 1 GPU(s) but multifit finds no CUDA device' "$tmp/stdout" ||
    fail "no message naming the cause: $(cat "$tmp/stdout")"
  grep -q '^FAILED   cuda_device (nvidia-smi lists 1 GPU(s), multifit finds none' "$out/summary.txt" ||
    fail "summary.txt does not name the cause"
  grep -q '^ok       cpu_seed_model ' "$out/steps.txt" || fail "the CPU steps did not run"
else
  echo "gpu-check dry run: unknown case $case (stopped, deadline, gpu-not-found)" >&2
  exit 2
fi
echo "gpu-check dry run ($case): passed"
