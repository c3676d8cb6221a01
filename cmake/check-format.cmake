# Fails if clang-format 14 would change any C++ file of the project. Run by
# the `format` test:
#
#   cmake -DCLANG_FORMAT=<clang-format> -DSOURCE_DIR=<repo> -P check-format.cmake
#
# Prints "SKIP: ..." (the test's SKIP_REGULAR_EXPRESSION) when the clang-format
# given is not version 14, the version .clang-format is written for. scripts/format.sh
# rewrites the files in place.
cmake_minimum_required(VERSION 3.25)

foreach(var CLANG_FORMAT SOURCE_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check-format.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${CLANG_FORMAT}" --version OUTPUT_VARIABLE version_text RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT version_text MATCHES "clang-format version 14\\.")
  string(STRIP "${version_text}" version_text)
  message("SKIP: the format check needs clang-format 14, found '${version_text}'")
  return()
endif()

set(files "")
foreach(dir include src tests bench examples tools fuzz)
  file(GLOB_RECURSE found "${SOURCE_DIR}/${dir}/*.h" "${SOURCE_DIR}/${dir}/*.cc")
  list(APPEND files ${found})
endforeach()
list(SORT files)
list(LENGTH files count)
if(count EQUAL 0)
  message(FATAL_ERROR "no C++ files found under ${SOURCE_DIR}")
endif()

execute_process(
  COMMAND "${CLANG_FORMAT}" --style=file --dry-run --Werror ${files}
  WORKING_DIRECTORY "${SOURCE_DIR}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clang-format would change the files above: run scripts/format.sh")
endif()
message(STATUS "${count} files are formatted")
