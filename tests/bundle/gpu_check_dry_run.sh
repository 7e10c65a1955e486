#!/usr/bin/env bash
# scripts/gpu-check.sh's plumbing on a machine without a GPU, from a build's bin/ (no bundle), in one of four
# cases; in each, OUTDIR ends holding exactly steps.txt, summary.txt and gpu-check.tar.gz, and the archive
# holds the log of every step that ran:
#   stopped        a dry run given TERM in the middle of a step keeps what the finished steps wrote:
#                  steps.txt with their lines, their logs (in --logs DIR and in the archive), and a
#                  summary.txt saying where it stopped
#   deadline       a dry run with --deadline 5 stops the step running at the deadline, with SIGKILL when
#                  it ignores SIGTERM, skips every later one, each with a line, and exits 0 (time running
#                  out is no failure); a machine without compute-sanitizer says so in the first line
#   gpu-not-found  a fake nvidia-smi that lists a GPU which multifit cannot find (what a driver too old
#                  for CUDA 13 looks like) fails the check, naming the cause, even in a dry run
#   sanitizers     a fake GPU (multifit info lists one) and a fake compute-sanitizer in the toolkit's
#                  folder (CUDA_HOME, not on PATH): the sharing steps run first, memcheck with no error
#                  is ok, racecheck reaching its limit with none is "timed out", neither ok nor FAILED,
#                  and synccheck with an error FAILED, the check exiting 1
#   libraries      a fake GPU on a machine with cuBLAS and without cuDNN (MULTIFIT_LIBRARY_DIRS): the
#                  steps that load cuDNN skip, naming it, those with cuBLAS run, and the check passes
#   plan           --plan, which runs nothing: every step up to the CPU ones is planned to end inside
#                  the default deadline at worst (each running into its limit, every tool present), the
#                  sharing steps before the sanitizers, and the plan ends by the deadline
# usage: tests/bundle/gpu_check_dry_run.sh BIN_DIR stopped|deadline|gpu-not-found|sanitizers|libraries|plan
set -euo pipefail
trap 'echo "gpu-check dry run: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
cases="stopped|deadline|gpu-not-found|sanitizers|libraries|plan"
bin=$(cd "${1:?usage: tests/bundle/gpu_check_dry_run.sh BIN_DIR $cases}" && pwd)
case=${2:?usage: tests/bundle/gpu_check_dry_run.sh BIN_DIR $cases}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "gpu-check dry run: $*" >&2; [ ! -f "$out/steps.txt" ] || sed 's/^/  steps.txt: /' "$out/steps.txt" >&2; exit 1; }
out=$tmp/out

# OUTDIR holds the three files alone, and the archive each log of a step that ran: every step with a line
# but those skipped before they started (cuda_device is judged from info's log and has none).
returns_three_files() {
  [ "$(ls -A "$out" | tr '\n' ' ')" = "gpu-check.tar.gz steps.txt summary.txt " ] || fail "OUTDIR holds $(ls -A "$out")"
  # listed to a file: under pipefail, grep -q leaving early would fail the pipe with tar's SIGPIPE
  tar -tzf "$out/gpu-check.tar.gz" >"$tmp/listing" || fail "the archive does not list"
  grep -qx 'steps.txt' "$tmp/listing" && grep -qx 'summary.txt' "$tmp/listing" && grep -qx 'logs/device.txt' "$tmp/listing" ||
    fail "the archive lacks steps.txt, summary.txt or logs/device.txt: $(tr '\n' ' ' <"$tmp/listing")"
  local ran
  ran=$(awk '$2 != "cuda_device" && ($1 != "skipped" || / \(stopped at the deadline/) {print ($1 == "timed" ? $3 : $2)}' \
    "$out/steps.txt")
  [ -n "$ran" ] || fail "no step ran"
  for name in $ran; do
    grep -qx "logs/$name.log" "$tmp/listing" || fail "the archive lacks logs/$name.log"
  done
}

# The binaries, with a multifit whose `train` hangs: a stop then always lands inside cpu_seed_model, after
# info, cpu_help and the skipped GPU steps have ended. It ignores SIGTERM when asked to.
hanging_train() {
  mkdir "$tmp/bin"
  printf '#!/bin/sh\n[ "$1" = train ] && { %s exec sleep 60; }\nexec %q "$@"\n' "${1:-}" "$bin/multifit" >"$tmp/bin/multifit"
  chmod +x "$tmp/bin/multifit"
}

