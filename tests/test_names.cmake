# ctest_names_fit_a_terminal: every test's name is at most 100 characters,
# so that each of ctest's progress lines fits one terminal line. Reads the
# names from the files ctest reads (CTestTestfile.cmake and GoogleTest's
# discovered *_tests.cmake) rather than running `ctest -N`, which would
# rewrite the running ctest's log.
#   cmake -DBUILD_DIR=<dir> -P tests/test_names.cmake
file(GLOB_RECURSE files ${BUILD_DIR}/CTestTestfile.cmake ${BUILD_DIR}/*_tests.cmake)
set(count 0)
set(too_long "")
foreach(file IN LISTS files)
  file(STRINGS ${file} lines REGEX "^ *add_test\\(")
  foreach(line IN LISTS lines)
    if(line MATCHES "^ *add_test\\( *\\[=*\\[([^]]*)\\]")
      set(name "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^ *add_test\\(\"?([^ \"]+)")
      set(name "${CMAKE_MATCH_1}")
    else()
      continue()
    endif()
    math(EXPR count "${count} + 1")
    string(LENGTH "${name}" length)
    if(length GREATER 100)
      string(APPEND too_long "\n  ${length}: ${name}")
    endif()
  endforeach()
endforeach()
if(too_long)
  message(FATAL_ERROR "test names longer than 100 characters (shorten them):${too_long}")
endif()
if(count LESS 10)
  message(FATAL_ERROR "found only ${count} tests under ${BUILD_DIR}; is it built?")
endif()
message(STATUS "${count} test names, none longer than 100 characters")
