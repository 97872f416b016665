# accel_front_end_optimisation([MEASURED | OPTIMISED_ONLY] <target>...):
# lighter optimisation for code whose speed does not matter and whose
# compile time is mostly header-only template libraries: the accel tool's
# command-line front end (CLI11), the conformance cases (GoogleTest), and
# in the asan tree the Python module (pybind11).
#
# - By default, -O1 in RelWithDebInfo and Release: about 20% less CPU time
#   than -O2 (tools/main.cpp 7.2 -> 5.3 s), which the README's main job
#   needs to reach its demo within two minutes on two cores.
# - ACCEL_FRONT_END_CXX_FLAGS, when set, replaces that -O1 in every build
#   type. The asan preset gives -O0: there the conformance library compiled
#   in 44 s of CPU instead of 94 s and the Python module in 34 s instead of
#   83 s, and what the tests exercise is the library's code, which keeps the
#   tree's -O1. The tsan preset gives none: under ThreadSanitizer at -O0
#   every local variable lives in memory and each of its reads and writes
#   is a call, and `accel check` took 0.9 s longer per run with the
#   conformance cases at -O0 (docs/performance.md, "Lighter flags for the
#   sanitizer trees, and what each test process costs").
#
# MEASURED marks code a benchmark measures (the Python bindings): it keeps
# its tree's flags wherever benchmarks are built and takes
# ACCEL_FRONT_END_CXX_FLAGS only in a tree that builds none. OPTIMISED_ONLY
# marks a front end that takes the -O1 but never ACCEL_FRONT_END_CXX_FLAGS
# (the tool: tools/CMakeLists.txt says why). The memviz page writer and
# memreplay's engine are no front ends: the sanitizer runs parse a
# 60 000-event snapshot with them.
set(ACCEL_FRONT_END_CXX_FLAGS "" CACHE STRING
  "Compile flags that replace -O1 for the conformance cases and, in a tree without benchmarks, the Python module")
separate_arguments(_accel_front_end_cxx_flags UNIX_COMMAND "${ACCEL_FRONT_END_CXX_FLAGS}")

function(accel_front_end_optimisation)
  cmake_parse_arguments(ARG "MEASURED;OPTIMISED_ONLY" "" "" ${ARGN})
  foreach(target IN LISTS ARG_UNPARSED_ARGUMENTS)
    if(_accel_front_end_cxx_flags AND NOT ARG_OPTIMISED_ONLY)
      if(NOT ARG_MEASURED OR NOT ACCEL_BUILD_BENCHMARKS)
        target_compile_options(${target} PRIVATE
          $<$<COMPILE_LANGUAGE:CXX>:${_accel_front_end_cxx_flags}>)
      endif()
    elseif(NOT ARG_MEASURED)
      target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O1>)
    endif()
  endforeach()
endfunction()

# accel_front_end_source_flags(<source>...): ACCEL_FRONT_END_CXX_FLAGS, when
# set, for these files of the current directory's targets alone (a file of an
# OPTIMISED_ONLY target that shares no template library's inline code with
# the libraries it links). Such a file leaves its target's unity batches.
function(accel_front_end_source_flags)
  if(_accel_front_end_cxx_flags)
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "${_accel_front_end_cxx_flags}")
  endif()
endfunction()
