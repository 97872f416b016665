# The C ABI of the plugin boundary against its checked-in baseline
# (tests/abi/README.md): abidw writes the ABI of the library of the
# boundary's types, abidiff compares it with the baseline. Any difference
# fails: an incompatible one is a bug, a compatible one (a minor version's
# appended members) updates the baseline in the same commit.
#   cmake -DABIDW=... -DABIDIFF=... -DLIBRARY=... -DBASELINE=...
#         -DOUT=<file> [-DUPDATE=1] -P abi_check.cmake
cmake_minimum_required(VERSION 3.25)
# Every type the library's functions reach is the header's (or a typedef of
# <stdint.h> it uses), so nothing is filtered: --header-file would match
# the header by the path in the debugging information, which ccache's
# base_dir makes relative, and silently drop every struct's members.
execute_process(
  COMMAND ${ABIDW} --no-corpus-path
          --no-comp-dir-path --no-show-locs --no-elf-needed --type-id-style hash
          --out-file ${OUT} ${LIBRARY}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "abidw failed on ${LIBRARY} (${rc}): ${err}")
endif()
if(UPDATE)
  file(COPY_FILE ${OUT} ${BASELINE})
  message(STATUS "wrote ${BASELINE}")
  return()
endif()
execute_process(COMMAND ${ABIDIFF} ${BASELINE} ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE report ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(STATUS "the plugin ABI matches ${BASELINE}")
  return()
endif()
# abidiff's status is a bit set: 1 error, 2 usage error, 4 the ABI changed,
# 8 the change is incompatible.
if(rc GREATER_EQUAL 8)
  set(kind "an INCOMPATIBLE change")
elseif(rc GREATER_EQUAL 4)
  set(kind "a change")
else()
  message(FATAL_ERROR "abidiff failed (${rc}): ${err}${report}")
endif()
message(FATAL_ERROR
  "the plugin ABI (include/accel/plugin_abi.h) has ${kind} against ${BASELINE}:\n"
  "${report}\n"
  "Structs are only ever appended to, within a major version. If the change is a "
  "minor version's appended members, or a deliberate major version, update the "
  "baseline as tests/abi/README.md says (cmake --build <build> --target "
  "accel_abi_baseline) in the same commit; otherwise undo it.")
