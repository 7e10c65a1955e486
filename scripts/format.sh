#!/usr/bin/env bash
# Lays out the C++ and CUDA sources by .clang-format (100 columns): scripts/format.sh rewrites them,
# scripts/format.sh --check only lists those it would change and exits 1 when there are any (the
# ctest format.SourcesAreClangFormatted). The layout is clang-format 14's, which scripts/setup.sh
# installs; another version may break lines otherwise, so --check skips (exit 77) under one.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format: clang-format is not installed (scripts/setup.sh installs it)"; exit 77; }
version=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
mapfile -t files < <(git ls-files '*.h' '*.cpp' '*.cu' '*.cuh')
if [ "${1:-}" = --check ]; then
  [ "$version" = 14 ] || { echo "format: clang-format $version here; the layout is clang-format 14's"; exit 77; }
  changed=()
  for f in "${files[@]}"; do clang-format "$f" | cmp -s - "$f" || changed+=("$f"); done
  if ((${#changed[@]})); then
    printf 'format: %s is not laid out as .clang-format says (scripts/format.sh fixes it)\n' "${changed[@]}"
    exit 1
  fi
  echo "format: ${#files[@]} files laid out as .clang-format says"
else
  clang-format -i "${files[@]}"
fi
