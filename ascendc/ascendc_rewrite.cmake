# Rewrites one AscendC kernel source for the host compiler (run by ascendc.cmake at
# build time: cmake -DIN=<source> -DOUT=<output> -DFATBIN=<0|1> -P ascendc_rewrite.cmake).
#
#   name<<<blockDim, l2ctrl, stream>>>(args)
# becomes
#   ::cohort_ascendc::Launch(name, "name", blockDim, l2ctrl, stream)(args)
# on the same line, and a #line directive names the original file, so that the
# compiler's messages point at the source the user wrote. With FATBIN=1, each kernel
# the source defines (`__global__ __aicore__ void name(`) is registered in the
# module's kernel table.
cmake_minimum_required(VERSION 3.16)
file(READ "${IN}" text)
set(out "")
set(rest "${text}")
while(TRUE)
  string(FIND "${rest}" "<<<" open)
  if(open EQUAL -1)
    break()
  endif()
  string(SUBSTRING "${rest}" 0 ${open} before)
  math(EXPR after_open "${open} + 3")
  string(SUBSTRING "${rest}" ${after_open} -1 tail)
  string(FIND "${tail}" ">>>" close)
  # The kernel's name: the identifier (with any namespace) just before <<<.
  string(REGEX MATCH "([A-Za-z_][A-Za-z0-9_:]*)[ \t]*$" name_match "${before}")
  set(name "${CMAKE_MATCH_1}")
  if(close EQUAL -1 OR name STREQUAL "")
    # Not a launch (a shift, a comment): kept as written.
    string(APPEND out "${before}<<<")
    set(rest "${tail}")
    continue()
  endif()
  string(SUBSTRING "${tail}" 0 ${close} config)
  string(STRIP "${config}" config_stripped)
  math(EXPR after_close "${close} + 3")
  string(SUBSTRING "${tail}" ${after_close} -1 rest)
  if(config_stripped STREQUAL "")
    string(APPEND out "${before}<<<>>>")
    continue()
  endif()
  string(LENGTH "${before}" before_len)
  string(LENGTH "${name_match}" match_len)
  math(EXPR keep "${before_len} - ${match_len}")
  string(SUBSTRING "${before}" 0 ${keep} before)
  string(APPEND out "${before}::cohort_ascendc::Launch(${name}, \"${name}\", ${config})")
endwhile()
string(APPEND out "${rest}")

set(registrations "")
if(FATBIN)
  string(REGEX MATCHALL
    "__global__[ \t\r\n]+__aicore__[ \t\r\n]+void[ \t\r\n]+[A-Za-z_][A-Za-z0-9_]*[ \t\r\n]*\\("
    defs "${text}")
  string(REGEX MATCHALL
    "__aicore__[ \t\r\n]+__global__[ \t\r\n]+void[ \t\r\n]+[A-Za-z_][A-Za-z0-9_]*[ \t\r\n]*\\("
    defs2 "${text}")
  list(APPEND defs ${defs2})
  set(names "")
  foreach(def IN LISTS defs)
    string(REGEX REPLACE "^.*void[ \t\r\n]+([A-Za-z_][A-Za-z0-9_]*)[ \t\r\n]*\\($" "\\1" n "${def}")
    list(APPEND names "${n}")
  endforeach()
  if(names)
    list(REMOVE_DUPLICATES names)
  endif()
  foreach(n IN LISTS names)
    string(APPEND registrations "COHORT_ASCENDC_REGISTER(${n})\n")
  endforeach()
endif()

set(content "#line 1 \"${IN}\"\n${out}\n${registrations}")
# Written only when changed, so that an unchanged kernel is not compiled again.
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUT}" "${content}")
