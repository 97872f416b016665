#!/usr/bin/env bash
# Line coverage of backends/cuda/src (the plugin) and backends/cuda/api (the
# program-side API library) by the CUDA backend's tests, which run
# on the runtime double (docs/cuda.md): builds only those tests (the
# coverage preset), runs them, prints gcovr's summary, then every source file
# of those directories the figure does not count and why (device code: gcov
# cannot instrument what nvcc compiles for the GPU). Without the CUDA
# toolkit the backend is not built, and this says so instead. The preset
# counts with -fprofile-update=atomic: the tests run threads, and counters
# updated racily once left gcov a branch "taken -1", which gcovr refuses.
set -euo pipefail
cd "$(dirname "$0")/.."
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
cmake --preset coverage
cmake --build --preset coverage
find build/coverage -name '*.gcda' -delete
# A failing test fails the stage, after the figure is printed.
tests_status=0
ctest --preset coverage || tests_status=$?
gcovr --root . --filter 'backends/cuda/src/' --filter 'backends/cuda/api/' --object-directory build/coverage \
  --print-summary \
  --txt build/coverage/cuda_coverage.txt
cat build/coverage/cuda_coverage.txt
# Nothing is left out silently: a source file without coverage data is named.
for source in backends/cuda/src/*.cpp backends/cuda/src/*.cu backends/cuda/api/*.cpp; do
  if ! grep -q "^${source}\b" build/coverage/cuda_coverage.txt; then
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
