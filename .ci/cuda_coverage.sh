#!/usr/bin/env bash
# Line coverage of backends/cuda/src (the plugin) and backends/cuda/api (the
# program-side API library) by the tests, which run the CUDA backend on the
# runtime double (docs/cuda.md). The counts come from the asan tree, whose
# preset compiles the backend's host code with gcov's counters
# (ACCEL_CUDA_COVERAGE, backends/cuda/CMakeLists.txt):
#   .ci/cuda_coverage.sh            configures the asan tree, builds the CUDA
#                                   tests alone (the asan-cuda build preset),
#                                   clears the counts, runs those tests;
#   .ci/cuda_coverage.sh --counted  takes the counts the asan tree's last
#                                   test run left (CI runs the whole asan
#                                   workflow first: the CUDA tests with the
#                                   rest, and the tool's and plugins' tests
#                                   that load the backend count too).
# Then prints gcovr's summary, and every source file of those directories
# the figure does not count and why (device code: gcov cannot instrument
# what nvcc compiles for the GPU). Without the CUDA toolkit the backend is
# not built, and this says so instead.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 1 ] || { [ $# -eq 1 ] && [ "$1" != "--counted" ]; }; then
  echo "usage: .ci/cuda_coverage.sh [--counted] (got: $*)" >&2
  exit 2
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "no CUDA toolkit (nvcc) here: the CUDA backend is not built, its coverage not measured"
  exit 0
fi
if ! command -v gcovr >/dev/null; then
  # A fresh CI machine has no gcovr (Debian's package of it).
  sudo=(); [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends gcovr
fi
tree=build/asan
report=$tree/cuda_coverage.txt
tests_status=0
if [ "${1:-}" = "--counted" ]; then
  if ! find "$tree" -name '*.gcda' -print -quit 2>/dev/null | grep -q .; then
    echo "no line counts in $tree: run its tests first (cmake --workflow --preset asan)," \
         "or run this script without --counted" >&2
    exit 1
  fi
else
  cmake --preset asan
  cmake --build --preset asan-cuda
  find "$tree" -name '*.gcda' -delete
  # A failing test fails the script, after the figure is printed.
  ctest --preset asan -R '[Cc]uda' || tests_status=$?
fi
# The counts are read by the tool of the compiler that wrote them: gcov
# for GCC's, `llvm-cov gcov` for clang's (the asan preset's clang-16).
gcov_tool=gcov
if grep -q '^CMAKE_CXX_COMPILER:[^=]*=.*clang' "$tree/CMakeCache.txt"; then
  gcov_tool=""
  for candidate in llvm-cov-16 llvm-cov; do
    if command -v "$candidate" >/dev/null; then gcov_tool="$candidate gcov"; break; fi
  done
  if [ -z "$gcov_tool" ]; then
    echo "$tree was built by clang: its line counts need llvm-cov (Debian's llvm-16 or llvm)," \
         "which is not installed" >&2
    exit 1
  fi
fi
gcovr --gcov-executable "$gcov_tool" --root . --filter 'backends/cuda/src/' --filter 'backends/cuda/api/' \
  --object-directory "$tree" "$tree" \
  --print-summary \
  --txt "$report"
cat "$report"
# Nothing is left out silently: a source file without coverage data is named.
for source in backends/cuda/src/*.cpp backends/cuda/src/*.cu backends/cuda/api/*.cpp; do
  if ! grep -q "^${source}\b" "$report"; then
    case "$source" in
      *.cu) echo "not counted: $source (device code and its <<<>>> launches; gcov cannot" \
                 "instrument nvcc's device code; the launcher is fill_launch.cpp, the" \
                 "kernels' steps run on the host in cuda_host_test)" ;;
      *) echo "not counted: $source (compiled into no CUDA test: its lines are missing" \
              "from the figure above)" ;;
    esac
  fi
done
exit "$tests_status"
