#!/usr/bin/env bash
# The GPU check: one command on a machine with an NVIDIA GPU. A GPU machine is
# lent for about 15 minutes, start included, at most 10 minutes a command, and
# only what the command left in its output folder comes back; so the check
# runs its most valuable steps first, stops itself at a deadline (default 8
# minutes), and keeps every finished step's files in OUTDIR as it goes.
#
# It runs the binaries of the bundle that scripts/gpu-bundle.sh made
# (gpu-bundle/multifit-gpu.tar.gz, or the file MULTIFIT_BUNDLE names), or those
# of a build's bin/ folder named with --binaries (data from MULTIFIT_DATA then).
# In order:
#   1. records the device (nvidia-smi), driver, toolkit and the bundle's manifest,
#      and finds cuBLAS 13 and cuDNN 9 in the toolkit's folders or Python's nvidia
#      packages (logs/device.txt);
#   2. info: `multifit info`; cuda_device: fails when nvidia-smi lists a GPU that
#      multifit does not find (a driver too old for CUDA 13, say), and when there is
#      no GPU at all outside a dry run;
#   3. gpu_tests: every kernel against the CPU backend, the cuBLAS and cuDNN paths,
#      Fashion-MNIST training on cuda against cpu;
#   4. memcheck, racecheck, synccheck: compute-sanitizer over the kernel, dense and
#      pack parity tests, pack training and the CUDA graph tests, judged by the
#      errors the tool's summary counts;
#   5. cpu_help, cpu_seed_model: multifit from the bundle on the CPU;
#   6. the micro-benchmarks, Fashion-MNIST end to end with our kernels, cuBLAS
#      products and cuDNN activations, and one run with MULTIFIT_SYNC_LAUNCHES=1;
#   7. the contention study (the Fashion-MNIST grid and the 32 tiny models in every
#      mode), every lab at its quick size on the GPU (labs/run-all), the scaling study (benchmarks/scaling.py, at most 32 models at once)
#      and, where Python has PyTorch, W1 side by side with it.
#
# OUTDIR holds, from the first step on:
#   steps.txt         one line per step as it ends: ok/FAILED/skipped, its name, seconds
#   logs/             each step's log and documents, written as the step runs (or --logs DIR)
#   summary.txt       steps.txt with a header saying whether the check finished;
#                     the tables of benchmarks/summarize.py once it ends
#   gpu-check.tar.gz  logs/ and steps.txt, packed again after every step: a GPU
#                     session returns a few files only, and this one holds the rest
# A TERM or INT stops the running step, writes summary.txt and the archive, and
# exits 128+signal; once the deadline has passed every remaining step is skipped.
#
# usage: scripts/gpu-check.sh [--deadline SECONDS] [--dry-run] [--binaries DIR] [--logs DIR] OUTDIR
#   --deadline SECONDS  stop starting steps after this long (default 480); each
#                       step's own limit is cut to the time left
#   --dry-run           for a machine without a GPU (CI): the GPU steps say why they
#                       are skipped and the CPU steps run; without it, finding no
#                       GPU fails the check
#   --binaries DIR      run DIR/multifit, DIR/gpu_tests, DIR/kernel_bench (a build's
#                       bin/) instead of a bundle's
#   --logs DIR          keep the loose logs in DIR (new or empty) instead of OUTDIR/logs,
#                       for a GPU session that returns only 8 files from its output
#                       folder: OUTDIR then holds three, the archive holding the rest
# Exit code: 0 when no step failed.
set -uo pipefail

usage() {
  echo "usage: scripts/gpu-check.sh [--deadline SECONDS] [--dry-run] [--binaries DIR] [--logs DIR] OUTDIR" >&2
  exit 2
}
die() { echo "gpu-check: $*" >&2; exit 2; }

deadline_s=480 dry_run=0 binaries="" logs=""
while [ $# -gt 1 ]; do
  case $1 in
    --deadline) [[ ${2:-} =~ ^[0-9]+$ ]] || usage; deadline_s=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --binaries) [ -n "${2:-}" ] || usage; binaries=$2; shift 2 ;;
    --logs) [ -n "${2:-}" ] || usage; logs=$2; shift 2 ;;
    *) usage ;;
  esac
