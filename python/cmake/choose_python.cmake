# accel_choose_python(<out_exe> <out_reason>): the interpreter to build the
# package for.
#
# Python3_EXECUTABLE wins when given. Otherwise the candidates are the
# `python3` first on PATH, then /usr/bin/python3, and the first one that has
# its development headers (Python.h) and a pybind11 of its own is taken: an
# importable `pybind11` module, or the system pybind11 (pybind11-dev, CMake
# package under /usr) when the interpreter is (a venv of) the system one (sys.base_prefix
# /usr). A pyenv or venv interpreter without pybind11 is thus passed over in
# favour of Debian's, whose python3-* packages the tests use.
function(accel_choose_python out_exe out_reason)
  set(candidates "")
  if(Python3_EXECUTABLE)
    list(APPEND candidates ${Python3_EXECUTABLE})
  else()
    find_program(accel_path_python3 NAMES python3 NO_CACHE)
    if(accel_path_python3)
      list(APPEND candidates ${accel_path_python3})
    endif()
    if(EXISTS /usr/bin/python3)
      list(APPEND candidates /usr/bin/python3)
    endif()
  endif()
  set(probe [=[
import os, sys, sysconfig
headers = os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h'))
try:
    import pybind11  # noqa: F401
    own = True
except ImportError:
    own = os.path.realpath(sys.base_prefix) == '/usr' and os.path.exists('/usr/include/pybind11/pybind11.h')
print(('headers' if headers else 'no-headers') + ';' + ('pybind11' if own else 'no-pybind11'))
]=])
  set(reasons "")
  foreach(candidate IN LISTS candidates)
    execute_process(COMMAND ${candidate} -c "${probe}"
      OUTPUT_VARIABLE answer OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
    if(NOT rc EQUAL 0)
      list(APPEND reasons "${candidate} does not run")
    elseif(answer STREQUAL "headers;pybind11")
      set(${out_exe} ${candidate} PARENT_SCOPE)
      set(${out_reason} "" PARENT_SCOPE)
      return()
    else()
      list(APPEND reasons "${candidate}: ${answer}")
    endif()
  endforeach()
  if(NOT candidates)
    set(reasons "no python3 found")
  endif()
  list(JOIN reasons ", " reasons)
  set(${out_exe} "" PARENT_SCOPE)
  set(${out_reason} "no interpreter with Python.h and pybind11 (${reasons})" PARENT_SCOPE)
endfunction()
