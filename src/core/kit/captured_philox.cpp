#include "accel/kit/captured_philox.h"

#include <limits>
#include <utility>

#include "accel/error.h"
#include "accel/philox_generator.h"

namespace accel::kit {

// Out of line: a slot's DataPtr frees through the backend's deleter.
CapturedPhilox::~CapturedPhilox() = default;

CapturedPhilox::Slot* CapturedPhilox::find(const Generator& generator) {
  for (Slot& slot : slots_) {
    if (slot.generator == generator) return &slot;
  }
  return nullptr;
}

CapturedPhilox::Position CapturedPhilox::claim(const Generator& generator,
                                               std::uint64_t outputs,
                                               const std::function<DataPtr()>& allocate) {
  ACCEL_CHECK(generator.defined(), InvalidArgument,
              "a captured fill needs a defined generator (pass one, or the device's "
              "default generator)");
  DataPtr spare;  // a slot another thread made first: freed after the lock
  std::unique_lock lock(mutex_);
  Slot* slot = find(generator);
  if (slot == nullptr) {
    lock.unlock();
    DataPtr state = allocate();
    ACCEL_CHECK(state.get() != nullptr, InvalidArgument,
                "a captured fill's Philox slot: the allocator returned no memory for ",
                kSlotBytes, " bytes");
    lock.lock();
    slot = find(generator);
    if (slot == nullptr) {
      slots_.push_back({generator, std::move(state), 0});
      slot = &slots_.back();
    } else {
      spare = std::move(state);
    }
  }
  ACCEL_CHECK(outputs <= std::numeric_limits<std::uint64_t>::max() - slot->outputs,
              InvalidArgument, "a captured fill of ", outputs,
              " outputs: the graph's draw from its generator would pass 2^64 - 1 (",
              slot->outputs, " already); split the graph");
  const Position position{static_cast<const std::uint64_t*>(slot->state.get()),
                          slot->outputs};
  slot->outputs += outputs;
  return position;
}

void CapturedPhilox::advance(
    const std::function<void(void* slot, PhiloxPosition from)>& write) {
  std::lock_guard lock(mutex_);
  for (Slot& slot : slots_) {
    write(slot.state.get(), reservePhilox(slot.generator, slot.outputs));
  }
}

bool CapturedPhilox::empty() const {
  std::lock_guard lock(mutex_);
  return slots_.empty();
}

std::uint64_t CapturedPhilox::outputs(const Generator& generator) const {
  std::lock_guard lock(mutex_);
  for (const Slot& slot : slots_) {
    if (slot.generator == generator) return slot.outputs;
  }
  return 0;
}

}  // namespace accel::kit
