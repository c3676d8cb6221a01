#!/usr/bin/env bash
# Installs the Debian 12 packages Quiver's build, tests, benches and scripts
# need. Idempotent: asks dpkg which are missing and installs only those
# (running apt-get update once first). Runs apt-get as root, or through sudo.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git
  clang clang-format clang-tidy
  libabsl-dev libmimalloc-dev libxsimd-dev nlohmann-json3-dev libsimdjson-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-jsonschema python3-matplotlib
  # quiver-bench only (the analytics family's peers); the library never links them
  libboost-graph-dev libigraph-dev
  # quiver-csv-probe only (the CSV splitter measured beside libcsv); the library never links it
  libcsv-dev
  # the quiver tool's argument parser (header-only); the library never includes it
  libcli11-dev
  util-linux  # setarch, for ThreadSanitizer on kernels with high mmap entropy
)

missing=()
for pkg in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != "installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: missing ${missing[*]}, and not root and no sudo to install them" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