if [ "$case" = stopped ]; then
  hanging_train
  scripts/gpu-check.sh --dry-run --binaries "$tmp/bin" --logs "$tmp/logs" "$out" >"$tmp/stdout" 2>&1 &
  pid=$!
  for _ in $(seq 100); do [ -f "$tmp/logs/cpu_seed_model.log" ] && break; sleep 0.1; done
  [ -f "$tmp/logs/cpu_seed_model.log" ] || fail "cpu_seed_model did not start within 10 s"
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  pid=""
  ((rc == 143)) || fail "exit $rc after TERM, not 143"
  grep -q '^ok        info ' "$out/steps.txt" || fail "steps.txt lacks info"
  grep -q '^ok        cpu_help ' "$out/steps.txt" || fail "steps.txt lacks cpu_help"
  grep -q '^skipped   gpu_tests (no CUDA device' "$out/steps.txt" || fail "steps.txt does not say why gpu_tests skipped"
  grep -q '^FAILED    cpu_seed_model (stopped by SIGTERM' "$out/steps.txt" || fail "the stopped step is not recorded"
  if grep -q 'kernel_bench\|study_tiny' "$out/steps.txt"; then fail "steps after the stopped one ran"; fi
  grep -q '^gpu-check: stopped by SIGTERM during cpu_seed_model' "$out/summary.txt" || fail "summary.txt: $(head -1 "$out/summary.txt")"
  returns_three_files
  for f in info.log cpu_help.log device.txt; do [ -s "$tmp/logs/$f" ] || fail "--logs lacks $f"; done
elif [ "$case" = deadline ]; then
  hanging_train "trap '' TERM;"
  rc=0
  start=$SECONDS
  # 5 s: the device's probes and the steps before the hanging one take a second or two on a busy machine
  scripts/gpu-check.sh --dry-run --deadline 5 --binaries "$tmp/bin" "$out" >"$tmp/stdout" 2>&1 || rc=$?
  ((rc == 0)) || fail "exit $rc at the deadline, not 0"
  # the step's SIGTERM at the deadline is ignored; its SIGKILL comes 10 s later
  ((SECONDS - start <= 23)) || fail "the check ended $((SECONDS - start)) s after it started, past its deadline of 5 s and the kill"
  grep -q '^ok        cpu_help ' "$out/steps.txt" || fail "steps.txt lacks cpu_help"
  grep -q '^skipped   cpu_seed_model (stopped at the deadline' "$out/steps.txt" || fail "cpu_seed_model not stopped at the deadline"
  for s in kernel_bench study_tiny labs scaling peers_w1; do
    grep -q "^skipped   $s (past the deadline)" "$out/steps.txt" || fail "$s not skipped as past the deadline"
  done
  head -1 "$out/summary.txt" | grep -q '^gpu-check: finished (.*): 3 ok, [0-9]* skipped' || fail "summary.txt: $(head -1 "$out/summary.txt")"
  # the machine's sharing facts, which an MPS result is read against, in the summary's first lines
  for fact in "nvidia-cuda-mps-control: " "MPS daemons running before the check: " "/dev/shm size, free: "; do
    sed -n '2,6p' "$out/summary.txt" | grep -q "^sharing: $fact" || fail "summary.txt's first lines lack 'sharing: $fact'"
  done
  returns_three_files
  # The first line says what the machine lacks; the device's record says where it was looked for.
  tar -xzf "$out/gpu-check.tar.gz" -C "$tmp" logs/device.txt
  if grep -q '^sanitizer: no compute-sanitizer' "$tmp/logs/device.txt"; then
    head -1 "$out/summary.txt" | grep -q '; skipped: no compute-sanitizer$' || fail "summary.txt's first line does not say there is no compute-sanitizer"
  fi
elif [ "$case" = gpu-not-found ]; then
  mkdir "$tmp/fake"
  printf '#!/bin/sh\necho "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)"\n' >"$tmp/fake/nvidia-smi"
  chmod +x "$tmp/fake/nvidia-smi"
  rc=0
  PATH=$tmp/fake:$PATH scripts/gpu-check.sh --dry-run --binaries "$bin" "$out" >"$tmp/stdout" 2>&1 || rc=$?
  ((rc != 0)) || fail "exit 0 with a GPU listed that multifit cannot find"
  grep -q 'nvidia-smi lists 1 GPU(s) but multifit finds no CUDA device' "$tmp/stdout" ||
    fail "no message naming the cause: $(cat "$tmp/stdout")"
  grep -q '^FAILED    cuda_device (nvidia-smi lists 1 GPU(s), multifit finds none' "$out/summary.txt" ||
    fail "summary.txt does not name the cause"
  grep -q '^ok        cpu_seed_model ' "$out/steps.txt" || fail "the CPU steps did not run"
  returns_three_files
