# Prints what a skipping or passing test prints (see CMakeLists.txt).
case $1 in
gtest_skip)
  printf '%s\n' 'Note: Google Test filter = Gtest.Skips' '[ RUN      ] Gtest.Skips' \
    'tests/cuda/x_test.cpp:12: Skipped' 'no CUDA device: cudaErrorNoDevice' \
    '[  SKIPPED ] Gtest.Skips (0 ms)' '[  PASSED  ] 0 tests.' ;;
gtest_program)
  printf '%s\n' '[==========] Running 3 tests from 1 test suite.' '[ RUN      ] Program.Passes' \
    '[       OK ] Program.Passes (0 ms)' '[ RUN      ] Program.Skips' \
    'tests/x_test.cpp:40: Skipped' 'needs two devices' 'Google Test trace:' \
    'tests/x_test.cpp:38: on the test backend' '' '[  SKIPPED ] Program.Skips (0 ms)' \
    '[ RUN      ] Program.AlsoPasses' '[       OK ] Program.AlsoPasses (1 ms)' \
    '[==========] 3 tests from 1 test suite ran. (1 ms total)' '[  PASSED  ] 2 tests.' \
    '[  SKIPPED ] 1 test, listed below:' '[  SKIPPED ] Program.Skips' ;;
gtest_pass)
  printf '%s\n' '[ RUN      ] Gtest.Passes' '[       OK ] Gtest.Passes (0 ms)' ;;
pytest_all_skipped)
  # More than ctest's default 1 KiB of kept output before the reasons.
  i=0; while [ $i -lt 60 ]; do echo "warning line $i of a long pytest run"; i=$((i + 1)); done
  printf '%s\n' 'ss' '=== short test summary info ===' \
    'SKIPPED [2] test_torch.py:9: torch is not installed (apt-get install python3-torch)' \
    '2 skipped in 0.01s' ;;
pytest_some_skipped)
  printf '%s\n' '.s.' '=== short test summary info ===' \
    'SKIPPED [1] test_cuda.py:30: no CUDA device' '2 passed, 1 skipped in 0.02s' ;;
pytest_skipped_and_error)
  printf '%s\n' 's E' '=== short test summary info ===' \
    'SKIPPED [1] test_x.py:4: no device' 'ERROR test_x.py::test_y - RuntimeError' \
    '1 skipped, 1 error in 0.02s'
  exit 1 ;;
esac
