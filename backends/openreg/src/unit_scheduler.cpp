#include "unit_scheduler.h"

namespace accel::openreg::detail {

void UnitScheduler::acquire(int priority) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (waiting_.empty() && free_ > 0) {
    --free_;
    return;
  }
  const Ticket ticket{-priority, arrivals_++};
  waiting_.insert(ticket);
  cv_.wait(lock, [&] { return free_ > 0 && *waiting_.begin() == ticket; });
  waiting_.erase(waiting_.begin());
  --free_;
  // The next waiter may be able to go too (several units freed at once).
  if (free_ > 0 && !waiting_.empty()) cv_.notify_all();
}

void UnitScheduler::release() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++free_;
    if (waiting_.empty()) return;
  }
  cv_.notify_all();
}

void UnitScheduler::setUnits(int units) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_ += units - units_;
    units_ = units;
  }
  cv_.notify_all();
}

ExecutionUnitsState UnitScheduler::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {units_, units_ - free_, static_cast<int>(waiting_.size())};
}

}  // namespace accel::openreg::detail
