# Cohort's ascendc.cmake: CANN's functions for building AscendC kernels, for the
# emulated devices. Kernel sources compile with the host's C++ compiler against
# Cohort's kernel_operator.h; each `kernel<<<blockDim, l2ctrl, stream>>>(args)` is
# rewritten at build time into a launch on the stream (ascendc_rewrite.cmake).
#
#   ascendc_library(<target> STATIC|SHARED|OBJECT <kernel sources>...)
#   ascendc_fatbin_library(<target> <kernel sources>...)
#       a module loaded with aclrtBinaryLoadFromFile: built as
#       <build>/fatbin/<target>/<target>.o, installed to <prefix>/fatbin/<target>/
#   ascendc_compile_definitions(<target> [PRIVATE|PUBLIC|INTERFACE] <definitions>...)
#   ascendc_compile_options(<target> [PRIVATE|PUBLIC|INTERFACE] <options>...)
#   ascendc_include_directories(<target> [PRIVATE|PUBLIC|INTERFACE] <directories>...)
#
# SOC_VERSION names the Ascend SoC the kernels are for (any Ascend name; it sets
# __NPU_ARCH__ as CANN does). Kernels are always compiled optimised (-O2): a Debug
# build of a sample would otherwise run its loops tens of times slower.
include_guard(DIRECTORY)

set(_cohort_ascendc_dir "${CMAKE_CURRENT_LIST_DIR}")

# Where Cohort is: this file lives in <prefix>/<arch>-linux/tikcpp/ascendc_kernel_cmake
# or <prefix>/tikcpp/ascendc_kernel_cmake. A build of Cohort itself sets the two
# variables before including it.
if(NOT COHORT_ASCENDC_INCLUDE_DIR OR NOT COHORT_ASCENDC_ACL_LIBRARY)
  set(_root "${_cohort_ascendc_dir}")
  foreach(_up RANGE 3)
    get_filename_component(_root "${_root}" DIRECTORY)
    if(EXISTS "${_root}/include/ascendc/kernel_operator.h")
      break()
    endif()
  endforeach()
  if(NOT EXISTS "${_root}/include/ascendc/kernel_operator.h")
    message(FATAL_ERROR "ascendc.cmake: no Cohort installation above ${_cohort_ascendc_dir} "
                        "(include/ascendc/kernel_operator.h not found)")
  endif()
  set(COHORT_ASCENDC_INCLUDE_DIR "${_root}/include")
  set(COHORT_ASCENDC_ACL_LIBRARY "${_root}/lib64/libascendcl.so")
  if(NOT ASCEND_CANN_PACKAGE_PATH)
    set(ASCEND_CANN_PACKAGE_PATH "${_root}")
  endif()
endif()

# The architecture of the SoC, as CANN's compiler defines __NPU_ARCH__.
if(NOT SOC_VERSION)
  set(SOC_VERSION "$ENV{SOC_VERSION}")
endif()
if(NOT SOC_VERSION)
  set(SOC_VERSION "Ascend910B4")
  message(STATUS "ascendc.cmake: SOC_VERSION not set, building kernels for ${SOC_VERSION}")
endif()
string(TOLOWER "${SOC_VERSION}" _soc)
if(_soc MATCHES "^ascend950" OR _soc MATCHES "^ascend910_95")
  set(COHORT_NPU_ARCH 3510)
elseif(_soc MATCHES "^ascend910b" OR _soc MATCHES "^ascend910_93")
  set(COHORT_NPU_ARCH 2201)
elseif(_soc MATCHES "^ascend310b")
  set(COHORT_NPU_ARCH 3002)
elseif(_soc MATCHES "^ascend310p")
  set(COHORT_NPU_ARCH 2002)
elseif(_soc MATCHES "^ascend(910|310)")
  set(COHORT_NPU_ARCH 1001)
elseif(_soc MATCHES "^ascend")
  set(COHORT_NPU_ARCH 2201)
  message(STATUS "ascendc.cmake: ${SOC_VERSION} is not a SoC Cohort knows; kernels built as "
                 "for Ascend910B (__NPU_ARCH__ 2201)")
else()
  message(FATAL_ERROR "ascendc.cmake: SOC_VERSION '${SOC_VERSION}' is not an Ascend SoC name "
                      "(e.g. Ascend910B4, Ascend310P3); aclrtGetSocName() prints this machine's")
endif()

