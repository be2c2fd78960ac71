#!/usr/bin/env bash
#===- scripts/format.sh - clang-format the project's C and C++ -----------===#
#
#   scripts/format.sh          reformat every C/C++ source in place
#   scripts/format.sh --check  report (and fail on) any that is not formatted
#
# The style is .clang-format (LLVM's). clang-format-22 comes from apt
# (scripts/setup.sh), so every machine formats alike.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

cd "$(dirname "$0")/.."
CLANG_FORMAT=/usr/lib/llvm-22/bin/clang-format
DIRS=(include lib tools python unittests benchmarks fuzz)

if [[ -d .git ]] || git rev-parse --git-dir > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- "${DIRS[@]}" | grep -E '\.(h|c|cpp)$')
else
  mapfile -t files < <(find "${DIRS[@]}" -type f \
    \( -name '*.h' -o -name '*.c' -o -name '*.cpp' \) | sort)
fi

if [[ "${1:-}" == "--check" ]]; then
  if ! "$CLANG_FORMAT" --dry-run -Werror "${files[@]}"; then
    echo "format: run scripts/format.sh (clang-format, .clang-format)" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted"
else
  "$CLANG_FORMAT" -i "${files[@]}"
fi
