#!/usr/bin/env bash
# Quiver's whole test run, as CI runs it (.ci/run) and as the README tells a
# developer to: bash scripts/test.sh
#
#   0. install the Debian packages the build needs (scripts/install-deps.sh)
#   1. asan    build the library, tests, examples and tools under ASan +
#              UBSan (no benchmarks: the release stage builds those); run
#              every default test (unit, model, durability, concurrency,
#              crash, format, package, example, fuzz replay)
#   2. tsan    build the concurrency tests under TSan; run label `concurrency`
#   3. release the optimised build without the gtest binaries (preset
#              ci-release; ASan ran them): headers, examples, package, the
#              capacity report scripts' tests, the
#              crash loop at 70 iterations, and the capacity bench's quick
#              profile, recorded into a scratch copy of the history, with the
#              release gate's verdict printed in report-only mode
#              (capacity.gate_quick_report_only); a short pass over the
#              micro-benchmarks
#   4. fuzz    clang 14: the library with -Wthread-safety -Werror and the
#              libFuzzer targets under ASan + UBSan, 20 s each
#
# Tests labelled `soak` never run here. Exits non-zero on the first failing
# stage. Sized for 2 cores: QUIVER_JOBS (default 2) sets build and ctest
# parallelism.
#
# Disk: each stage prints its build tree's size and the space left. With
# QUIVER_PRUNE_BUILD_TREES=1 (.ci/run sets it) a stage's build tree is
# removed once the stage has passed, so the run needs the largest tree's
# room, not all four's: a CI machine's disk is shared, and a link that runs
# out of space fails the run without saying anything about the code.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs="${QUIVER_JOBS:-2}"
started=$SECONDS
stage_log=()

section() {
  printf '\n==================== %s ====================\n' "$*"
}

# Prints the space left on the file system holding the checkout.
report_disk() {
  echo "test.sh: disk: $(df -Ph . | awk 'NR == 2 { print $4 " free of " $2 " on " $6 }')"
}

# Records how long the stage that started at $1 took, reports the size of
# its build tree ($3, if given) and removes that tree when asked to
# (QUIVER_PRUNE_BUILD_TREES=1).
finish_stage() {
  stage_log+=("$(printf '%-8s %4ds' "$2" $((SECONDS - $1)))")
  local tree="${3:-}"
  if [[ -n "$tree" && -d "$tree" ]]; then
    echo "test.sh: $tree holds $(du -sh "$tree" | cut -f1)"
    if [[ "${QUIVER_PRUNE_BUILD_TREES:-0}" == 1 ]]; then
      rm -rf "$tree"
      echo "test.sh: removed $tree (QUIVER_PRUNE_BUILD_TREES=1)"
    fi
  fi
  report_disk
}

total_passed=0
total_failed=0
total_skipped=0

