# accel_lean_debug_info(<target>...): line tables only (-g1) in RelWithDebInfo.
#
# For the front ends whose compile time is mostly the debug information of
# header-only template libraries (pybind11, CLI11, nlohmann-json, GoogleTest):
# -g1 cuts their compile time by about 30% (python/src/streams.cpp 8.4 -> 5.9 s
# of CPU, tools/main.cpp 8.8 -> 6.5 s), which is what brings the README's main
# job under its two-minute goal on two cores. Backtraces and profilers keep
# files and lines; a debugger that needs these files' variables uses the
# Debug-based asan/tsan presets. The release preset (CMakePresets.json)
# now gives every target -g1 (CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O2 -g1
# -DNDEBUG"), the core and the backends too, for the same reason: about 25%
# less compile time for them (memory/device_cache.cpp 3.0 -> 2.3 s); this
# function keeps the front ends lean in a RelWithDebInfo build configured
# without the preset, whose core keeps CMake's full -g.
function(accel_lean_debug_info)
  foreach(target IN LISTS ARGN)
    target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo>:-g1>)
  endforeach()
endfunction()