# Rewrites `sources` into the build folder; the rewritten names go to `out_var`.
function(_cohort_ascendc_rewrite target fatbin out_var)
  set(generated "")
  set(index 0)
  foreach(src IN LISTS ARGN)
    get_filename_component(abs "${src}" ABSOLUTE)
    get_filename_component(name "${src}" NAME_WE)
    get_filename_component(dir "${abs}" DIRECTORY)
    set(gen "${CMAKE_CURRENT_BINARY_DIR}/ascendc/${target}/${index}_${name}.cpp")
    add_custom_command(OUTPUT "${gen}"
      COMMAND "${CMAKE_COMMAND}" "-DIN=${abs}" "-DOUT=${gen}" "-DFATBIN=${fatbin}"
              -P "${_cohort_ascendc_dir}/ascendc_rewrite.cmake"
      DEPENDS "${abs}" "${_cohort_ascendc_dir}/ascendc_rewrite.cmake"
      COMMENT "AscendC kernel source ${name} for the host compiler"
      VERBATIM)
    # The source's own folder first for its #include "...", as if compiled in place.
    set_source_files_properties("${gen}" PROPERTIES COMPILE_OPTIONS "-iquote;${dir}")
    list(APPEND generated "${gen}")
    math(EXPR index "${index} + 1")
  endforeach()
  set(${out_var} "${generated}" PARENT_SCOPE)
endfunction()

function(_cohort_ascendc_setup target)
  target_include_directories(${target} PUBLIC "${COHORT_ASCENDC_INCLUDE_DIR}")
  target_include_directories(${target} PRIVATE "${COHORT_ASCENDC_INCLUDE_DIR}/ascendc")
  target_compile_definitions(${target} PRIVATE __NPU_ARCH__=${COHORT_NPU_ARCH}
                             ASCENDC_CPU_EMULATION=1)
  target_compile_options(${target} PRIVATE -O2)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_compile_features(${target} PRIVATE cxx_std_17)
endfunction()

function(ascendc_library target kind)
  if(NOT kind MATCHES "^(STATIC|SHARED|OBJECT)$")
    message(FATAL_ERROR "ascendc_library(${target} ${kind} ...): the kind must be STATIC, "
                        "SHARED or OBJECT")
  endif()
  if(NOT ARGN)
    message(FATAL_ERROR "ascendc_library(${target} ${kind}): no kernel sources")
  endif()
  _cohort_ascendc_rewrite(${target} 0 generated ${ARGN})
  add_library(${target} ${kind} ${generated})
  _cohort_ascendc_setup(${target})
  # Whoever links the kernels gets the runtime their launches call.
  target_link_libraries(${target} PUBLIC "${COHORT_ASCENDC_ACL_LIBRARY}")
endfunction()

function(ascendc_fatbin_library target)
  if(NOT ARGN)
    message(FATAL_ERROR "ascendc_fatbin_library(${target}): no kernel sources")
  endif()
  _cohort_ascendc_rewrite(${target} 1 generated ${ARGN})
  set(table "${CMAKE_CURRENT_BINARY_DIR}/ascendc/${target}/kernel_table.cpp")
  file(WRITE "${table}.in" "#include \"kernel_operator.h\"\nCOHORT_ASCENDC_KERNEL_TABLE()\n")
  configure_file("${table}.in" "${table}" COPYONLY)
  add_library(${target} MODULE ${generated} "${table}")
  _cohort_ascendc_setup(${target})
  # Each module keeps its own kernel list and block state.
  target_compile_options(${target} PRIVATE -fvisibility=hidden -fvisibility-inlines-hidden)
  target_link_libraries(${target} PRIVATE "${COHORT_ASCENDC_ACL_LIBRARY}")
  set_target_properties(${target} PROPERTIES PREFIX "" SUFFIX ".o" OUTPUT_NAME "${target}"
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/fatbin/${target}")
  install(TARGETS ${target} LIBRARY DESTINATION "fatbin/${target}")
endfunction()

function(_cohort_ascendc_forward command target)
  set(args ${ARGN})
  list(GET args 0 first)
  if(NOT first MATCHES "^(PRIVATE|PUBLIC|INTERFACE)$")
    list(INSERT args 0 PRIVATE)
  endif()
  cmake_language(CALL ${command} ${target} ${args})
endfunction()

macro(ascendc_compile_definitions target)
  _cohort_ascendc_forward(target_compile_definitions ${target} ${ARGN})
endmacro()
macro(ascendc_compile_options target)
  _cohort_ascendc_forward(target_compile_options ${target} ${ARGN})
endmacro()
macro(ascendc_include_directories target)
  _cohort_ascendc_forward(target_include_directories ${target} ${ARGN})
endmacro()
