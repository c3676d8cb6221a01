#!/usr/bin/env bash
# Rewrites every C++ file of the project with clang-format 14 and .clang-format.
# The `format` ctest label checks the same files without changing them.
#   scripts/format.sh          format in place
#   scripts/format.sh --check  report files that need formatting, exit 1 if any
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

clang_format="$(command -v clang-format-14 || command -v clang-format || true)"
if [[ -z "$clang_format" ]]; then
  echo "format.sh: clang-format not found (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
if ! "$clang_format" --version | grep -q 'version 14\.'; then
  echo "format.sh: warning: $("$clang_format" --version) is not clang-format 14; results may differ from CI" >&2
fi

mapfile -t files < <(find include src tests bench examples tools fuzz -type f \( -name '*.h' -o -name '*.cc' \) 2>/dev/null | sort)
if ((${#files[@]} == 0)); then
  echo "format.sh: no files" >&2
  exit 1
fi

if [[ "${1:-}" == "--check" ]]; then
  "$clang_format" --style=file --dry-run --Werror "${files[@]}"
  echo "format.sh: ${#files[@]} files are formatted"
else
  "$clang_format" --style=file -i "${files[@]}"
  echo "format.sh: formatted ${#files[@]} files"
fi
