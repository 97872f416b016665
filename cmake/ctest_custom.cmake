# CTestCustom.cmake in the build directory, which ctest reads on every run:
# - after the tests, scripts/skipped_tests.py lists each skipped test (and
#   each skipped pytest case of a passing file) with the reason it gave, so
#   that ctest's own output shows why, not only "Skipped";
# - the output ctest keeps of a passing or skipped test is 1 MiB instead of
#   1 KiB, so that the reasons at the end of a long pytest run are in the log
#   the script reads.
if(ACCEL_PYTHON_EXECUTABLE)
  set(accel_ctest_python ${ACCEL_PYTHON_EXECUTABLE})
else()
  find_program(accel_ctest_python NAMES python3)
endif()
set(accel_ctest_custom "set(CTEST_CUSTOM_MAXIMUM_PASSED_TEST_OUTPUT_SIZE 1048576)\n")
if(accel_ctest_python)
  string(APPEND accel_ctest_custom
    "set(CTEST_CUSTOM_POST_TEST \"\\\"${accel_ctest_python}\\\" "
    "\\\"${accelhooks_SOURCE_DIR}/scripts/skipped_tests.py\\\" \\\"${PROJECT_BINARY_DIR}\\\"\")\n")
else()
  message(STATUS "accelhooks: ctest will not list skip reasons (no python3 found)")
endif()
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/CTestCustom.cmake CONTENT "${accel_ctest_custom}" @ONLY)