elif [ "$case" = sanitizers ]; then
  # multifit finds a GPU, its runs (the sharing steps, before the sanitizers) end at once, and it hangs in
  # `train` (the first step after the sanitizers, cut by the deadline); gpu_tests passes at once. python3
  # has none of what lab 12 needs: the lab skips itself (exit 77, why on its last line).
  mkdir -p "$tmp/bin" "$tmp/cuda/compute-sanitizer" "$tmp/python"
  printf '#!/bin/sh\ncase "$1" in info) echo "cuda:    0 fake GPU"; exit 0 ;; run) exit 0 ;; train) exec sleep 60 ;; esac\nexec %q "$@"\n' \
    "$bin/multifit" >"$tmp/bin/multifit"
  printf '#!/bin/sh\necho "fake python3: no lab here"; exit 77\n' >"$tmp/python/python3"
  printf '#!/bin/sh\necho "[       OK ] Fake.Test (0 ms)"\n' >"$tmp/bin/gpu_tests"
  # The tool as it reports: no error, an error, or no end before its limit.
  cat >"$tmp/cuda/compute-sanitizer/compute-sanitizer" <<'EOF'
#!/bin/sh
[ "$1" = --version ] && { echo "NVIDIA (R) Compute Sanitizer"; echo "Version 2099.1.0 (fake)"; exit 0; }
echo "========= COMPUTE-SANITIZER"
case "$2" in
  memcheck) "$5" "$6"; echo "========= ERROR SUMMARY: 0 errors" ;;
  racecheck) echo "[       OK ] Fake.First (0 ms)"; exec sleep 60 ;;
  synccheck) echo "========= Barrier error detected. Divergent thread(s) in warp"
             echo "=========     at 0x10 in fake_kernel"; echo "========= ERROR SUMMARY: 1 error" ;;
esac
EOF
  chmod +x "$tmp/bin/multifit" "$tmp/bin/gpu_tests" "$tmp/cuda/compute-sanitizer/compute-sanitizer" "$tmp/python/python3"
  where=(CUDA_HOME="$tmp/cuda" PATH="$tmp/python:$PATH")  # the toolkit's folder, where a toolkit off PATH keeps the tool
  if command -v compute-sanitizer >/dev/null; then where+=(PATH="$tmp/cuda/compute-sanitizer:$tmp/python:$PATH"); fi
  rc=0
  env "${where[@]}" MULTIFIT_SANITIZER_LIMIT_S=2 scripts/gpu-check.sh --deadline 8 --binaries "$tmp/bin" "$out" \
    >"$tmp/stdout" 2>&1 || rc=$?
  ((rc == 1)) || fail "exit $rc with synccheck failed, not 1"
  grep -q '^ok        gpu_tests ' "$out/steps.txt" || fail "gpu_tests did not run on the fake GPU"
  for s in mps_off mps_on streams_shared streams_partitions; do
    grep -q "^ok        $s " "$out/steps.txt" || fail "$s did not run before the sanitizers"
  done
  grep -q '^skipped   lab12 (fake python3: no lab here)' "$out/steps.txt" || fail "lab12 did not skip itself"
  grep -q '^ok        memcheck (.*ERROR SUMMARY: 0 errors' "$out/steps.txt" || fail "memcheck with no error is not ok"
  grep -q '^timed out racecheck (at its limit of 2 s (MULTIFIT_SANITIZER_LIMIT_S); tests passed: 1, no error so far' "$out/steps.txt" ||
    fail "racecheck at its limit with no error is not 'timed out'"
  grep -q '^FAILED    synccheck (ERROR SUMMARY: 1 error' "$out/steps.txt" || fail "synccheck with an error did not fail"
  grep -q '^skipped   cpu_seed_model (stopped at the deadline' "$out/steps.txt" || fail "cpu_seed_model was not stopped at the deadline"
  head -1 "$out/summary.txt" | grep -q '^gpu-check: finished (.*): [0-9]* ok, 1 FAILED, 1 timed out, [0-9]* skipped$' ||
    fail "summary.txt: $(head -1 "$out/summary.txt")"
  returns_three_files
  tar -xzf "$out/gpu-check.tar.gz" -C "$tmp" logs/device.txt
  grep -q "^sanitizer: $tmp/cuda/compute-sanitizer/compute-sanitizer (Version 2099.1.0 (fake))" "$tmp/logs/device.txt" ||
    fail "the tool in CUDA_HOME was not found: $(grep '^sanitizer' "$tmp/logs/device.txt")"
