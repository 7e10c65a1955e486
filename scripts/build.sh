#!/usr/bin/env bash
# Sets up (scripts/setup.sh), configures and builds: the targets named as
# arguments, or everything. MULTIFIT_CUDA=ON|OFF chooses whether the build has
# CUDA (unset: where nvcc is found), MULTIFIT_MPI=ON|OFF whether it has the MPI
# ranks' runner (unset: where MPI is found), MULTIFIT_TSAN=ON|OFF whether it has the
# ThreadSanitizer tests (default ON); MULTIFIT_BUILD_DIR is the build folder
# (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
build=${MULTIFIT_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${MULTIFIT_CUDA:+-DMULTIFIT_CUDA=$MULTIFIT_CUDA} \
  -DMULTIFIT_MPI="${MULTIFIT_MPI:-AUTO}" ${MULTIFIT_TSAN:+-DMULTIFIT_TSAN=$MULTIFIT_TSAN} >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
