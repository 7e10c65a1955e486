#!/usr/bin/env bash
# Sets up, builds, and runs the main job: the Fashion-MNIST MLP (784-256-128-10)
# on the best available backend, with its result in results/fashion-mnist-mlp.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh multifit
mkdir -p results
build/bin/multifit train examples/fashion-mnist-mlp.json --backend auto --json results/fashion-mnist-mlp.json
echo "result: results/fashion-mnist-mlp.json"