elif [ "$case" = libraries ]; then
  # Every GPU step ends at once (multifit, gpu_tests and kernel_bench fakes that exit 0; python3 a fake
  # whose labs skip themselves); the library folder holds cuBLAS 13 alone.
  mkdir -p "$tmp/bin" "$tmp/python" "$tmp/libs"
  printf '#!/bin/sh\n[ "$1" = info ] && echo "cuda:    0 fake GPU"\nexit 0\n' >"$tmp/bin/multifit"
  printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/gpu_tests"
  cp "$tmp/bin/gpu_tests" "$tmp/bin/kernel_bench"
  printf '#!/bin/sh\necho "fake python3: no lab here"; exit 77\n' >"$tmp/python/python3"
  : >"$tmp/libs/libcublas.so.13"
  chmod +x "$tmp/bin/multifit" "$tmp/bin/gpu_tests" "$tmp/bin/kernel_bench" "$tmp/python/python3"
  rc=0
  PATH="$tmp/python:$PATH" MULTIFIT_LIBRARY_DIRS="$tmp/libs" MULTIFIT_SANITIZER_LIMIT_S=1 \
    scripts/gpu-check.sh --binaries "$tmp/bin" "$out" >"$tmp/stdout" 2>&1 || rc=$?
  grep -q '^FAILED' "$out/steps.txt" && fail "a step failed"
  ((rc == 0)) || fail "exit $rc"
  for b in b32 b128; do
    grep -q "^skipped   fashion_${b}_tiled_cudnn (no libcudnn.so.9 on this machine (logs/device.txt))" "$out/steps.txt" ||
      fail "fashion_${b}_tiled_cudnn did not skip for the missing cuDNN"
    grep -q "^ok        fashion_${b}_cublas_ours " "$out/steps.txt" || fail "fashion_${b}_cublas_ours did not run"
  done
  tar -xzf "$out/gpu-check.tar.gz" -C "$tmp" logs/device.txt
  grep -q "^library: libcudnn.so.9 not found in $tmp/libs" "$tmp/logs/device.txt" || fail "device.txt does not say cuDNN is missing"
  grep -q "^library: libcublas.so.13 from $tmp/libs" "$tmp/logs/device.txt" || fail "device.txt does not say where cuBLAS is"
  returns_three_files
elif [ "$case" = plan ]; then
  scripts/gpu-check.sh --plan >"$tmp/plan" 2>&1 || fail "--plan exited $?: $(cat "$tmp/plan")"
  ends() { sed -n "s/^planned   $1 ([0-9]* s, ends by \([0-9]*\) s.*/\1/p" "$tmp/plan"; }
  for s in info gpu_tests mps_off mps_on streams_shared streams_partitions lab12 memcheck racecheck synccheck \
           cpu_help cpu_seed_model; do
    at=$(ends "$s")
    [ -n "$at" ] || fail "$s is not planned: $(cat "$tmp/plan")"
    ((at <= 480)) || fail "$s ends by $at s at worst, past the deadline of 480 s"
    if grep -q "^planned   $s (.*cut to the time left" "$tmp/plan"; then fail "$s is cut by the deadline"; fi
  done
  (($(ends lab12) < $(ends memcheck))) || fail "the sanitizers come before the sharing steps"
  grep -q '^gpu-check --plan: at worst the check ends by [0-9]* s of its 480 s deadline$' "$tmp/plan" ||
    fail "no end line: $(tail -1 "$tmp/plan")"
  last=$(sed -n 's/^gpu-check --plan: at worst the check ends by \([0-9]*\) s.*/\1/p' "$tmp/plan")
  ((last <= 480)) || fail "the plan ends by $last s, past the deadline"
  echo "gpu-check dry run (plan): passed"
  exit 0
else
  echo "gpu-check dry run: unknown case $case (${cases//|/, })" >&2
  exit 2
fi
echo "gpu-check dry run ($case): passed"
