# Uses ccache as the compiler launcher when it is installed, unless the user
# chose a launcher already. Included before any target is defined.
#
# The test binaries use precompiled headers (tests/CMakeLists.txt); ccache
# caches a file compiled against one only with the sloppiness below (it then
# hashes the precompiled header's contents instead of trusting its time
# stamps and defines). Without it, every test file would miss the cache.
if(QUIVER_USE_CCACHE AND NOT DEFINED CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(QUIVER_CCACHE_PROGRAM ccache)
  if(QUIVER_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER
        "${CMAKE_COMMAND}" -E env "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
        "${QUIVER_CCACHE_PROGRAM}")
    message(STATUS "quiver: compiling through ${QUIVER_CCACHE_PROGRAM}")
  endif()
endif()
