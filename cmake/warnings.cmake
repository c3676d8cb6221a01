# The warning set for Quiver's own targets (library, tests, benches, examples).
# Applied per target, never through CMAKE_CXX_FLAGS, so a parent project that
# adds Quiver is not affected. Dependencies' headers come from system include
# directories and stay quiet.
#
#   quiver_target_warnings(<target>)
#
# QUIVER_WARNINGS=OFF skips it; QUIVER_WERROR=ON adds -Werror. With Clang the
# set includes -Wthread-safety, which checks the ABSL_GUARDED_BY annotations.

set(QUIVER_WARNING_FLAGS
    -Wall
    -Wextra
    -Wpedantic
    -Wshadow
    -Wnon-virtual-dtor
    -Woverloaded-virtual
    -Wold-style-cast
    -Wcast-qual
    -Wformat=2
    -Wimplicit-fallthrough
    -Wundef)

if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND QUIVER_WARNING_FLAGS -Wlogical-op -Wduplicated-cond)
elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  list(APPEND QUIVER_WARNING_FLAGS -Wthread-safety -Wthread-safety-beta -Wunreachable-code)
endif()

function(quiver_target_warnings target)
  if(NOT QUIVER_WARNINGS)
    return()
  endif()
  target_compile_options(${target} PRIVATE ${QUIVER_WARNING_FLAGS})
  if(QUIVER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
