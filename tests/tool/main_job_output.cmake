# main_job_ends_on_the_demo: the README's main command (build preset main,
# target main_job) ends on the demo, followed by exactly two lines: what was
# shown and what to try next; nothing is built after the demo starts; and
# every line the README shows of that output is in it.
#   cmake -DBUILD_DIR=<dir> -P tests/tool/main_job_output.cmake
cmake_minimum_required(VERSION 3.25)
# It runs what the README's command runs: on an up-to-date tree (after
# `cmake --build`, as scripts/dev.sh test does) that is only the demo; on a
# stale one it builds main_job's dependencies first.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target main_job
  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "main_job failed (${status}):\n${out}")
endif()
# The README's quick start quotes the output: each quoted line must be one
# the job printed, so that what a newcomer is told to expect is what they see.
get_filename_component(root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
file(READ "${root}/README.md" readme)
set(marker "<!-- main job output: tests/tool/main_job_output.cmake finds each line in it -->\n```text\n")
string(FIND "${readme}" "${marker}" quoted_at)
if(quoted_at LESS 0)
  message(FATAL_ERROR "README.md has no quoted main job output (${marker})")
endif()
string(LENGTH "${marker}" marker_length)
math(EXPR quoted_at "${quoted_at} + ${marker_length}")
string(SUBSTRING "${readme}" ${quoted_at} -1 quoted)
string(FIND "${quoted}" "\n```" quoted_end)
string(SUBSTRING "${quoted}" 0 ${quoted_end} quoted)
string(REPLACE ";" "," quoted "${quoted}")
string(REPLACE "\n" ";" quoted_lines "${quoted}")
string(REPLACE ";" "," printed "${out}")
foreach(line IN LISTS quoted_lines)
  string(FIND "${printed}" "${line}\n" found)
  if(found LESS 0)
    message(FATAL_ERROR "README.md quotes a line the main job did not print:\n  ${line}\n"
                        "It printed:\n${out}")
  endif()
endforeach()
string(REGEX REPLACE "\n$" "" out "${out}")
string(REPLACE ";" "," out "${out}")
string(REPLACE "\n" ";" lines "${out}")
list(LENGTH lines count)
if(count LESS 4)
  message(FATAL_ERROR "main_job printed ${count} lines:\n${out}")
endif()
math(EXPR shown "${count} - 2")
math(EXPR next "${count} - 1")
math(EXPR demo "${count} - 3")
list(GET lines ${shown} shown_line)
list(GET lines ${next} next_line)
list(GET lines ${demo} demo_line)
if(NOT shown_line MATCHES "^Shown: " OR NOT next_line MATCHES "^Next: .* check .*docs/python.md")
  message(FATAL_ERROR "main_job's last two lines are not 'Shown: ...' and 'Next: ... check ... docs/python.md':\n${out}")
endif()
if(demo_line STREQUAL "" OR demo_line MATCHES "^\\[[0-9]+/[0-9]+\\]")
  message(FATAL_ERROR "the line before 'Shown:' is not the demo's:\n${out}")
endif()
# After `accel info` starts, nothing is built (the demo is the last screen).
string(FIND "${out}" "accel info, then the openreg demo" demo_start)
if(demo_start LESS 0)
  message(FATAL_ERROR "main_job's demo step did not run:\n${out}")
endif()
string(SUBSTRING "${out}" ${demo_start} -1 after_start)
if(after_start MATCHES "\\[[0-9]+/[0-9]+\\] (Building|Linking)")
  message(FATAL_ERROR "main_job built something after its demo started:\n${out}")
endif()
message(STATUS "main_job ends on the demo and two lines:\n  ${shown_line}\n  ${next_line}")
