# accel_front_end_optimisation(<target>...): -O1 in RelWithDebInfo and
# Release, for code whose speed does not matter and whose compile time is
# mostly header-only template libraries: the accel tool's command-line front
# end (CLI11) and the conformance cases (GoogleTest). -O1 compiles them in
# about 20% less CPU time than -O2 (tools/main.cpp 7.2 -> 5.3 s), which the
# README's main job needs to reach its demo within two minutes on two cores.
# Not for what a benchmark measures (the memviz page writer, memreplay's
# engine, the Python bindings), nor the core and the backends.
function(accel_front_end_optimisation)
  foreach(target IN LISTS ARGN)
    target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O1>)
  endforeach()
endfunction()
