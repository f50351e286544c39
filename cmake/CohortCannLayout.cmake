# CANN's install layout, on top of the plain one (CohortInstall.cmake), so that an
# install prefix P serves CANN programs' build files as ASCEND_HOME_PATH,
# ASCEND_DIR, ASCEND_CANN_PACKAGE_PATH or INSTALL_DIR:
#   P/set_env.sh, P/bin/setenv.bash  environment script (bin/setenv.bash links to it)
#   P/include/{acl,hccl}             headers (acl/ and hccl/ CMakeLists.txt)
#   P/lib64/libascendcl.so, libhccl.so  the libraries (acl/ and hccl/ CMakeLists.txt)
#   P/lib64/lib<alias>.so            CANN's other runtime library names, links to
#                                    libascendcl.so, which exports all their functions
#   P/lib64/stub/                    the libraries to link against without a device
#   P/runtime/{include,lib64}        CANN's runtime-package folders: links to the above
#   P/opp                            ASCEND_OPP_PATH (empty: Cohort has no operators)
#   P/version.cfg, P/runtime/version.{cfg,info}, P/share/info/<pkg>/version.info
#                                    the version files CANN's tools and aclsysGetVersion*
#                                    read: the CANN version Cohort claims, and its own
# Everything a program needs to run is in the runtime component; what is needed
# only to build one (headers, stubs) is in dev, as CANN's runtime/toolkit split.
# Every link is relative, so the tree can be moved.

set(cann_src ${PROJECT_SOURCE_DIR}/packaging/cann)
set(cann_out ${PROJECT_BINARY_DIR}/cann)
file(MAKE_DIRECTORY ${cann_out}/aliases ${cann_out}/stub ${cann_out}/runtime ${cann_out}/bin
     ${cann_out}/opp)

# The CANN version Cohort claims (top-level COHORT_CANN_VERSION) reaches the ACL
# code as a string literal.
target_compile_definitions(ascendcl PRIVATE COHORT_CANN_VERSION="${COHORT_CANN_VERSION}")

# A program links a library by a link's path, and the linker reads the linked
# library's RUNPATH with $ORIGIN as the link's folder, not the library's. So that
# libascendcl.so and libhccl.so find libcohort_*.so when reached through lib64/stub,
# runtime/lib64 or runtime/lib64/stub, their RUNPATH also names the libdir relative
# to those folders (one and two levels deeper than lib64).
if(NOT IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  file(RELATIVE_PATH cann_to_libdir /prefix/lib64 /prefix/${CMAKE_INSTALL_LIBDIR})
  set_property(TARGET ascendcl hccl APPEND PROPERTY INSTALL_RPATH
    "$ORIGIN/../${cann_to_libdir}" "$ORIGIN/../../${cann_to_libdir}")
endif()

# CANN's runtime splits its API over several libraries; Cohort's libascendcl.so
# exports all of it. Each name is a link to libascendcl.so rather than a library of
# its own: the linker then records libascendcl.so (the SONAME) as NEEDED, so the
# program loads one copy of the ACL state, and it finds the symbols at link time
# (an empty library depending on libascendcl.so would not provide them).
set(COHORT_CANN_LIB_ALIASES acl_rt acl_rt_impl acl_dvpp msprofiler profapi acl_tdt_channel
    acl_tdt_queue)
set(cann_alias_links)
foreach(alias IN LISTS COHORT_CANN_LIB_ALIASES)
  file(CREATE_LINK libascendcl.so ${cann_out}/aliases/lib${alias}.so SYMBOLIC)
  list(APPEND cann_alias_links ${cann_out}/aliases/lib${alias}.so)
endforeach()
install(FILES ${cann_alias_links} DESTINATION lib64 COMPONENT runtime)

# lib64/stub: CANN ships stub libraries there for linking on machines without a
# device. Cohort's real libraries serve (they run anywhere), so these are links.
file(CREATE_LINK ../libascendcl.so ${cann_out}/stub/libascendcl.so SYMBOLIC)
file(CREATE_LINK ../libascendcl.so ${cann_out}/stub/libacl_rt.so SYMBOLIC)
file(CREATE_LINK ../libascendcl.so ${cann_out}/stub/libacl_dvpp.so SYMBOLIC)
file(CREATE_LINK ../libhccl.so ${cann_out}/stub/libhccl.so SYMBOLIC)
install(FILES ${cann_out}/stub/libascendcl.so ${cann_out}/stub/libacl_rt.so
        ${cann_out}/stub/libacl_dvpp.so ${cann_out}/stub/libhccl.so
        DESTINATION lib64/stub COMPONENT dev)

# runtime/: the runtime package's folders, as links to the top-level ones. The
# headers are for building (dev); the libraries for running.
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  file(CREATE_LINK ${CMAKE_INSTALL_INCLUDEDIR} ${cann_out}/runtime/include SYMBOLIC)
else()
  file(CREATE_LINK ../${CMAKE_INSTALL_INCLUDEDIR} ${cann_out}/runtime/include SYMBOLIC)
endif()
file(CREATE_LINK ../lib64 ${cann_out}/runtime/lib64 SYMBOLIC)
install(FILES ${cann_out}/runtime/include DESTINATION runtime COMPONENT dev)
install(FILES ${cann_out}/runtime/lib64 DESTINATION runtime COMPONENT runtime)

# Version files: version.cfg at the root and in runtime/ (the seed documents read
# both), version.info in runtime/ and in share/info/<package>/ (aclsysGetVersionStr
# reads $ASCEND_HOME_PATH/share/info/<package>/version.info).
configure_file(${cann_src}/version.cfg.in ${cann_out}/version.cfg @ONLY)
configure_file(${cann_src}/version.info.in ${cann_out}/version.info @ONLY)
install(FILES ${cann_out}/version.cfg DESTINATION . COMPONENT runtime)
install(FILES ${cann_out}/version.cfg ${cann_out}/version.info DESTINATION runtime
        COMPONENT runtime)
install(FILES ${cann_out}/version.info DESTINATION share/info/runtime COMPONENT runtime)
install(FILES ${cann_out}/version.info DESTINATION share/info/hccl COMPONENT runtime)
install(DIRECTORY ${cann_out}/opp DESTINATION . COMPONENT runtime)

# set_env.sh: filled in twice. Now with the versions; at install
# time with the prefix being installed to (packaging/cann/install_set_env.cmake),
# which the script falls back on in shells that cannot tell it where it is.
set(COHORT_VERSION ${PROJECT_VERSION})
set(COHORT_INSTALL_PREFIX "@COHORT_INSTALL_PREFIX@")
configure_file(${cann_src}/set_env.sh.in ${cann_out}/set_env.sh.in @ONLY)
install(CODE "set(COHORT_CANN_SET_ENV_IN \"${cann_out}/set_env.sh.in\")
set(COHORT_CANN_OUT \"${cann_out}\")" COMPONENT runtime)
install(SCRIPT ${cann_src}/install_set_env.cmake COMPONENT runtime)
file(CREATE_LINK ../set_env.sh ${cann_out}/bin/setenv.bash SYMBOLIC)
install(FILES ${cann_out}/bin/setenv.bash DESTINATION bin COMPONENT runtime)
