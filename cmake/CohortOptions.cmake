# Compiler flags shared by every target, and the sanitizer builds.
add_compile_options(-Wall -Wextra -Wno-unused-parameter)
# Every library must resolve its symbols from the layers below it: a lower layer
# that calls into an upper one fails to link, so the build enforces the layering.
add_link_options(LINKER:--no-undefined)

if(COHORT_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(COHORT_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT COHORT_SANITIZE STREQUAL "")
  message(FATAL_ERROR "COHORT_SANITIZE must be empty, 'address' or 'thread'")
endif()

# The invariants of the protocols ranks share through memory (COHORT_PROTOCOL_CHECK):
# checked in Debug and sanitizer builds, the ones the test command runs besides
# the release build.
if(CMAKE_BUILD_TYPE STREQUAL "Debug" OR NOT COHORT_SANITIZE STREQUAL "")
  add_compile_definitions(COHORT_PROTOCOL_CHECKS)
endif()

# Installed libraries find each other next to themselves.
set(CMAKE_INSTALL_RPATH "$ORIGIN")
set(CMAKE_BUILD_RPATH_USE_ORIGIN ON)

# cohort_add_library(NAME folder SOURCES ... DEPS ...): one shared library per
# folder, named libcohort_<folder>.so, exported as Cohort::<folder>.
function(cohort_add_library folder)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target cohort_${folder})
  add_library(${target} SHARED ${ARG_SOURCES})
  add_library(Cohort::${folder} ALIAS ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # Private headers are included as "folder/file.h" from the source root.
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  # A library's calls to its own functions go straight to them, not through the
  # PLT, and the compiler may inline them: nobody interposes Cohort's symbols
  # (Debian and Ubuntu build many libraries so).
  target_compile_options(${target} PRIVATE -fno-semantic-interposition)
  target_link_options(${target} PRIVATE LINKER:-Bsymbolic-functions)
  set_target_properties(${target} PROPERTIES
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    EXPORT_NAME ${folder})
  install(TARGETS ${target} EXPORT CohortTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
  # The packaging step looks for Cohort's own libraries in these build folders.
  set_property(GLOBAL APPEND PROPERTY COHORT_LIBRARY_BUILD_DIRS ${CMAKE_CURRENT_BINARY_DIR})
endfunction()
