// Which sanitizer the test program was built with, for the few tests a
// sanitizer's runtime keeps from running (each says why when it skips).
//
// kForkUnsafeAllocatorReason: GCC 12's AddressSanitizer does not intercept
// fork() (libasan.so.8 has no fork interceptor), so its allocator's locks
// are not taken around one: a child forked while another thread held one
// waits for it forever. Without the sanitizer the C library's allocator is
// fork-safe.
#pragma once

namespace accel::testing {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

inline constexpr const char* kForkUnsafeAllocatorReason =
    "AddressSanitizer's allocator (GCC 12) is not fork-safe while another thread "
    "allocates";

}  // namespace accel::testing
