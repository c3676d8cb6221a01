# Registers a gtest binary's tests with ctest one suite per process
# (QUIVER_TEST_PROCESS_PER_SUITE, tests/CMakeLists.txt). Run by ctest when it
# starts (cmake -P), as gtest_discover_tests' PRE_TEST discovery is, and
# writes OUT: one add_test per suite that has a test the filter keeps, which
# runs that suite's kept tests in one process.
#
#   BIN      the gtest binary
#   OUT      the file to write (ctest includes it)
#   PREFIX   prepended to each ctest name ("" or e.g. "unit:")
#   EXCLUDE  gtest patterns (':'-separated) left out: the binary's sweeps,
#            which gtest_discover_tests registers one test each
#   LABEL    the ctest label
#   TIMEOUT  seconds for the listing
cmake_minimum_required(VERSION 3.25)

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
  # A binary that cannot even list its tests (a sanitizer report at start-up)
  # becomes one failing test, so the run says so instead of running nothing.
  file(WRITE "${OUT}" "add_test([=[${PREFIX}LISTING]=] [=[${BIN}]=] --gtest_list_tests)\n"
                      "set_tests_properties([=[${PREFIX}LISTING]=] PROPERTIES LABELS [=[${LABEL}]=])\n")
  return()
endif()

# The listing: "Suite." on a line of its own (a parameterised one may carry
# "  # TypeParam = ..."), then "  Test" lines. Only suite names are needed.
string(REPLACE ";" "\\;" _out "${_out}")
string(REPLACE "\n" ";" _lines "${_out}")
set(_suites "")
foreach(_line IN LISTS _lines)
  if(_line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    list(APPEND _suites "${CMAKE_MATCH_1}")
  endif()
endforeach()

set(_script "")
foreach(_suite IN LISTS _suites)
  set(_name "${PREFIX}${_suite}")
  if(EXCLUDE STREQUAL "")
    set(_f "${_suite}.*")
  else()
    set(_f "${_suite}.*-${EXCLUDE}")
  endif()
  string(APPEND _script "add_test([=[${_name}]=] [=[${BIN}]=] [=[--gtest_filter=${_f}]=])\n"
                        "set_tests_properties([=[${_name}]=] PROPERTIES LABELS [=[${LABEL}]=])\n")
endforeach()
file(WRITE "${OUT}" "${_script}")
