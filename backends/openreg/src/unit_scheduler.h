// UnitScheduler: hands out a device's execution units, greatest stream
// priority first, first come first served within a priority.
//
// Why units at all: each stream has a worker thread of its own, so without a
// shared limit every stream would run at once and a stream priority would
// mean nothing. A device with N units runs at most N operations at a time,
// and when work waits for a unit the priority decides who goes next, which
// is what priorities do on real devices (accel/openreg/execution_units.h).
//
// Thread-safety: all members are thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <utility>

#include "accel/openreg/execution_units.h"

namespace accel::openreg::detail {

class UnitScheduler {
 public:
  explicit UnitScheduler(int units) noexcept : units_(units), free_(units) {}

  // Blocks until a unit is free and no waiter ranks before this one, then
  // takes the unit. Never throws (except std::bad_alloc).
  void acquire(int priority);
  // Returns a unit taken with acquire. Never throws.
  void release() noexcept;
  // Changes the number of units; work running now keeps its units.
  void setUnits(int units);
  [[nodiscard]] ExecutionUnitsState state() const;

 private:
  // Ordered so that begin() is the next to run: greatest priority, then oldest.
  using Ticket = std::pair<int, std::uint64_t>;  // {-priority, arrival}

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int units_;
  int free_;  // may go negative while a reduction waits for running work
  std::uint64_t arrivals_ = 0;
  std::set<Ticket> waiting_;
};

}  // namespace accel::openreg::detail
