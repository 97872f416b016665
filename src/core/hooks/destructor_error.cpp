#include "hooks/destructor_error.h"

#include <atomic>
#include <cstdio>
#include <exception>

namespace accel::detail {

void reportDestructorError(const char* where) noexcept {
  // Once: a dead backend would otherwise print on every guard's exit.
  static std::atomic<bool> reported{false};
  if (reported.exchange(true)) return;
  const char* what = "unknown exception";
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::fprintf(stderr,
               "accelhooks: %s could not restore state and ignored the error: %s\n",
               where, what);
}

}  // namespace accel::detail
