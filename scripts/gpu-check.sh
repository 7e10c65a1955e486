#!/usr/bin/env bash
# The GPU check: one command on a machine with an NVIDIA GPU, under 10 minutes
# on one H200. Runs the binaries of the bundle that scripts/gpu-bundle.sh made
# (gpu-bundle/multifit-gpu.tar.gz, or the file MULTIFIT_BUNDLE names); without
# one it builds in place in build-gpu/ (which needs scripts/setup.sh's packages).
#
#   1. records the device (nvidia-smi), driver, toolkit and the bundle's manifest;
#   2. finds cuBLAS 13 and cuDNN 9 in the toolkit's folders or Python's nvidia
#      packages, puts them on LD_LIBRARY_PATH and says which it used;
#   3. runs multifit from the bundle on the CPU (help, a tiny model);
#   4. runs the GPU tests (every kernel against the CPU backend, the cuBLAS and
#      cuDNN paths, Fashion-MNIST training on cuda against cpu);
#   5. runs compute-sanitizer memcheck and racecheck over the kernel parity
#      tests, each bounded in time (a refusal of the tool is reported, not failed);
#   6. runs the micro-benchmarks and times Fashion-MNIST end to end with our
#      kernels, cuBLAS products and cuDNN activations, and one run with
#      MULTIFIT_SYNC_LAUNCHES=1;
#   7. runs the contention study: the Fashion-MNIST grid and the 32 tiny models
#      in every mode (packed included), and the scaling study (benchmarks/scaling.py:
#      8, 32 and 128 tiny models, the MLP, the grid; with and without CUDA graphs);
#   8. where Python has PyTorch, W1 side by side with it (benchmarks/peers/harness.py;
#      Keras is left out, and said so, where it is not installed).
# Without a GPU (a dry run) steps 4-8 are reported as skipped, not failed.
#
# OUTDIR ends up holding two files: summary.txt and gpu-check.tar.gz (every log,
# JSON and result document). Exit code: 0 when no step failed.
#
# usage: scripts/gpu-check.sh OUTDIR
set -uo pipefail
[ $# = 1 ] || { echo "usage: scripts/gpu-check.sh OUTDIR" >&2; exit 2; }
out=$1
mkdir -p "$out" && out=$(cd "$out" && pwd) || { echo "gpu-check: cannot create $1" >&2; exit 2; }
cd "$(dirname "$0")/.."
. scripts/env.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
logs=$work/gpu-check
mkdir -p "$logs"
status=0

note() { echo "$*" | tee -a "$logs/steps.txt"; }
step() {  # step NAME SECONDS COMMAND...: runs one step, bounded in time, into NAME.log
  local name=$1 limit=$2 start=$SECONDS rc=0
  shift 2
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1 || rc=$?
  if ((rc == 0)); then note "ok       $name ($((SECONDS - start)) s)"
  else note "FAILED   $name (exit $rc$( ((rc == 124)) && echo ", over ${limit} s"), $((SECONDS - start)) s): see $name.log"; status=1; fi
}
skip() { note "skipped  $1 ($2)"; }

# ---- 1. the binaries and the data: from the bundle, else built here ------------------------------
bundle=${MULTIFIT_BUNDLE:-gpu-bundle/multifit-gpu.tar.gz}
if [ -n "${MULTIFIT_BUNDLE:-}" ] && [ ! -f "$bundle" ]; then
  echo "gpu-check: MULTIFIT_BUNDLE=$bundle: no such file; unset it to use gpu-bundle/ or build in place" >&2
  exit 2
fi
if [ -f "$bundle" ]; then
  tar -xzf "$bundle" -C "$work" || { echo "gpu-check: cannot unpack $bundle" >&2; exit 2; }
  bin=$work/multifit-gpu/bin
  export MULTIFIT_DATA=$work/multifit-gpu/data
  cp "$work/multifit-gpu/MANIFEST" "$logs/bundle.txt"
  note "bundle   $bundle ($(sed -n 's/^commit: //p' "$logs/bundle.txt"))"
else
  # The device's own architecture where nvidia-smi sees one, else the H200's (CUDA_ARCH overrides).
  arch=${CUDA_ARCH:-$(nvidia-smi -L >/dev/null 2>&1 && echo native || echo 90)}
  note "bundle   none at $bundle: building in place in build-gpu/ for CUDA architecture $arch"
  step configure 300 cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DMULTIFIT_TSAN=OFF
  if grep -q '^FAILED   configure' "$logs/steps.txt"; then skip build "configure failed"
  else step build 600 cmake --build build-gpu -j"$(nproc)" --target multifit gpu_tests kernel_bench; fi
  bin=$PWD/build-gpu/bin
fi

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  else
    echo "gpu: nvidia-smi not found"
  fi
  command -v nvcc >/dev/null && nvcc --version | tail -1 | sed 's/^/nvcc: /'
  command -v compute-sanitizer >/dev/null && compute-sanitizer --version | head -1 | sed 's/^/sanitizer: /'
  [ -f "$logs/bundle.txt" ] && sed 's/^/bundle /' "$logs/bundle.txt"
  command -v cuobjdump >/dev/null &&
    cuobjdump --list-elf --list-ptx "$bin/gpu_tests" 2>&1 | sed 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/; s/.*\.\(compute_[0-9a-z]*\)\..*/\1/' |
    sort | uniq -c | awk '{printf "%s x%s  ", $2, $1} END {print ""}' | sed 's/^/gpu_tests code: /'
} >"$logs/device.txt"

