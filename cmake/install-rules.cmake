# Install rules and the CMake package: a consumer writes
#   find_package(quiver CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE quiver::quiver)
# tests/package builds exactly that against a staged install (label `package`).
include(CMakePackageConfigHelpers)

set(QUIVER_INSTALL_CMAKEDIR
    "${CMAKE_INSTALL_LIBDIR}/cmake/quiver"
    CACHE STRING "Where quiverConfig.cmake is installed, relative to the prefix")
mark_as_advanced(QUIVER_INSTALL_CMAKEDIR)

install(
  TARGETS quiver
  EXPORT quiverTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT quiver_Development)

install(
  DIRECTORY "${PROJECT_SOURCE_DIR}/include/quiver"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  COMPONENT quiver_Development
  FILES_MATCHING
  PATTERN "*.h")

install(
  EXPORT quiverTargets
  NAMESPACE quiver::
  DESTINATION "${QUIVER_INSTALL_CMAKEDIR}"
  COMPONENT quiver_Development)

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/quiverConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/quiverConfig.cmake"
                              INSTALL_DESTINATION "${QUIVER_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/quiverConfigVersion.cmake"
                                 COMPATIBILITY SameMajorVersion)

install(FILES "${PROJECT_BINARY_DIR}/quiverConfig.cmake" "${PROJECT_BINARY_DIR}/quiverConfigVersion.cmake"
        DESTINATION "${QUIVER_INSTALL_CMAKEDIR}"
        COMPONENT quiver_Development)

install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/quiver"
        COMPONENT quiver_Development)
