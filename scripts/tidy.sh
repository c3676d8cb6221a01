#!/usr/bin/env bash
# Runs clang-tidy 14 with .clang-tidy over the engine's sources (or the files
# given), using the compile database of the dev preset. Not part of the test
# run: lint findings are reviewed, not gated.
#   scripts/tidy.sh                 all of src/
#   scripts/tidy.sh src/storage/*.cc
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ! -f build/dev/compile_commands.json ]]; then
  cmake --preset dev >/dev/null
fi
if (($# > 0)); then
  files=("$@")
else
  mapfile -t files < <(find src -type f -name '*.cc' | sort)
fi
clang-tidy -p build/dev --quiet "${files[@]}"
