# Optional dependencies, looked up once for the whole tree (found here, at
# the top, their imported targets are visible in every folder below).
#
# Each one that is missing costs the parts named next to it and prints one
# status line saying what is not built and which Debian package brings it in
# (scripts/dev.sh deps installs all of them; libtorch-dev only with
# ACCEL_WITH_PYTORCH=1, see README). The core (libaccel.so) needs none of
# them: only the C++ standard library, pthreads and dl.

# accel_optional_dependency(<package> <Debian package> <what is not built>
#                           [find_package arguments...])
# A macro, so that <package>_FOUND and the package's variables reach the caller.
macro(accel_optional_dependency package debian_package not_built)
  find_package(${package} ${ARGN} QUIET)
  if(NOT ${package}_FOUND)
    message(STATUS "accelhooks: ${package} not found, so ${not_built} not built "
                   "(apt-get install ${debian_package})")
  endif()
endmacro()

if(ACCEL_BUILD_TESTS OR ACCEL_BUILD_TOOLS)
  accel_optional_dependency(GTest "libgtest-dev libgmock-dev"
    "the tests, the conformance suite and `accel check` are")
endif()
if(ACCEL_BUILD_TOOLS)
  accel_optional_dependency(CLI11 libcli11-dev "the accel tool is" CONFIG)
endif()
if(ACCEL_BUILD_TOOLS OR ACCEL_BUILD_TESTS)
  accel_optional_dependency(nlohmann_json nlohmann-json3-dev
    "the accel tool and its test are" 3 CONFIG)
endif()
if(ACCEL_BUILD_BENCHMARKS)
  accel_optional_dependency(benchmark libbenchmark-dev "the benchmarks (bench/) are" CONFIG)
endif()
# PyTorch 1.13 (Debian's libtorch-dev): only bench/peer, our hot paths beside
# PyTorch's, uses it. Large, so not installed by default.
if(ACCEL_BUILD_BENCHMARKS AND benchmark_FOUND AND ACCEL_BUILD_PEER_BENCHMARKS)
  accel_optional_dependency(Torch libtorch-dev
    "the PyTorch peer benchmarks (bench/peer) are" CONFIG)
endif()
