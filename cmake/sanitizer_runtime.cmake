# The sanitizer's runtime as a shared library, whichever compiler builds the
# tree (the asan and tsan presets build with clang-16, the release preset
# with GCC; docs/design-notes.md, "The sanitizer trees are clang's").
#
# GCC links ASan's and TSan's runtimes as shared libraries by default;
# clang links them statically into each executable, and leaves a shared
# library's sanitizer symbols for the executable to resolve. The plugins
# link with --no-undefined (nothing may be left for the program to resolve)
# and the Python module is loaded into an uninstrumented interpreter, so
# under clang every target links the shared runtime (-shared-libsan) and
# finds it by the runtime's own folder (an rpath: it is not on the loader's
# path).
#
# Sets ACCEL_ASAN_RUNTIME: the ASan runtime's path in an ASan tree (what an
# uninstrumented interpreter preloads, tests/python), else empty.
set(ACCEL_ASAN_RUNTIME "")
set(accel_sanitizer "")
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*address")
  set(accel_sanitizer asan)
elseif(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*thread")
  set(accel_sanitizer tsan)
endif()
set(accel_runtime_name "")
if(accel_sanitizer AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(accel_runtime_name libclang_rt.${accel_sanitizer}-${CMAKE_SYSTEM_PROCESSOR}.so)
elseif(accel_sanitizer)
  set(accel_runtime_name lib${accel_sanitizer}.so)
endif()
if(accel_runtime_name)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${accel_runtime_name}
    OUTPUT_VARIABLE accel_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${accel_runtime}" OR NOT EXISTS "${accel_runtime}")
    message(FATAL_ERROR "accelhooks: ${CMAKE_CXX_COMPILER} has no ${accel_runtime_name} "
      "(the sanitizer's shared runtime); install the compiler's runtime package "
      "(clang-16: libclang-rt-16-dev)")
  endif()
  if(accel_sanitizer STREQUAL "asan")
    set(ACCEL_ASAN_RUNTIME "${accel_runtime}")
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    get_filename_component(accel_runtime_dir "${accel_runtime}" DIRECTORY)
    add_link_options(-shared-libsan "LINKER:-rpath,${accel_runtime_dir}")
  endif()
endif()

# accel_as_c_library(<target>...): a test's stand-in for a C library (a fake
# driver or OpenCL loader) that declares its entry points loosely (int for
# an enum, void* for a handle), as the real library's uninstrumented C code
# is never checked either. Clang's UBSan checks a call through a function
# pointer against the callee's own type (-fsanitize=function, which GCC does
# not have); the stand-in is compiled without it, the callers keep it.
function(accel_as_c_library)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*undefined")
    foreach(target IN LISTS ARGN)
      target_compile_options(${target} PRIVATE -fno-sanitize=function)
    endforeach()
  endif()
endfunction()
