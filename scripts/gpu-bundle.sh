#!/usr/bin/env bash
# Builds the GPU bundle here, on a machine without a GPU, for a GPU machine
# that has the CUDA toolkit but none of our Debian packages and no network:
#
#   gpu-bundle/multifit-gpu.tar.xz  (ignored by git), holding multifit-gpu/ with
#     bin/   multifit, gpu_tests, kernel_bench: sm_90 machine code plus compute_90
#            PTX, stripped, an RPATH to ../lib
#     lib/   every shared library they need that a bare CUDA machine lacks
#     data/  fashion-mnist/, the four IDX files (MULTIFIT_DATA points here)
#     MANIFEST  commit, date, toolkit, and what the machine must provide
#
# The GPU machine provides the rest: the driver, cuBLAS and cuDNN (loaded at run
# time, found by scripts/gpu-check.sh) and the C/C++ runtime. The script checks
# that nothing else is needed, that the GLIBC the binaries ask for is no newer
# than this Debian 12 build's, that the bundle with the repository fits what a
# GPU session can carry (64 MiB; the bound here is 60), and that multifit runs
# from an unpacked copy; it says how much of that the check itself needs (the
# bundle and scripts/gpu-travel.txt's files).
#
# usage: scripts/gpu-bundle.sh [--from BUILD_DIR] [OUTDIR]   (default OUTDIR: gpu-bundle)
#   --from BUILD_DIR  pack what an existing build holds instead of building build-gpu/ (the tests do)
set -euo pipefail
trap 'echo "gpu-bundle: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/gpu-bundle.sh [--from BUILD_DIR] [OUTDIR]" >&2; exit 2; }
build=""
if [ "${1:-}" = --from ]; then
  [ $# -ge 2 ] || usage
  build=$2
  shift 2
fi
[ $# -le 1 ] && [[ ${1:-} != -* ]] || usage
out=${1:-gpu-bundle}
limit_mib=60                       # the bundle and the repository, together
glibc_max=2.36                     # Debian 12's
# What the GPU machine provides: the C/C++ runtime, the driver, cuBLAS and cuDNN.
provided='^(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux-x86-64|libcuda|libcublas|libcublasLt|libcudnn)\.so'

if [ -z "$build" ]; then
  # Without MPI: a bare GPU machine has no MPI libraries to load. In a folder of its own, so that
  # the user's build/ keeps its MPI (and is not rebuilt each time either is made).
  build=build-gpu
  MULTIFIT_BUILD_DIR=$build MULTIFIT_CUDA=ON MULTIFIT_MPI=OFF scripts/build.sh multifit gpu_tests kernel_bench
else
  . scripts/env.sh
fi
[ -f "$build/CMakeCache.txt" ] || { echo "gpu-bundle: $build is not a CMake build folder" >&2; exit 2; }
data=${MULTIFIT_DATA:-/usr/share/datasets}/fashion-mnist
[ -d "$data" ] || { echo "gpu-bundle: $data not found; scripts/setup.sh installs dataset-fashion-mnist" >&2; exit 2; }

# The GPU code must be Hopper machine code plus its PTX (what CMake's default architecture 90 gives).
gencode=$(grep -ho -- '--generate-code=[^ ]*' "$build/backends/cuda/CMakeFiles/mf_cuda.dir/flags.make" | sort -u | tr '\n' ' ')
[[ $gencode == *compute_90* && $gencode == *sm_90* ]] ||
  { echo "gpu-bundle: $build compiles CUDA for '$gencode', not sm_90 with compute_90 PTX" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/multifit-gpu
# The programs only: the component development (headers, static libraries, the CMake package) is no
# part of a bundle.
cmake --install "$build" --prefix "$root" --component runtime --strip >/dev/null

# lib/: OpenBLAS (loaded at run time, so no binary lists it) and, transitively, whatever the
# binaries and the copied libraries need that the machine does not provide.
mkdir -p "$root/lib"
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
# (awk reads to the end: an early exit would kill ldconfig with SIGPIPE, a failure under pipefail)
resolve() { ldconfig -p | awk -v lib="$1" '$1 == lib && /x86-64/ && !found {print $NF; found = 1}'; }
queue=(libopenblas.so.0)
for bin in "$root"/bin/*; do mapfile -t -O ${#queue[@]} queue < <(needed "$bin"); done
while ((${#queue[@]})); do
  lib=${queue[0]}
  queue=("${queue[@]:1}")
  [[ $lib =~ $provided ]] && continue
  [ -e "$root/lib/$lib" ] && continue
  path=$(resolve "$lib")
  [ -n "$path" ] || { echo "gpu-bundle: $lib is needed but not installed here" >&2; exit 1; }
  cp -L "$path" "$root/lib/$lib"
  mapfile -t -O ${#queue[@]} queue < <(needed "$root/lib/$lib")
done

mkdir -p "$root/data"
cp -rL "$data" "$root/data/fashion-mnist"

# Every library any bundled file needs is in lib/ or provided by the machine.
unresolved=()
for elf in "$root"/bin/* "$root"/lib/*; do
  for lib in $(needed "$elf"); do
    [[ $lib =~ $provided ]] || [ -e "$root/lib/$lib" ] || unresolved+=("$(basename "$elf") needs $lib")
  done
done
if ((${#unresolved[@]})); then
  printf 'gpu-bundle: unresolved: %s\n' "${unresolved[@]}" >&2
  exit 1
fi

# The newest GLIBC and GLIBCXX symbol versions any bundled file asks for.
newest() { objdump -T "$root"/bin/* "$root"/lib/* | grep -o "$1_[0-9.]*" | sed "s/$1_//" | sort -V | tail -1; }
glibc=$(newest GLIBC)
glibcxx=$(newest GLIBCXX)
if [ "$(printf '%s\n%s\n' "$glibc" "$glibc_max" | sort -V | tail -1)" != "$glibc_max" ]; then
  echo "gpu-bundle: the binaries need GLIBC $glibc, newer than Debian 12's $glibc_max" >&2
  exit 1
fi

{
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  date -u +"built: %Y-%m-%dT%H:%M:%SZ"
  echo "nvcc: $(nvcc --version | tail -1)"
  echo "cuda code: $gencode"
  echo "needs from the machine: the NVIDIA driver, libcublas.so.13, libcudnn.so.9, GLIBC >= $glibc, GLIBCXX >= $glibcxx"
  echo "libraries carried: $(cd "$root/lib" && echo *)"
} >"$root/MANIFEST"

# Runs from an unpacked copy as it will on the GPU machine: the carried OpenBLAS, the carried data.
multifit="$root/bin/multifit"
"$multifit" --help >/dev/null
MULTIFIT_DATA=$root/data "$multifit" info >"$stage/info.txt"
grep -q "OpenBLAS: $root/lib/libopenblas.so.0" "$stage/info.txt" ||
  { echo "gpu-bundle: multifit did not load the bundle's OpenBLAS:" >&2; cat "$stage/info.txt" >&2; exit 1; }
"$multifit" train examples/binary-classifier.json --backend cpu --quiet >/dev/null

mkdir -p "$out"
# xz, not gzip: the binaries and libraries take 9 MiB instead of 20, room the repository's records
# need under the 64 MiB a GPU session carries (the data's files are gzip already).
tar -C "$stage" -cf - multifit-gpu | xz -T0 -6 >"$out/multifit-gpu.tar.xz"
# What travels: the bundle with what the check reads of the repository (scripts/gpu-travel.txt), and, as
# a GPU session carries the whole working tree, with every tracked file.
bytes() { xargs -0 -r stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}'; }
mib() { echo $(( ($1 + 1048575) / 1048576 )); }
mapfile -t travel < <(grep -v '^#' scripts/gpu-travel.txt)
bundle_bytes=$(stat -c %s "$out/multifit-gpu.tar.xz")
travel_bytes=$(git ls-files -z -- "${travel[@]}" | bytes)
repo_bytes=$(git ls-files -z | bytes)
total_mib=$(mib $((bundle_bytes + repo_bytes)))
echo "gpu-bundle: $out/multifit-gpu.tar.xz, $(mib "$bundle_bytes") MiB" \
     "($total_mib MiB with the repository; at most $limit_mib)"
echo "gpu-bundle: the check needs it and, of the repository, what scripts/gpu-travel.txt lists" \
     "($(printf '%s, ' "${travel[@]}" | sed 's/:!/less /g; s/, $//')): $(mib $((bundle_bytes + travel_bytes))) MiB together"
echo "gpu-bundle: carried: $(cd "$root/lib" && echo *), fashion-mnist"
echo "gpu-bundle: left to the GPU machine: the NVIDIA driver, cuBLAS 13, cuDNN 9," \
     "the C/C++ runtime (GLIBC >= $glibc, GLIBCXX >= $glibcxx)"
if ((total_mib > limit_mib)); then
  echo "gpu-bundle: too large: $total_mib MiB with the repository, over $limit_mib" >&2
  exit 1
fi