# Runs a ctest command line (possibly behind a launcher such as setarch),
# keeping its output visible, and adds its counts to the totals printed at the
# end. With pipefail, a failing ctest fails the script.
run_ctest() {
  local log
  log="$(mktemp)"
  "$@" 2>&1 | tee "$log"
  local summary
  summary="$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1 || true)"
  if [[ "$summary" =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
    local failed="${BASH_REMATCH[1]}" total="${BASH_REMATCH[2]}" skipped
    skipped="$(grep -cE '^[[:space:]]+[0-9]+ - .*\((Skipped|Disabled)\)' "$log" || true)"
    total_failed=$((total_failed + failed))
    total_skipped=$((total_skipped + skipped))
    total_passed=$((total_passed + total - failed - skipped))
  fi
  rm -f "$log"
}

configure_and_build() {
  local preset="$1"
  shift
  cmake --preset "$preset"
  cmake --build --preset "$preset" -j "$jobs" "$@"
}

# Prints the command prefix TSan needs on this kernel: nothing, or setarch -R
# where a high vm.mmap_rnd_bits makes TSan abort with "unexpected memory
# mapping". Fails if TSan cannot run either way.
tsan_launcher() {
  local dir
  dir="$(mktemp -d)"
  printf '#include <thread>\nint x;\nint main() { std::thread t([] { x = 1; }); t.join(); return x - 1; }\n' \
    >"$dir/probe.cc"
  c++ -std=c++20 -fsanitize=thread -O1 "$dir/probe.cc" -o "$dir/probe"
  local out
  if out="$("$dir/probe" 2>&1)"; then
    rm -rf "$dir"
    return 0
  fi
  if grep -q "unexpected memory mapping" <<<"$out" &&
    setarch "$(uname -m)" -R "$dir/probe" >/dev/null 2>&1; then
    rm -rf "$dir"
    echo "setarch $(uname -m) -R"
    return 0
  fi
  rm -rf "$dir"
  echo "test.sh: ThreadSanitizer cannot run on this machine:" >&2
  echo "$out" >&2
  return 1
}

section "0/4 dependencies"
report_disk
bash scripts/install-deps.sh

section "1/4 asan: ASan + UBSan, all default tests"
t=$SECONDS
configure_and_build asan
# The unity units share each file's anonymous namespace: a helper that
# overloads another file's compiles and may bind silently (tests/CMakeLists.txt).
python3 scripts/test-unity-names.py build/asan
# headers.self_contained is a compile check: the release stage runs it
# (the ci-asan test preset leaves it out).
run_ctest ctest --preset ci-asan -j "$jobs"
finish_stage "$t" asan build/asan

section "2/4 tsan: ThreadSanitizer, label concurrency"
t=$SECONDS
if [[ -f tests/concurrency_test.cc ]]; then
  launcher="$(tsan_launcher)"
  if [[ -n "$launcher" ]]; then
    echo "test.sh: running TSan under '$launcher' (this kernel's mmap layout needs it)"
  fi
  configure_and_build tsan --target quiver_concurrency_test
  # shellcheck disable=SC2086  # $launcher is a command prefix: split it.
  # Ten times the default iterations: long enough for real interleavings
  # (about 15 s under TSan), short enough for CI.
  QUIVER_CONCURRENCY_ITERS=1000 QUIVER_CONCURRENT_COMMITS=1500 \
    run_ctest $launcher ctest --preset tsan -j "$jobs" -LE soak
else
  echo "test.sh: no tests/concurrency_test.cc yet; nothing to run under TSan"
fi
finish_stage "$t" tsan build/tsan

section "3/4 release: package, headers, examples, crash loop, bench (quick run + report-only gate), micro-benchmarks"
t=$SECONDS
configure_and_build ci-release
run_ctest ctest --preset ci-release -j "$jobs" -LE soak
if [[ -x build/ci-release/bench/quiver_micro_bench ]]; then
  echo "test.sh: one short pass over the micro-benchmarks (timings are not checked)"
  # google-benchmark 1.7 takes --benchmark_min_time in seconds, without a unit.
  # A crash fails the run; running past the time box only warns, since the
  # benchmarks' set-up time is theirs to keep small.
  rc=0
  # QUIVER_MICRO_SMOKE shrinks the fixtures a hundredfold (bench/micro/bench_util.h):
  # the pass checks that every benchmark runs, not what it measures.
  QUIVER_MICRO_SMOKE=1 timeout 60 build/ci-release/bench/quiver_micro_bench \
    --benchmark_min_time=0.01 || rc=$?
  if ((rc == 124)); then
    echo "test.sh: WARNING: the micro-benchmark pass took over 60 s and was stopped" >&2
  elif ((rc != 0)); then
    echo "test.sh: the micro-benchmarks failed (exit $rc)" >&2
    exit "$rc"
  fi
fi
finish_stage "$t" release build/ci-release

section "4/4 fuzz: clang 14 -Wthread-safety -Werror; libFuzzer targets (ASan + UBSan), 20 s each"
t=$SECONDS
if [[ -f fuzz/CMakeLists.txt ]]; then
  configure_and_build fuzz
  run_ctest ctest --preset fuzz -j "$jobs"
fi
finish_stage "$t" fuzz build/fuzz

section "summary"
printf '  %s\n' "${stage_log[@]}"
echo "test.sh: all stages passed in $((SECONDS - started))s"
echo "test.sh: ${total_passed} passed, ${total_failed} failed, ${total_skipped} skipped"
