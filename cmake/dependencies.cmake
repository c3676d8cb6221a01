# Finds Quiver's dependencies, all from Debian 12's packages
# (scripts/install-deps.sh installs them). The library links them privately;
# none of their types appear in include/quiver.

find_package(Threads REQUIRED)
find_package(absl CONFIG REQUIRED)      # libabsl-dev 20220623
find_package(mimalloc CONFIG REQUIRED)  # libmimalloc-dev 2.0; exports the shared target `mimalloc`
find_package(xsimd CONFIG REQUIRED)     # libxsimd-dev 8.1, header-only
find_package(simdjson CONFIG REQUIRED)  # libsimdjson-dev 3.0: JSON Lines import
find_package(ZLIB REQUIRED)             # zlib1g-dev: gzip input to import

# Debian's xsimd target lists "xtl" in its link interface without providing
# that target, which would put -lxtl on every link line. Quiver uses xsimd's
# headers only: the library takes its include directories privately (so
# nothing about xsimd reaches the exported target), and tests and benches link
# the include-only stand-in quiver_xsimd.
get_target_property(QUIVER_XSIMD_INCLUDE_DIRS xsimd INTERFACE_INCLUDE_DIRECTORIES)
if(NOT TARGET quiver_xsimd)
  add_library(quiver_xsimd INTERFACE)
  target_include_directories(quiver_xsimd SYSTEM INTERFACE ${QUIVER_XSIMD_INCLUDE_DIRS})
endif()
