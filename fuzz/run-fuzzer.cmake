# Runs one libFuzzer target for a fixed time on a scratch copy of its
# committed corpus, and fails if it finds anything. Run by the `fuzz` tests:
#
#   cmake -DFUZZER=<fuzz_x> -DSEEDS=<tests/fuzz/corpus/x> -DWORK_DIR=<scratch>
#         -DSECONDS=20 -P run-fuzzer.cmake
#
# The committed corpus is only read: the seeds are copied to
# WORK_DIR/corpus, which libFuzzer grows; crash, leak, timeout and OOM
# reproducers go to WORK_DIR (their paths are printed: copy one to
# tests/fuzz/corpus/x/ to keep it as a regression input). Prints one summary
# line: execs, exec/s, coverage (edges and features), corpus size.
cmake_minimum_required(VERSION 3.25)

foreach(var FUZZER SEEDS WORK_DIR SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run-fuzzer.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/corpus")
file(GLOB seeds LIST_DIRECTORIES false "${SEEDS}/*")
if(NOT seeds)
  message(FATAL_ERROR "no seeds in ${SEEDS}")
endif()
file(COPY ${seeds} DESTINATION "${WORK_DIR}/corpus")

# UBSan reports must stop the run (the presets build without
# -fno-sanitize-recover).
if(NOT DEFINED ENV{UBSAN_OPTIONS})
  set(ENV{UBSAN_OPTIONS} "halt_on_error=1:print_stacktrace=1")
endif()

get_filename_component(name "${FUZZER}" NAME)
execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} -max_len=65536 -rss_limit_mb=2048 -timeout=10
          -print_final_stats=1 "-artifact_prefix=${WORK_DIR}/" "${WORK_DIR}/corpus"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
set(log "${out}${err}")

# libFuzzer's last status line ("#123 DONE cov: 1 ft: 2 corp: 3/4b ...") and
# its final statistics.
set(cov "?")
set(ft "?")
set(corp "?")
string(REGEX MATCHALL "#[0-9]+[ \t]+[A-Z]+[ \t]+cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*" lines "${log}")
if(lines)
  list(GET lines -1 last)
  string(REGEX REPLACE ".*cov: ([0-9]+) ft: ([0-9]+) corp: ([0-9]+/[0-9]+[a-zA-Z]*).*" "\\1;\\2;\\3" parts "${last}")
  list(GET parts 0 cov)
  list(GET parts 1 ft)
  list(GET parts 2 corp)
endif()
foreach(stat number_of_executed_units average_exec_per_sec new_units_added peak_rss_mb)
  set(${stat} "?")
  if(log MATCHES "stat::${stat}:[ \t]*([0-9]+)")
    set(${stat} "${CMAKE_MATCH_1}")
  endif()
endforeach()
message("${name}: execs ${number_of_executed_units}, exec/s ${average_exec_per_sec}, cov ${cov} edges, "
        "ft ${ft}, corpus ${corp} (new units ${new_units_added}), peak RSS ${peak_rss_mb} MiB, "
        "${SECONDS} s")

file(GLOB artifacts "${WORK_DIR}/crash-*" "${WORK_DIR}/leak-*" "${WORK_DIR}/timeout-*" "${WORK_DIR}/oom-*")
if(NOT rc EQUAL 0 OR artifacts)
  string(REPLACE ";" "\n  " artifact_list "${artifacts}")
  message(FATAL_ERROR "${name} failed (exit ${rc}); reproducers:\n  ${artifact_list}\n"
                      "Replay one with: ${FUZZER} <file>; keep it as tests/fuzz/corpus/<target>/crash-<what>.bin")
endif()
