#!/usr/bin/env bash
# The GPU check, one command for a machine with an NVIDIA GPU (about 5 minutes
# on one H200):
#   1. builds the tests and benchmarks in build-gpu/ for the device's own
#      architecture (or the one CUDA_ARCH names, e.g. CUDA_ARCH=90);
#   2. runs the GPU test suite: every kernel against the CPU backend (parity),
#      the cuBLAS and cuDNN paths, a 3-epoch Fashion-MNIST training on cuda vs cpu;
#   3. runs the micro-benchmarks of the CUDA backend: ours, cuBLAS, cuDNN;
#   4. times Fashion-MNIST end to end (10 epochs at batch 32, 3 at batch 128)
#      on cuda with our kernels, with cuBLAS products and with cuDNN activations.
# Everything lands in OUTDIR: logs, gtest and benchmark JSON, result documents,
# and summary.txt. Exit code: 0 when every step passed.
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
. scripts/env.sh
status=0
step() {  # step NAME COMMAND...: runs and logs one step, remembering a failure
  local name=$1; shift
  local start=$SECONDS
  if "$@" >"$out/$name.log" 2>&1; then echo "ok      $name ($((SECONDS - start))s)"
  else echo "FAILED  $name ($((SECONDS - start))s), see $name.log"; status=1; fi
}

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  nvcc --version | tail -1 | sed 's/^/nvcc: /'
} >"$out/device.txt"

step configure cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-native}" \
  -DMULTIFIT_TSAN=OFF
step build cmake --build build-gpu -j"$(nproc)" --target multifit gpu_tests kernel_bench
step gpu_tests build-gpu/bin/gpu_tests --gtest_output=json:"$out/gpu_tests.json"
step kernel_bench build-gpu/bin/kernel_bench --benchmark_filter='^cuda' --benchmark_min_time=0.05 \
  --benchmark_out="$out/kernel_bench.json" --benchmark_out_format=json

b128=$out/fashion-mnist-mlp-b128.json
sed -e 's/"batch_size": 32/"batch_size": 128/' -e 's/"epochs": 10/"epochs": 3/' examples/fashion-mnist-mlp.json >"$b128"
variants="tiled:ours cublas:ours"
grep -q "cuDNN not found" "$out/configure.log" || variants+=" tiled:cudnn"
for variant in $variants; do
  gemm=${variant%:*} activations=${variant#*:}
  name="${gemm}_${activations}"
  step "fashion_b32_$name" build-gpu/bin/multifit train examples/fashion-mnist-mlp.json --backend cuda \
    --gemm "$gemm" --activations "$activations" --json "$out/fashion_b32_$name.json"
  step "fashion_b128_$name" build-gpu/bin/multifit train "$b128" --backend cuda \
    --gemm "$gemm" --activations "$activations" --json "$out/fashion_b128_$name.json"
done
step seed_model build-gpu/bin/multifit train examples/binary-classifier.json --backend cuda --json "$out/seed_model.json"

if command -v python3 >/dev/null; then
  python3 benchmarks/summarize.py "$out" >"$out/summary.txt" 2>&1 || status=1
  cat "$out/summary.txt"
fi
exit $status
