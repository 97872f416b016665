#include "captured_philox.h"

#include <utility>

#include "accel/philox_generator.h"
#include "loader.h"
#include "opencl_error.h"
#include "opencl_memory.h"

namespace accel::opencl::detail {
namespace {

// [seed, base offset]; also the pattern size of the write, which
// clEnqueueSVMMemFill requires the slot to be aligned to (the allocator's
// blocks are aligned far beyond it).
constexpr std::size_t kSlotBytes = 2 * sizeof(cl_ulong);

}  // namespace

CapturedPhilox::Position CapturedPhilox::claim(const Generator& generator,
                                               std::uint64_t outputs, Stream stream) {
  const auto find = [&]() -> Slot* {
    for (Slot& slot : slots_) {
      if (slot.generator == generator) return &slot;
    }
    return nullptr;
  };
  std::unique_lock lock(mutex_);
  Slot* slot = find();
  if (slot == nullptr) {
    // Allocated without the lock (the allocator may run observers); a fill
    // on another thread may have made the slot meanwhile, and this memory
    // then goes back.
    lock.unlock();
    DataPtr state =
        deviceCachingAllocator().allocate(stream.device.index(), kSlotBytes, stream);
    lock.lock();
    slot = find();
    if (slot == nullptr) {
      slots_.push_back({generator, std::move(state), 0});
      slot = &slots_.back();
    }
  }
  const Position position{static_cast<const std::uint64_t*>(slot->state.get()),
                          slot->outputs};
  slot->outputs += outputs;
  return position;
}

void CapturedPhilox::advance(cl_command_queue queue, cl_event previous,
                             DeviceIndex device) {
  std::lock_guard lock(mutex_);
  for (Slot& slot : slots_) {
    const PhiloxPosition from = reservePhilox(slot.generator, slot.outputs);
    const cl_ulong position[2] = {from.seed, from.offset};
    checkCl(
        loader().clEnqueueSVMMemFill(queue, slot.state.get(), position, kSlotBytes,
                                     kSlotBytes, previous != nullptr ? 1 : 0,
                                     previous != nullptr ? &previous : nullptr, nullptr),
        "clEnqueueSVMMemFill (a graph replay's Philox position)", device);
  }
}

}  // namespace accel::opencl::detail
