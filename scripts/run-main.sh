#!/usr/bin/env bash
# Quiver's main job: bash scripts/run-main.sh
#
# Builds the release preset and shows what Quiver does and how fast:
#   1. install the Debian packages the build needs
#   2. configure and build the `release` preset
#   3. run the basic example (examples/basic.cc)
#   4. run the micro-benchmarks with a short minimum time, if any are built
#   5. run the capacity bench's quick profile and render its report into
#      docs/capacity-and-performance.md, once bench/capacity and
#      scripts/render-capacity-doc exist
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs="${QUIVER_JOBS:-2}"
build_dir=build/release

section() {
  printf '\n==================== %s ====================\n' "$*"
}

run_example() {
  section "example: examples/basic.cc"
  "$build_dir/examples/quiver_example_basic"
}

run_micro_bench() {
  local bench="$build_dir/bench/quiver_micro_bench"
  if [[ ! -x "$bench" ]]; then
    echo "run-main: no micro-benchmarks built yet (bench/micro/*_bench.cc)"
    return 0
  fi
  section "micro-benchmarks (short run)"
  # google-benchmark 1.7 takes --benchmark_min_time in seconds, without a unit.
  "$bench" --benchmark_min_time=0.05
}

# The capacity bench (bench/capacity, executable quiver-bench) writes
# capacity-report.json, validated against schemas/capacity-report.schema.json;
# scripts/render-capacity-doc turns it into docs/capacity-and-performance.md.
# Both run here as soon as they exist.
run_capacity_bench() {
  local bench="$build_dir/bench/quiver-bench"
  if [[ ! -x "$bench" || ! -e scripts/render-capacity-doc ]]; then
    echo "run-main: capacity bench not built yet (bench/capacity, scripts/render-capacity-doc)"
    return 0
  fi
  section "capacity bench (quick profile)"
  "$bench" --profile quick --out "$build_dir/capacity-report.json"
  # The committed page shows the committed full-profile report; this run's
  # quick figures go into a rendered copy of it beside the build.
  section "capacity report -> $build_dir/capacity/capacity-and-performance.md"
  mkdir -p "$build_dir/capacity/capacity"
  cp docs/capacity-and-performance.md "$build_dir/capacity/capacity-and-performance.md"
  scripts/render-capacity-doc --report "$build_dir/capacity-report.json" \
    --page "$build_dir/capacity/capacity-and-performance.md" --svg-dir "$build_dir/capacity/capacity"
  echo "run-main: rendered $build_dir/capacity/capacity-and-performance.md"
}

section "dependencies"
bash scripts/install-deps.sh

section "build: release preset"
cmake --preset release
cmake --build --preset release -j "$jobs"

run_example
run_micro_bench
run_capacity_bench

section "done"
