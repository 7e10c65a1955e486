#!/usr/bin/env bash
# multifit as a C++ library, used as one: installs BUILD_DIR's development component (the layers'
# static libraries, their headers, the CMake package) to a temporary prefix, then configures, builds
# and runs examples/cpp/ against it alone, as a user's project outside the tree would: found through
# CMAKE_PREFIX_PATH, with no path into the source or build tree. The example trains two models on
# two streams and then each alone, on the cpu backend; its output must name both with a slowdown.
set -euo pipefail
trap 'echo "install check: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
build=$(cd "${1:?usage: tests/install/check.sh BUILD_DIR}" && pwd)
cd "$(dirname "$0")/../.."
repo=$(pwd)
. scripts/env.sh  # nvcc on PATH: a CUDA build's package finds the CUDA toolkit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install check: $*" >&2; exit 1; }

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" --component development >/dev/null
for f in include/multifit/study/runner.h include/multifit/nn/sweep.h include/multifit/kernels/openblas.h \
         lib/cmake/multifit/multifitConfig.cmake lib/cmake/multifit/multifitConfigVersion.cmake; do
  [ -f "$prefix/$f" ] || fail "the install lacks $f"
done
[ ! -e "$prefix/bin" ] || fail "the development component installed programs: $(ls "$prefix/bin")"

# The same C++ compiler as the build (the libraries are C++20 static archives).
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
example=$tmp/example
cmake -S examples/cpp -B "$example" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
      >"$tmp/configure.txt" 2>&1 || { cat "$tmp/configure.txt" >&2; fail "examples/cpp did not configure"; }
found=$(sed -n 's/^multifit_DIR:[A-Z]*=//p' "$example/CMakeCache.txt")
[ "$found" = "$prefix/lib/cmake/multifit" ] || fail "find_package(multifit) found $found, not the install"
cmake --build "$example" -j2 >"$tmp/build.txt" 2>&1 || { cat "$tmp/build.txt" >&2; fail "examples/cpp did not build"; }
# The compile and link lines reach the headers and libraries through the prefix only.
if grep -l -e "$repo/" -e "$build/" "$example"/CMakeFiles/two_models.dir/{flags.make,link.txt}; then
  fail "the example is built with paths into the source or build tree"
fi

"$example/two_models" >"$tmp/out.txt" 2>"$tmp/err.txt" || { cat "$tmp/out.txt" "$tmp/err.txt" >&2; fail "two_models failed"; }
cat "$tmp/out.txt"
for model in classifier regressor; do
  grep -Eq "^$model +streams [0-9.]+ s, alone [0-9.]+ s: slowdown [0-9.]+x$" "$tmp/out.txt" ||
    fail "the output has no slowdown for $model"
done
grep -q '^cpu backend' "$tmp/out.txt" || fail "the example did not train on the cpu backend by default"
echo "install check: passed"