# ---- 2. cuBLAS and cuDNN: loaded at run time, found where this machine keeps them ---------------
dirs=("${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64 /usr/local/cuda/lib
      /usr/local/cuda/targets/x86_64-linux/lib)
if command -v python3 >/dev/null; then  # pip's nvidia-* packages: site-packages/nvidia/*/lib
  mapfile -t -O ${#dirs[@]} dirs < <(python3 -c '
import glob, site
for root in site.getsitepackages() + [site.getusersitepackages()]:
    for lib in sorted(glob.glob(root + "/nvidia/*/lib")):
        print(lib)' 2>/dev/null)
fi
for lib in libcublas.so.13 libcudnn.so.9; do
  found=""
  for d in "${dirs[@]}"; do [ -e "$d/$lib" ] && { found=$d; break; }; done
  if [ -n "$found" ]; then
    export LD_LIBRARY_PATH=$found${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    note "library  $lib from $found"
  else
    note "library  $lib not found in ${dirs[*]}: its reference path will be refused"
  fi
done

# ---- 3. multifit on the CPU, from the bundle ------------------------------------------------------
step info 30 "$bin/multifit" info
cat "$logs/info.log" >>"$logs/device.txt"
step cpu_help 30 "$bin/multifit" --help
step cpu_seed_model 60 "$bin/multifit" train examples/binary-classifier.json --backend cpu \
  --json "$logs/seed_model_cpu.json"

# ---- 4-6. the GPU steps -----------------------------------------------------------------------------
gpu_steps=(gpu_tests memcheck racecheck kernel_bench fashion_b32_tiled_ours fashion_b128_tiled_ours
           fashion_b32_cublas_ours fashion_b128_cublas_ours fashion_b32_tiled_cudnn fashion_b128_tiled_cudnn
           seed_model_sync_launches study_grid study_tiny scaling peers_w1)
if ! grep -q '^cuda:' "$logs/info.log"; then
  why=$(sed -n 's/^CUDA devices: none (\(.*\))$/\1/p' "$logs/info.log")
  for s in "${gpu_steps[@]}"; do skip "$s" "no CUDA device: ${why:-see info.log}"; done
else
  step gpu_tests 240 "$bin/gpu_tests" --gtest_output=json:"$logs/gpu_tests.json"

  # compute-sanitizer: errors found fail the check; a tool that cannot run here is reported and passed over.
  sanitize() {  # sanitize TOOL FILTER
    local tool=$1 filter=$2 start=$SECONDS rc=0
    if ! command -v compute-sanitizer >/dev/null; then skip "$tool" "compute-sanitizer not found"; return; fi
    timeout 100 compute-sanitizer --tool "$tool" --error-exitcode 3 "$bin/gpu_tests" --gtest_filter="$filter" \
      >"$logs/$tool.log" 2>&1 || rc=$?
    local summary
    summary=$(grep -o 'ERROR SUMMARY: [0-9]* error[s]*\|RACECHECK SUMMARY: [0-9]* hazard[s]*.*' "$logs/$tool.log" | tail -1)
    if ((rc == 0)); then note "ok       $tool ($((SECONDS - start)) s, ${summary:-no summary})"
    elif ((rc == 124)); then note "stopped  $tool (over 100 s, ${summary:-no summary}): see $tool.log"
    elif [ -n "$summary" ]; then note "FAILED   $tool (exit $rc, $summary): see $tool.log"; status=1
    else note "refused  $tool (exit $rc: $(grep -m1 -i 'error\|not supported' "$logs/$tool.log")): see $tool.log"; fi
  }
  sanitize memcheck 'KernelParity.*:GpuCublas.*:GpuCudnn.*'
  sanitize racecheck 'KernelParity.*'

  step kernel_bench 150 "$bin/kernel_bench" --benchmark_filter='^cuda' --benchmark_min_time=0.05 \
    --benchmark_out="$logs/kernel_bench.json" --benchmark_out_format=json

  b128=$work/fashion-mnist-mlp-b128.json
  sed -e 's/"batch_size": 32/"batch_size": 128/' -e 's/"epochs": 10/"epochs": 3/' examples/fashion-mnist-mlp.json >"$b128"
  for variant in tiled:ours cublas:ours tiled:cudnn; do
    gemm=${variant%:*} activations=${variant#*:}
    for run in b32:examples/fashion-mnist-mlp.json "b128:$b128"; do
      name="fashion_${run%%:*}_${gemm}_${activations}"
      step "$name" 120 "$bin/multifit" train "${run#*:}" --backend cuda --gemm "$gemm" --activations "$activations" \
        --json "$logs/$name.json"
    done
  done
  step seed_model_sync_launches 60 env MULTIFIT_SYNC_LAUNCHES=1 "$bin/multifit" train examples/binary-classifier.json \
    --backend cuda --json "$logs/seed_model_sync_launches.json"

  # ---- 7. the contention study ----------------------------------------------------------------------
  for study in grid:examples/fashion-mnist-grid.json tiny:examples/tiny-sweep.json; do
    name="study_${study%%:*}"
    step "$name" 90 "$bin/multifit" run "${study#*:}" --mode all --backend cuda --quiet --json "$logs/$name.json" \
      --csv "$logs/$name.csv" --trace "$logs/$name.trace.json"
  done
  if command -v python3 >/dev/null; then
    step scaling 240 python3 benchmarks/scaling.py --out "$logs/scaling" --backend cuda --binary "$bin/multifit" \
      --graphs on,off --fmnist-counts 1,4
    if python3 -c 'import torch' 2>/dev/null; then
      step peers_w1 90 python3 benchmarks/peers/harness.py --out "$logs/peers" --python "$(command -v python3)" \
        --multifit "$bin/multifit" --device cuda --reps 2 --only w1
    else
      skip peers_w1 "no PyTorch in this python3"
    fi
  else
    skip scaling "no python3"
    skip peers_w1 "no python3"
  fi
fi

# ---- the summary and one archive of everything ------------------------------------------------------
{
  cat "$logs/steps.txt"
  echo
  if command -v python3 >/dev/null; then python3 benchmarks/summarize.py "$logs" || echo "summarize.py failed"
  else echo "(no python3: the tables are in the archive's JSON)"; fi
} >"$logs/summary.txt" 2>&1
cp "$logs/summary.txt" "$out/summary.txt"
tar -C "$work" -czf "$out/gpu-check.tar.gz" gpu-check
echo "gpu-check: $out/summary.txt and $out/gpu-check.tar.gz ($(grep -c '^FAILED' "$logs/steps.txt") failed)"
exit $status
