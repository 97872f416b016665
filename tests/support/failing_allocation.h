// failNextAllocation: the next operator new on the calling thread throws
// std::bad_alloc, for tests of what code does when an allocation fails at a
// given point (the library's allocations included: the test program's
// operator new replaces the one libaccel.so would use).
//
// Link tests/support/failing_allocation.cpp into the test program: it
// replaces the whole non-aligned operator new and delete family (plain,
// array, nothrow; sized deletes), over malloc and free, so that every
// allocation and its release go through the same pair (AddressSanitizer
// checks that they match). Aligned forms are left to the implementation.
//
// Thread-safety: per thread (the request is thread_local).
#pragma once

namespace accel::testing {

// Arms a one-shot failure of the next allocation on this thread.
void failNextAllocation() noexcept;
// Disarms it if it has not fired yet.
void allowAllocations() noexcept;

}  // namespace accel::testing
