#include "workspaces.h"

#include <map>
#include <mutex>
#include <utility>

#include "accel/allocator.h"
#include "accel/hooks_table.h"

namespace accel::cuda::detail {

WorkspaceBuffer workspaceFor(const void* handle, cudaStream_t stream, DeviceIndex device,
                             std::size_t bytes) {
  // Never destroyed: freeing device memory during exit is what must not happen.
  static auto* const mutex = new std::mutex();
  static auto* const buffers = new std::map<std::pair<const void*, cudaStream_t>,
                                            std::pair<DataPtr, std::size_t>>();
  std::lock_guard lock(*mutex);
  auto& [buffer, size] = (*buffers)[{handle, stream}];
  if (!buffer) {
    buffer = getHooks(DeviceType::CUDA).getDeviceAllocator(device).allocate(bytes);
    size = bytes;
  }
  return {buffer.get(), size};
}

}  // namespace accel::cuda::detail
