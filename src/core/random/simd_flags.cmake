# Per-file compile flags for the random fills (random_fill*.cpp); included by
# src/core/CMakeLists.txt.
#
# - Every fill file gets -ffp-contract=off: the scalar and SIMD paths round
#   each a * b + c twice, and a compiler that fused one of them into an FMA
#   would break their bit-identity (GCC contracts by default, even across
#   intrinsics).
# - random_fill_avx2.cpp / random_fill_avx512.cpp get -mavx2 / -mavx512f, and
#   random_fill.cpp learns which exist (ACCEL_FILL_HAVE_*); it picks one at run
#   time with __builtin_cpu_supports. Elsewhere (another architecture or
#   compiler) those files compile to nothing and the scalar path is used.
set(_accel_fill_dir ${CMAKE_CURRENT_LIST_DIR})

if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  set_property(SOURCE
    ${_accel_fill_dir}/random_fill.cpp
    ${_accel_fill_dir}/random_fill_avx2.cpp
    ${_accel_fill_dir}/random_fill_avx512.cpp
    APPEND PROPERTY COMPILE_OPTIONS -ffp-contract=off)

  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set_property(SOURCE ${_accel_fill_dir}/random_fill_avx2.cpp
      APPEND PROPERTY COMPILE_OPTIONS -mavx2)
    set_property(SOURCE ${_accel_fill_dir}/random_fill_avx512.cpp
      APPEND PROPERTY COMPILE_OPTIONS -mavx512f)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      # GCC 12's own AVX-512 headers trip -Wmaybe-uninitialized (GCC PR 105593).
      set_property(SOURCE ${_accel_fill_dir}/random_fill_avx512.cpp
        APPEND PROPERTY COMPILE_OPTIONS -Wno-maybe-uninitialized)
    endif()
    set_property(SOURCE ${_accel_fill_dir}/random_fill.cpp
      APPEND PROPERTY COMPILE_DEFINITIONS ACCEL_FILL_HAVE_AVX2=1 ACCEL_FILL_HAVE_AVX512=1)
  endif()
endif()

unset(_accel_fill_dir)