done
[ $# = 1 ] && [[ $1 != -* ]] || usage
deadline=$((SECONDS + deadline_s))
mkdir -p "$1" && out=$(cd "$1" && pwd) || die "cannot create $1"
[ -z "$binaries" ] || binaries=$(cd "$binaries" 2>/dev/null && pwd) || die "--binaries: no folder $binaries"
cd "$(dirname "$0")/.." || die "cannot enter the repository"
. scripts/env.sh

# A reused OUTDIR must not mix two checks' files. A --logs folder is not ours to empty, so it must be.
rm -rf "$out/logs" "$out/steps.txt" "$out/summary.txt" "$out/gpu-check.tar.gz"
if [ -n "$logs" ]; then
  mkdir -p "$logs" && [ -z "$(ls -A "$logs")" ] || die "--logs $logs: not a new or empty folder"
  logs=$(cd "$logs" && pwd)
else
  logs=$out/logs
  mkdir -p "$logs"
fi
: >"$out/steps.txt"
# The stage holds inputs only (the unpacked bundle, the wrappers, a derived spec), never a result:
# deleting it at exit loses nothing that a step produced.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
status=0 current="" child="" started=$SECONDS

note() { echo "$*" | tee -a "$out/steps.txt"; }
skip() { note "skipped  $1 ($2)"; }
fail() { note "FAILED   $1 ($2)"; status=1; }

# ---- the results: summary.txt and the archive, kept current so that any stop leaves them -----------
write_summary() {  # write_summary STATE [tables]
  {
    echo "gpu-check: $1 ($((SECONDS - started)) s, deadline ${deadline_s} s$( ((dry_run)) && echo ", dry run"))"
    echo
    cat "$out/steps.txt"
    if [ "${2:-}" = tables ]; then
      echo
      # bounded: a stop must still leave the archive
      if command -v python3 >/dev/null; then timeout 30 python3 benchmarks/summarize.py "$logs" || echo "summarize.py failed"
      else echo "(no python3: the tables are in the archive's JSON)"; fi
    fi
  } >"$out/summary.txt.tmp" 2>&1 && mv "$out/summary.txt.tmp" "$out/summary.txt"
}
pack() {
  # A large log or trace is kept gzipped, so that what comes back stays a few MB.
  find "$logs" -type f -size +1M ! -name '*.gz' -exec gzip -9f {} +
  tar -czf "$out/gpu-check.tar.gz.tmp" -C "$out" steps.txt -C "$logs" --transform 's|^\.|logs|' . &&
    mv "$out/gpu-check.tar.gz.tmp" "$out/gpu-check.tar.gz"
}
on_signal() {  # on_signal NAME NUMBER: stops the running step, records it, writes what there is, exits
  trap '' TERM INT
  if [ -n "$child" ]; then
    kill -TERM "$child" 2>/dev/null
    wait "$child"
    fail "$current" "stopped by SIG$1 after $((SECONDS - step_start)) s: see logs/$current.log"
  fi
  write_summary "stopped by SIG$1${current:+ during $current}; the steps after it did not run" tables
  pack
  exit $((128 + $2))
}
trap 'on_signal TERM 15' TERM
trap 'on_signal INT 2' INT

# ---- running a step -----------------------------------------------------------------------------------
# launch NAME LIMIT COMMAND...: runs COMMAND into logs/NAME.log, bounded by LIMIT seconds or the time left
# before the deadline, whichever is less; sets rc, took, limit and cut (1 when the deadline set the limit).
# Past the deadline it runs nothing, says so in steps.txt and returns 1. The command runs in the background
# so that a TERM is handled at once (bash runs a trap only after the foreground command ends), and the
# handler stops it.
launch() {
  current=$1 limit=$2 cut=0
  shift 2
  if ! may_start "$current"; then current=""; return 1; fi
  local left=$((deadline - SECONDS))
  ((limit > left)) && limit=$left cut=1
  step_start=$SECONDS rc=0
  timeout "$limit" "$@" >"$logs/$current.log" 2>&1 &
  child=$!
  wait "$child" || rc=$?
  child="" took=$((SECONDS - step_start))
}
may_start() {  # may_start NAME [WHY-NOT]: whether step NAME may start; if not, says why in steps.txt
  if ((SECONDS >= deadline)); then skip "$1" "past the deadline"; return 1; fi
  if [ -n "${2:-}" ]; then skip "$1" "$2"; return 1; fi
}
# A step stopped by the deadline is skipped, not failed: the time ran out, the code did not go wrong.
timed_out() {  # timed_out NAME: records a step that ran into its limit
  if ((cut)); then skip "$1" "stopped at the deadline after $took s: see logs/$1.log"
  else fail "$1" "over $limit s: see logs/$1.log"; fi
}
finished() { current=""; write_summary "running: unfinished (this file is rewritten after each step)"; pack; }

step() {  # step NAME LIMIT COMMAND...: one step, judged by its exit code
  local name=$1
  launch "$@" || return 0
  if ((rc == 0)); then note "ok       $name ($took s)"
  elif ((rc == 124)); then timed_out "$name"
  else fail "$name" "exit $rc, $took s: see logs/$name.log"; fi
  finished
}
gpu_step() {  # gpu_step NAME LIMIT COMMAND...: a step that needs the GPU
  may_start "$1" "$no_gpu" && step "$@"
}

# ---- the binaries and the data -------------------------------------------------------------------------
# Without a bundle the check stops instead of building in place, as it once did: a build costs minutes of
# a 15-minute session and needs packages a bare GPU machine lacks, so a bundle left behind turned silently
# into a session spent compiling. A build made by hand is named explicitly with --binaries.
if [ -n "$binaries" ]; then
  bin=$binaries
  echo "binaries: $bin (no bundle)" >"$logs/bundle.txt"
else
  bundle=${MULTIFIT_BUNDLE:-gpu-bundle/multifit-gpu.tar.gz}
  [ -f "$bundle" ] || die "no bundle at $bundle: build it with scripts/gpu-bundle.sh and take gpu-bundle/ along" \
                          "(or name a build's bin/ folder with --binaries DIR)"
  tar -xzf "$bundle" -C "$stage" || die "cannot unpack $bundle"
  bin=$stage/multifit-gpu/bin
  export MULTIFIT_DATA=$stage/multifit-gpu/data
  cp "$stage/multifit-gpu/MANIFEST" "$logs/bundle.txt"
fi
[ -x "$bin/multifit" ] || die "no multifit in $bin"

# ---- 1. the device, and cuBLAS and cuDNN (loaded at run time, found where this machine keeps them) ---
gpus_listed=$(timeout 20 nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if command -v nvidia-smi >/dev/null; then
    timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader 2>&1 |
      sed 's/^/gpu: /'
  else
    echo "gpu: nvidia-smi not found"
  fi
  command -v nvcc >/dev/null && nvcc --version | tail -1 | sed 's/^/nvcc: /'
  command -v compute-sanitizer >/dev/null && compute-sanitizer --version | sed -n '1s/^/sanitizer: /p'
  sed 's/^/bundle /' "$logs/bundle.txt"
  [ -f "$bin/gpu_tests" ] && command -v cuobjdump >/dev/null &&
    cuobjdump --list-elf --list-ptx "$bin/gpu_tests" 2>&1 | sed 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/; s/.*\.\(compute_[0-9a-z]*\)\..*/\1/' |
    sort | uniq -c | awk '{printf "%s x%s  ", $2, $1} END {print ""}' | sed 's/^/gpu_tests code: /'
} >"$logs/device.txt"

dirs=("${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64 /usr/local/cuda/lib
      /usr/local/cuda/targets/x86_64-linux/lib)
if command -v python3 >/dev/null; then  # pip's nvidia-* packages: site-packages/nvidia/*/lib
  mapfile -t -O ${#dirs[@]} dirs < <(python3 -c '
import glob, site
for root in site.getsitepackages() + [site.getusersitepackages()]:
    for lib in sorted(glob.glob(root + "/nvidia/*/lib")):
        print(lib)' 2>/dev/null)
fi
libpath=${LD_LIBRARY_PATH:-}
for lib in libcublas.so.13 libcudnn.so.9; do
  found=""
  for d in "${dirs[@]}"; do [ -e "$d/$lib" ] && { found=$d; break; }; done
  if [ -n "$found" ]; then
    libpath=$found${libpath:+:$libpath}
    echo "library: $lib from $found"
  else
    echo "library: $lib not found in ${dirs[*]}: its reference path will be refused"
  fi
done >>"$logs/device.txt"

# The library folders are given to multifit's own binaries alone, through these wrappers: put on the whole
# script's LD_LIBRARY_PATH, they would also be loaded by Python and PyTorch (the peers step) in place of
# the libraries PyTorch carries.
mkdir -p "$stage/run"
for b in multifit gpu_tests kernel_bench; do
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%q exec %q "$@"\n' "$libpath" "$bin/$b" >"$stage/run/$b"
  chmod +x "$stage/run/$b"
done
run=$stage/run

# ---- 2. multifit's view of the device ------------------------------------------------------------------
step info 30 "$run/multifit" info
no_gpu=""  # why the GPU steps are skipped; empty when they run
if [ ! -f "$logs/info.log" ]; then  # info was past the deadline
  skip cuda_device "past the deadline"
  no_gpu="past the deadline"
elif cat "$logs/info.log" >>"$logs/device.txt" && ! grep -q '^cuda:' "$logs/info.log"; then
  why=$(sed -n 's/^CUDA devices: none (\(.*\))$/\1/p' "$logs/info.log")
  why=${why:-multifit info found none: see logs/info.log}
  if ((gpus_listed > 0)); then
    # The failure that once passed unseen: every GPU step skipped as if there were no GPU.
    echo "gpu-check: nvidia-smi lists $gpus_listed GPU(s) but multifit finds no CUDA device ($why);" \
         "a driver too old for CUDA 13 does this: see logs/device.txt" >&2
    fail cuda_device "nvidia-smi lists $gpus_listed GPU(s), multifit finds none: $why"
  elif ((dry_run)); then
    note "ok       cuda_device (dry run: no GPU, so the GPU steps are skipped)"
  else
    fail cuda_device "no CUDA device: $why; on a machine without a GPU, pass --dry-run"
  fi
  no_gpu="no CUDA device: $why"
else
  note "ok       cuda_device ($(grep -c '^cuda:' "$logs/info.log") device(s))"
fi
finished

# ---- 3. the GPU tests -------------------------------------------------------------------------------------
gpu_step gpu_tests 240 "$run/gpu_tests" --gtest_output=json:"$logs/gpu_tests.json"

# ---- 4. compute-sanitizer ----------------------------------------------------------------------------------
# The suites whose kernels the tool must see: every parity suite, pack training, the CUDA graphs and the warm-up that captures them.
sanitize_filter='KernelParity*:DenseParity*:PackParity*:PackTraining*:*Graph*:WarmUp*'
# sanitize TOOL: the tool over those tests, judged by the errors its summary counts. The tests' own exit code
# is gpu_tests's business, and --report-api-errors no leaves out the API errors the libraries return and
# handle (cuDNN's probes, say). A tool that does not run here, or is stopped before its summary, is skipped.
# LD_LIBRARY_PATH reaches the tool, which hands its environment to gpu_tests; it loads no cuBLAS itself.
sanitize() {
  local tool=$1 summary errors missing=""
  command -v compute-sanitizer >/dev/null || missing="compute-sanitizer not found"
  may_start "$tool" "${no_gpu:-$missing}" || return 0
  launch "$tool" 100 env LD_LIBRARY_PATH="$libpath" compute-sanitizer --tool "$tool" --report-api-errors no \
    "$bin/gpu_tests" --gtest_filter="$sanitize_filter" || return 0
  if [ "$tool" = racecheck ]; then  # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"
    summary=$(grep -o 'RACECHECK SUMMARY: .*' "$logs/$tool.log" | tail -1)
    errors=$(sed -n 's/.*(\([0-9]*\) error.*/\1/p' <<<"$summary")
  else  # "ERROR SUMMARY: N errors"
    summary=$(grep -o 'ERROR SUMMARY: [0-9]* error[s]*' "$logs/$tool.log" | tail -1)
    errors=$(sed -n 's/ERROR SUMMARY: \([0-9]*\).*/\1/p' <<<"$summary")
  fi
  if [ -z "$errors" ]; then
    if ((rc == 124)); then timed_out "$tool"
    else skip "$tool" "the tool did not run (exit $rc: $(grep -m1 -i 'error\|not supported' "$logs/$tool.log")): see logs/$tool.log"; fi
  elif ((errors > 0)); then fail "$tool" "$summary, $took s: see logs/$tool.log"
  else note "ok       $tool ($took s, $summary$( ((rc != 0)) && echo "; the tests exited $rc"))"; fi
  finished
}
sanitize memcheck
sanitize racecheck
sanitize synccheck

# ---- 5. multifit on the CPU ------------------------------------------------------------------------------
step cpu_help 30 "$run/multifit" --help
step cpu_seed_model 60 "$run/multifit" train examples/binary-classifier.json --backend cpu \
  --json "$logs/seed_model_cpu.json"

# ---- 6. the benchmarks -----------------------------------------------------------------------------------
gpu_step kernel_bench 150 "$run/kernel_bench" --benchmark_filter='^cuda' --benchmark_min_time=0.05 \
  --benchmark_out="$logs/kernel_bench.json" --benchmark_out_format=json
b128=$stage/fashion-mnist-mlp-b128.json
sed -e 's/"batch_size": 32/"batch_size": 128/' -e 's/"epochs": 10/"epochs": 3/' examples/fashion-mnist-mlp.json >"$b128"
for variant in tiled:ours cublas:ours tiled:cudnn; do
  gemm=${variant%:*} activations=${variant#*:}
  for spec in b32:examples/fashion-mnist-mlp.json "b128:$b128"; do
    name="fashion_${spec%%:*}_${gemm}_${activations}"
    gpu_step "$name" 120 "$run/multifit" train "${spec#*:}" --backend cuda --gemm "$gemm" \
      --activations "$activations" --json "$logs/$name.json"
  done
done
gpu_step seed_model_sync_launches 60 env MULTIFIT_SYNC_LAUNCHES=1 "$run/multifit" train \
  examples/binary-classifier.json --backend cuda --json "$logs/seed_model_sync_launches.json"

# ---- 7. the studies --------------------------------------------------------------------------------------
for study in grid:examples/fashion-mnist-grid.json tiny:examples/tiny-sweep.json; do
  name="study_${study%%:*}"
  gpu_step "$name" 90 "$run/multifit" run "${study#*:}" --mode all --backend cuda --quiet \
    --json "$logs/$name.json" --csv "$logs/$name.csv" --trace "$logs/$name.trace.json"
done
if ! command -v python3 >/dev/null; then
  may_start labs "no python3"
  may_start scaling "no python3"
  may_start peers_w1 "no python3"
else
  # Every lab at its quick size on the GPU: 04 and 06 test device memory, 08 a device fault (the
  # poisoned context), 10 skips with one GPU; their verdicts are in labs/*/verdict.json.
  gpu_step labs 150 env MULTIFIT="$run/multifit" MULTIFIT_LAB_BACKEND=cuda python3 labs/run-all --quick \
    --out "$logs/labs"
  # scaling.py records a failed run in failures.txt and goes on; its exit 1 at the end fails this step only.
  gpu_step scaling 240 python3 benchmarks/scaling.py --out "$logs/scaling" --backend cuda --binary "$run/multifit" \
    --graphs on,off --fmnist-counts 1,4 --concurrency 32
  if python3 -c 'import torch' 2>/dev/null; then
    gpu_step peers_w1 90 python3 benchmarks/peers/harness.py --out "$logs/peers" --python "$(command -v python3)" \
      --multifit "$run/multifit" --device cuda --reps 2 --only w1
  else
    may_start peers_w1 "no PyTorch in this python3"
  fi
fi

write_summary "finished" tables
pack
failed=$(sed -n 's/^FAILED   \([^ ]*\).*/\1/p' "$out/steps.txt" | tr '\n' ' ')
echo "gpu-check: $out: steps.txt, summary.txt, gpu-check.tar.gz; logs in $logs${failed:+; FAILED: $failed}"
exit $status
