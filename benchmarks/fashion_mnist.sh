#!/usr/bin/env bash
# End to end: the Fashion-MNIST example (784-256-128-10, Adam, 10 epochs,
# batch 32) on one backend. Writes the result document and a description of
# the machine into OUTDIR; benchmarks/summarize.py OUTDIR tabulates them.
set -euo pipefail
backend=${1:?usage: benchmarks/fashion_mnist.sh cpu|cuda OUTDIR}
out=${2:?usage: benchmarks/fashion_mnist.sh cpu|cuda OUTDIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  lscpu | sed -n 's/^Model name: *\(.*\)/cpu: \1/p'
  echo "cores: $(nproc)"
  free -h | awk '/^Mem:/ {print "memory: " $2}'
  build/bin/multifit info | sed 's/^/device: /'
} >"$out/machine.txt"
build/bin/multifit train examples/fashion-mnist-mlp.json --backend "$backend" --json "$out/fashion-mnist-mlp-$backend.json"
