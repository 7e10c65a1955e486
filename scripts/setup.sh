#!/usr/bin/env bash
# Installs what multifit needs to build and test, if it is missing (Debian
# packages), and says whether the build has CUDA. Safe to run again.
set -euo pipefail

packages=(cmake g++ make pkg-config libcli11-dev nlohmann-json3-dev libopenblas-dev libxsmm-dev libgtest-dev libgmock-dev
          libbenchmark-dev zlib1g-dev python3 python3-dev python3-venv python3-matplotlib python3-pandas chromium dataset-fashion-mnist openmpi-bin
          libopenmpi-dev libboost-dev clang-format xz-utils)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

. "$(dirname "$0")/env.sh"
# MULTIFIT_CUDA=ON|OFF chooses; unset, the build has CUDA where nvcc is found.
case "${MULTIFIT_CUDA:-}" in
  ""|ON|OFF) ;;
  *) echo "setup: MULTIFIT_CUDA=${MULTIFIT_CUDA}: use ON or OFF" >&2; exit 2 ;;
esac
if ! command -v nvcc >/dev/null; then
  if [ "${MULTIFIT_CUDA:-}" = ON ]; then
    echo "setup: MULTIFIT_CUDA=ON needs the CUDA toolkit 13 (nvcc); install it, or build with MULTIFIT_CUDA=OFF" >&2
    exit 2
  fi
  [ "${MULTIFIT_CUDA:-}" = OFF ] ||
    echo "setup: no CUDA toolkit (nvcc): building the CPU backend and host execution only (MULTIFIT_CUDA=OFF)"
fi
