# Install tree: headers, libraries, a CMake package (find_package(Cohort) ->
# Cohort::cohort) and a pkg-config file.
include(CMakePackageConfigHelpers)

add_library(cohort INTERFACE)
add_library(Cohort::cohort ALIAS cohort)
target_link_libraries(cohort INTERFACE cohort_collective cohort_transport cohort_kernels cohort_ranktable
                      cohort_runtime cohort_common)
install(TARGETS cohort EXPORT CohortTargets)

install(EXPORT CohortTargets NAMESPACE Cohort:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cohort
        COMPONENT dev)
configure_package_config_file(cmake/CohortConfig.cmake.in
  ${PROJECT_BINARY_DIR}/CohortConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cohort)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/CohortConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/CohortConfig.cmake ${PROJECT_BINARY_DIR}/CohortConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cohort COMPONENT dev)

# The prefix relative to the .pc file, so the file is right wherever the tree is
# installed (cmake --install --prefix, cpack's /usr, a moved tree).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(COHORT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH pc_to_prefix /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
  set(COHORT_PC_PREFIX "\${pcfiledir}/${pc_to_prefix}")
endif()
configure_file(cmake/cohort.pc.in ${PROJECT_BINARY_DIR}/cohort.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cohort.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT dev)

# version.cfg: library, API and protocol versions of this install (like CANN's).
file(WRITE ${PROJECT_BINARY_DIR}/version.cfg
  "library_version=${PROJECT_VERSION}\napi_version=${COHORT_API_VERSION_MAJOR}.${COHORT_API_VERSION_MINOR}\nprotocol_version=${COHORT_PROTOCOL_VERSION}\n")
install(FILES ${PROJECT_BINARY_DIR}/version.cfg DESTINATION ${CMAKE_INSTALL_DATADIR}/cohort
        COMPONENT runtime)
