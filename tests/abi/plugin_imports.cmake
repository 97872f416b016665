# Which symbols a plugin imports from the core, read from ELF dynamic
# symbols: the symbols libaccel.so defines that the plugin leaves undefined.
#   cmake -DNM=... -DREADELF=... -DCORE=<libaccel.so> -DPLUGIN=<.so>
#         -DEXPECT=nothing -P plugin_imports.cmake
# nothing   the plugin imports no symbol of the core and does not even name
#           libaccel.so as a needed library (every plugin: each one speaks
#           the C boundary, which reaches the core only through the services
#           table).
cmake_minimum_required(VERSION 3.25)
function(dynamic_symbols file which out)
  execute_process(COMMAND ${NM} -D ${which} ${file}
    RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D ${which} ${file} failed: ${err}")
  endif()
  string(REGEX REPLACE "\n$" "" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(names "")
  foreach(line IN LISTS lines)
    # "0000000000001234 T name@@VERSION" or "                 U name@VERSION"
    if(line MATCHES "^[0-9a-f ]+ [A-Za-z] ([^@ ]+)")
      list(APPEND names "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

dynamic_symbols(${CORE} --defined-only core_symbols)
dynamic_symbols(${PLUGIN} --undefined-only plugin_undefined)
list(LENGTH core_symbols core_count)
if(core_count LESS 10)
  message(FATAL_ERROR "${CORE} defines only ${core_count} dynamic symbols; is it the core?")
endif()
set(imported "")
foreach(symbol IN LISTS plugin_undefined)
  if(symbol IN_LIST core_symbols)
    list(APPEND imported "${symbol}")
  endif()
endforeach()
list(LENGTH imported imported_count)
get_filename_component(name ${PLUGIN} NAME)

if(EXPECT STREQUAL "nothing")
  execute_process(COMMAND ${READELF} -d ${PLUGIN} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${READELF} -d ${PLUGIN} failed")
  endif()
  if(dynamic MATCHES "NEEDED[^\n]*libaccel\\.so")
    message(FATAL_ERROR "${name} names libaccel.so as a needed library; a plugin "
                        "reaches the core only through the services table")
  endif()
  if(imported_count GREATER 0)
    string(REPLACE ";" "\n  " list "${imported}")
    message(FATAL_ERROR "${name} imports ${imported_count} symbols of the core:\n  ${list}")
  endif()
  message(STATUS "${name} imports nothing from the core")
else()
  message(FATAL_ERROR "EXPECT must be nothing, not '${EXPECT}'")
endif()
