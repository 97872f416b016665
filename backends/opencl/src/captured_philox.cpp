#include "captured_philox.h"

#include "loader.h"
#include "opencl_error.h"
#include "opencl_memory.h"

namespace accel::opencl::detail {

// A slot is also the pattern of the write, which clEnqueueSVMMemFill
// requires it to be aligned to (the allocator's blocks are aligned far
// beyond it).
static_assert(kit::CapturedPhilox::kSlotBytes == 2 * sizeof(cl_ulong));

kit::CapturedPhilox::Position claimCapturedPhilox(kit::CapturedPhilox& graph,
                                                  const Generator& generator,
                                                  std::uint64_t outputs, Stream stream) {
  return graph.claim(generator, outputs, [&] {
    return deviceCachingAllocator().allocate(stream.device.index(),
                                             kit::CapturedPhilox::kSlotBytes, stream);
  });
}

void advanceCapturedPhilox(kit::CapturedPhilox& graph, cl_command_queue queue,
                           cl_event previous, DeviceIndex device) {
  graph.advance([&](void* slot, PhiloxPosition from) {
    const cl_ulong position[2] = {from.seed, from.offset};
    checkCl(
        loader().clEnqueueSVMMemFill(queue, slot, position, sizeof(position),
                                     sizeof(position), previous != nullptr ? 1 : 0,
                                     previous != nullptr ? &previous : nullptr, nullptr),
        "clEnqueueSVMMemFill (a graph replay's Philox position)", device);
  });
}

}  // namespace accel::opencl::detail
