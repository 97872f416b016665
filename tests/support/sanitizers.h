// Which sanitizer the test program was built with, for the few tests a
// sanitizer's runtime keeps from running (each says why when it skips).
//
// kForkUnsafeAllocatorReason: AddressSanitizer does not intercept fork()
// (neither GCC 12's libasan.so.8 nor clang 16's libclang_rt.asan, which
// builds the asan tree, has a fork interceptor), so its allocator's locks
// are not taken around one: a child forked while another thread held one
// waits for it forever. Without the sanitizer the C library's allocator is
// fork-safe.
#pragma once

namespace accel::testing {

// GCC says __SANITIZE_*__; clang answers __has_feature.
#if defined(__has_feature)
#define ACCEL_TEST_HAS_FEATURE(feature) __has_feature(feature)
#else
#define ACCEL_TEST_HAS_FEATURE(feature) 0
#endif

#if defined(__SANITIZE_THREAD__) || ACCEL_TEST_HAS_FEATURE(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif

#if defined(__SANITIZE_ADDRESS__) || ACCEL_TEST_HAS_FEATURE(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

#undef ACCEL_TEST_HAS_FEATURE

inline constexpr const char* kForkUnsafeAllocatorReason =
    "AddressSanitizer's allocator (GCC 12's and clang 16's runtimes) is not "
    "fork-safe while another thread allocates";

}  // namespace accel::testing
