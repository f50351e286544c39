# Debian packages, split as the CANN toolkit/runtime split asks:
#   cohort-runtime  the shared libraries and nothing else (production machines)
#   cohort-dev      headers, CMake package and pkg-config file
#   cohort-tools    the command-line tools
# `cpack -G DEB` in the build folder writes the three .deb files.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cohort)
set(CPACK_PACKAGE_VENDOR "Cohort developers")
set(CPACK_PACKAGE_CONTACT "Cohort developers <cohort@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME cohort-runtime)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME cohort-dev)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME cohort-tools)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "cohort-runtime (= ${PROJECT_VERSION}), libfmt-dev")
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "cohort-runtime (= ${PROJECT_VERSION})")
# dpkg-shlibdeps finds our own libraries in the build tree: every libcohort_*.so
# (cohort_add_library records its folder) and libascendcl.so / libhccl.so.
get_property(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS GLOBAL PROPERTY COHORT_LIBRARY_BUILD_DIRS)
list(APPEND CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/acl
     ${PROJECT_BINARY_DIR}/hccl)
include(CPack)
