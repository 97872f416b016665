# Optional dependencies, looked up once for the whole tree.
#
# Each one that is missing costs the parts listed next to it and prints one
# status line saying what is not built and which Debian package brings it in
# (scripts/dev.sh deps installs all of them but libtorch-dev; see README).
# The core (libaccel.so) needs none of them: only the C++ standard library,
# pthreads and dl.
#
# GLOBAL: the imported targets are used from every directory of the tree.

# accel_missing(<what is not built> <Debian package>)
function(accel_missing what package)
  message(STATUS "accelhooks: ${what} not built (install the Debian package ${package})")
endfunction()

if(ACCEL_BUILD_TESTS OR ACCEL_BUILD_TOOLS)
  find_package(GTest QUIET GLOBAL)
  if(NOT GTest_FOUND)
    accel_missing("GoogleTest not found: the tests, the conformance suite and `accel check` are"
                  "libgtest-dev libgmock-dev")
  endif()
endif()

if(ACCEL_BUILD_TOOLS)
  find_package(CLI11 CONFIG QUIET GLOBAL)
  if(NOT CLI11_FOUND)
    accel_missing("CLI11 not found: the accel tool is" libcli11-dev)
  endif()
endif()

if(ACCEL_BUILD_TOOLS OR ACCEL_BUILD_TESTS)
  find_package(nlohmann_json 3 CONFIG QUIET GLOBAL)
  if(NOT nlohmann_json_FOUND)
    accel_missing("nlohmann-json not found: the accel tool and its test are" nlohmann-json3-dev)
  endif()
endif()

if(ACCEL_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG QUIET GLOBAL)
  if(NOT benchmark_FOUND)
    accel_missing("Google Benchmark not found: the benchmarks (bench/) are" libbenchmark-dev)
  endif()
endif()

# PyTorch (Debian's libtorch-dev, PyTorch 1.13): only the peer benchmarks
# (bench/peer) measure it beside ours. Large, so not installed by default.
if(ACCEL_BUILD_BENCHMARKS AND benchmark_FOUND AND ACCEL_BUILD_PEER_BENCHMARKS)
  find_package(Torch CONFIG QUIET)
  if(NOT Torch_FOUND)
    accel_missing("libtorch not found: the PyTorch peer benchmarks (bench/peer) are" libtorch-dev)
  endif()
endif()
