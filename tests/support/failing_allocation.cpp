#include "support/failing_allocation.h"

#include <cstdlib>
#include <new>

namespace {

thread_local bool t_fail_next = false;

void* allocate(std::size_t bytes) {
  if (t_fail_next) {
    t_fail_next = false;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}

void* allocateNoThrow(std::size_t bytes) noexcept {
  try {
    return allocate(bytes);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

namespace accel::testing {
void failNextAllocation() noexcept { t_fail_next = true; }
void allowAllocations() noexcept { t_fail_next = false; }
}  // namespace accel::testing

void* operator new(std::size_t bytes) { return allocate(bytes); }
void* operator new[](std::size_t bytes) { return allocate(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  return allocateNoThrow(bytes);
}
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
  return allocateNoThrow(bytes);
}
void operator delete(void* ptr) noexcept { std::free(ptr); }
void operator delete[](void* ptr) noexcept { std::free(ptr); }
void operator delete(void* ptr, std::size_t) noexcept { std::free(ptr); }
void operator delete[](void* ptr, std::size_t) noexcept { std::free(ptr); }
void operator delete(void* ptr, const std::nothrow_t&) noexcept { std::free(ptr); }
void operator delete[](void* ptr, const std::nothrow_t&) noexcept { std::free(ptr); }
