# Registers a gtest binary's tests with ctest one suite per process
# (QUIVER_TEST_PROCESS_PER_SUITE, tests/CMakeLists.txt). Run by ctest when it
# starts (cmake -P), as gtest_discover_tests' PRE_TEST discovery is, and
# writes OUT: one add_test per suite that has a test the filter keeps, which
# runs that suite's kept tests in one process.
#
#   BIN      the gtest binary
#   NAME     the binary's target name (names the test a failed listing becomes)
#   OUT      the file to write (ctest includes it)
#   EXCLUDE  gtest patterns (':'-separated) left out: the binary's sweeps,
#            which gtest_discover_tests registers one test each
#   LABEL    the ctest label
#   TIMEOUT  seconds for the listing
#
# A listing that fails or finds no suite becomes one failing test that says
# so, and sets QUIVER_SUITES_LISTING_FAILED: the include file then deletes
# OUT, so that the next ctest start lists again instead of keeping the
# failure until the binary is rebuilt.
cmake_minimum_required(VERSION 3.25)

function(write_listing_failure why)
  message(WARNING "${NAME}: ${why}")
  file(WRITE "${OUT}.tmp"
       "set(QUIVER_SUITES_LISTING_FAILED 1)\n"
       "add_test([=[${NAME}_LISTING_FAILED]=] [=[${CMAKE_COMMAND}]=] -E echo [=[${why}]=])\n"
       "set_tests_properties([=[${NAME}_LISTING_FAILED]=] PROPERTIES LABELS [=[${LABEL}]=] "
       "WILL_FAIL TRUE)\n")
  file(RENAME "${OUT}.tmp" "${OUT}")
endfunction()

if(EXCLUDE STREQUAL "")
  set(_filter "*")
else()
  set(_filter "-${EXCLUDE}")
endif()
execute_process(
  COMMAND "${BIN}" --gtest_list_tests "--gtest_filter=${_filter}"
  TIMEOUT ${TIMEOUT}
  OUTPUT_VARIABLE _out
  ERROR_VARIABLE _err
  RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  # A binary that cannot even list its tests (a sanitizer report at start-up).
  write_listing_failure("${BIN} --gtest_list_tests failed (${_rc}): ${_err}")
  return()
endif()

# The listing: "Suite." on a line of its own (a parameterised one may carry
# "  # TypeParam = ..."), then "  Test" lines, which may print a parameter.
# Only suite names are needed. CMake does not split a list inside square
# brackets, so a printed parameter holding one would swallow the lines after
# it: brackets go first (no suite name holds one).
string(REPLACE ";" "\\;" _out "${_out}")
string(REPLACE "[" "(" _out "${_out}")
string(REPLACE "]" ")" _out "${_out}")
string(REPLACE "\n" ";" _lines "${_out}")
set(_suites "")
foreach(_line IN LISTS _lines)
  if(_line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    list(APPEND _suites "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(_suites STREQUAL "")
  write_listing_failure("${BIN} --gtest_list_tests listed no suite: ${_out}")
  return()
endif()

# A suite entry that runs no test (a stale filter) fails rather than passes.
set(_script "")
foreach(_suite IN LISTS _suites)
  if(EXCLUDE STREQUAL "")
    set(_f "${_suite}.*")
  else()
    set(_f "${_suite}.*-${EXCLUDE}")
  endif()
  string(APPEND _script "add_test([=[${_suite}]=] [=[${BIN}]=] [=[--gtest_filter=${_f}]=])\n"
                        "set_tests_properties([=[${_suite}]=] PROPERTIES LABELS [=[${LABEL}]=] "
                        "FAIL_REGULAR_EXPRESSION [=[\\[  PASSED  \\] 0 tests]=])\n")
endforeach()
file(WRITE "${OUT}.tmp" "${_script}")
file(RENAME "${OUT}.tmp" "${OUT}")
