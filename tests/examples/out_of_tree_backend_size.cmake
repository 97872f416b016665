# out_of_tree_backend_size: the worked example stays small, and the pages
# that give its size give the size it has.
#
# The plugin adapter and the core's synchronous-device kit exist so that a
# vendor's backend is short: the example declares every hook group in at
# most 130 code lines (lines that are neither blank nor only a // comment). The example's README and docs/writing-a-backend.md
# say "N lines of code (M with comments)"; both figures are checked against
# the file, so the pages cannot drift from it.
#   cmake -DSOURCE_DIR=<checkout> -P tests/examples/out_of_tree_backend_size.cmake
set(limit 130)
set(example ${SOURCE_DIR}/examples/out_of_tree_backend/example_backend.cpp)
if(NOT EXISTS ${example})
  message(FATAL_ERROR "cannot read ${example}")
endif()
# Lines counted as `grep -c` counts them (.ci/out_of_tree.sh does the same on
# the installed copy): file(STRINGS) would drop the blank ones.
file(READ ${example} text)
string(REGEX REPLACE "\n$" "" text "${text}")
# A list cannot hold ';' and splits nowhere inside unbalanced [ ]: neither
# matters to the count.
string(REGEX REPLACE "[][;]" "," text "${text}")
string(REPLACE "\n" ";" lines "${text}")
set(all 0)
set(code 0)
foreach(line IN LISTS lines)
  math(EXPR all "${all} + 1")
  if(NOT line MATCHES "^[ \t]*(//.*)?$")
    math(EXPR code "${code} + 1")
  endif()
endforeach()
if(code GREATER limit)
  message(FATAL_ERROR "example_backend.cpp has ${code} code lines, more than ${limit}: "
                      "move what every backend would write into the core or the adapter "
                      "(include/accel/plugin_adapter.h)")
endif()

set(wrong "")
foreach(page examples/out_of_tree_backend/README.md docs/writing-a-backend.md)
  file(READ ${SOURCE_DIR}/${page} body)
  string(REGEX REPLACE "[ \t\r\n]+" " " body "${body}")
  if(NOT body MATCHES "([0-9]+) lines of code[ (,]+([0-9]+) with comments")
    string(APPEND wrong "\n  ${page}: no \"N lines of code (M with comments)\" to check")
  elseif(NOT CMAKE_MATCH_1 EQUAL code OR NOT CMAKE_MATCH_2 EQUAL all)
    string(APPEND wrong "\n  ${page}: says ${CMAKE_MATCH_1} lines of code (${CMAKE_MATCH_2} "
                        "with comments); the file has ${code} (${all})")
  endif()
endforeach()
if(wrong)
  message(FATAL_ERROR "pages out of date with example_backend.cpp:${wrong}")
endif()
message(STATUS "example_backend.cpp: ${code} code lines (at most ${limit}), ${all} in all")
