# accel_lean_debug_info(<target>...): line tables only (-g1) in RelWithDebInfo.
#
# For the front ends whose compile time is mostly the debug information of
# header-only template libraries (pybind11, CLI11, nlohmann-json, GoogleTest):
# -g1 cuts their compile time by about 30% (python/src/streams.cpp 8.4 -> 5.9 s
# of CPU, tools/main.cpp 8.8 -> 6.5 s), which is what brings the README's main
# job under its two-minute goal on two cores. Backtraces and profilers keep
# files and lines; a debugger that needs these files' variables uses the
# Debug-based asan/tsan presets. The core and the backends keep full -g.
function(accel_lean_debug_info)
  foreach(target IN LISTS ARGN)
    target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo>:-g1>)
  endforeach()
endfunction()
