#!/usr/bin/env bash
# Sets up, builds, and runs the main job: the contention study on the Fashion-MNIST
# grid (activation tanh or relu x hidden layers (10), (100), (10,10), (100,10): 8 MLPs)
# in every mode, serial, streams, processes and packed, on the best available backend. Prints
# each mode's table (each model's test accuracy, slowdown, memory) and the modes side
# by side; the documents go to results/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh multifit
mkdir -p results
build/bin/multifit run examples/fashion-mnist-grid.json --mode all --backend auto --quiet \
  --json results/fashion-mnist-grid.json --csv results/fashion-mnist-grid.csv \
  --trace results/fashion-mnist-grid.trace.json
echo "results: results/fashion-mnist-grid.{json,csv} and a trace for ui.perfetto.dev: results/fashion-mnist-grid.trace.json"
