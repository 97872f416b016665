# accel_unity_build(<target>...): compiles the target's sources in batches
# (CMake's unity build: one translation unit #includes several sources), for
# the targets the README's main job builds. Their files are small and most
# of each one's compile time is the headers it parses (the C++20 standard
# library; pybind11 and Python.h for the Python module: about 4 s per file
# of it there, whatever the file's length), which a batch parses once.
# Measurements: docs/performance.md, "The quick start: time to the demo".
#
# Sources with their own compile options (the SIMD fills, -mtls-dialect) are
# left out of batches by CMake. A file in a batch sees the declarations of
# the files before it, anonymous namespaces included, so within a target
# file-scope names must be distinct: the same variable twice is a compile
# error, but two helper functions of one name and different parameters
# would overload each other, and a helper of the same name in an inner
# namespace (accel::detail) would hide one in an outer (accel) without a
# word. The conformance cases, whose files each write the same small
# helpers, keep each file's own names in a namespace named after the file
# (conformance/src/conformance_case.h says how).
# ACCEL_UNITY_BUILD=OFF compiles everything file by file (what a developer
# editing one file of a batch may prefer: a batch recompiles as a whole).
option(ACCEL_UNITY_BUILD "Compile the main job's targets in batches (faster cold builds)" ON)
set(ACCEL_UNITY_BATCH_SIZE 8 CACHE STRING "Most sources per batch of accel_unity_build")

# A target's sources go into as few batches of at most ACCEL_UNITY_BATCH_SIZE
# as they fill, of even sizes (17 sources: 6, 6 and 5, not 8, 8 and 1, whose
# last batch would pay the headers for one file and end the build alone).
function(accel_unity_build)
  if(NOT ACCEL_UNITY_BUILD)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    get_target_property(sources ${target} SOURCES)
    list(FILTER sources INCLUDE REGEX "\\.(cpp|cc|cxx)$")
    list(LENGTH sources count)
    math(EXPR batches "(${count} + ${ACCEL_UNITY_BATCH_SIZE} - 1) / ${ACCEL_UNITY_BATCH_SIZE}")
    if(batches LESS 1)
      set(batches 1)
    endif()
    math(EXPR size "(${count} + ${batches} - 1) / ${batches}")
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${size})
  endforeach()
endfunction()
