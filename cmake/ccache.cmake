# Uses ccache as the compiler launcher when it is installed, unless the user
# chose a launcher already. Included before any target is defined.
if(QUIVER_USE_CCACHE AND NOT DEFINED CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(QUIVER_CCACHE_PROGRAM ccache)
  if(QUIVER_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER "${QUIVER_CCACHE_PROGRAM}")
    message(STATUS "quiver: compiling through ${QUIVER_CCACHE_PROGRAM}")
  endif()
endif()
