#!/usr/bin/env bash
# Installs what multifit needs to build and test, if it is missing (Debian
# packages), and checks for the CUDA toolkit. Safe to run again.
set -euo pipefail

packages=(cmake g++ make pkg-config libcli11-dev nlohmann-json3-dev libopenblas-dev libgtest-dev libgmock-dev
          libbenchmark-dev zlib1g-dev dataset-fashion-mnist)
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
command -v nvcc >/dev/null || { echo "setup: the CUDA toolkit (nvcc) is required to build; install it" >&2; exit 2; }
