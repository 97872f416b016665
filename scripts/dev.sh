#!/usr/bin/env bash
# The README's quick start: installs missing build dependencies (Debian and
# Ubuntu, through apt-get), then runs a CMake workflow preset.
#
#   scripts/dev.sh main   build what the demo needs (core, openreg, the tool, the
#                         Python module), then run `accel info` and the demos
#   scripts/dev.sh test   build the rest and run the test suite
#   scripts/dev.sh deps   only install the dependencies
#   scripts/dev.sh asan|tsan   the sanitizer workflows
#
# ACCEL_WITH_PYTORCH=1 also installs libtorch-dev and python3-torch (PyTorch
# 1.13, about 160 packages with their dependencies), so that bench/peer, our
# benchmarks beside PyTorch's, is built, and the Python tests that check
# against torch (its tensors as copy sources, torch.cuda._memory_viz reading
# our snapshots) run instead of skipping. CI sets it; a quick start does not
# need it.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config libgtest-dev libgmock-dev libbenchmark-dev
          libcli11-dev nlohmann-json3-dev python3-dev pybind11-dev python3-pytest python3-numpy python3-hypothesis python3-mypy
          libpng-dev python3-venv python3-pip python3-setuptools python3-wheel
          opencl-headers ocl-icd-opencl-dev pocl-opencl-icd libclblast-dev clinfo
          abigail-tools clang-14 libc++-14-dev libc++abi-14-dev)
if [ "${ACCEL_WITH_PYTORCH:-0}" = 1 ]; then
  packages+=(libtorch-dev python3-torch)
fi
# The sanitizer trees are built by clang-16 (CMakePresets.json): for asan,
# tsan and deps only.
case "${1:-}" in
  deps|asan|tsan) packages+=(clang-16 libclang-rt-16-dev) ;;
esac

install_deps() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

case "${1:-}" in
  deps) install_deps ;;
  main) install_deps; cmake --workflow --preset main ;;
  # ctest ends with the skipped tests and their reasons (scripts/skipped_tests.py).
  test|asan|tsan) install_deps; cmake --workflow --preset "$1" ;;
  *) echo "usage: scripts/dev.sh main|test|asan|tsan|deps" >&2; exit 2 ;;
esac
