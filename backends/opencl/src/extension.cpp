// The plugin's side of the OpenCL extension interface (extension.h).
#include "extension.h"

#include <optional>
#include <utility>

#include "devices.h"
#include "loader.h"
#include "opencl_backend.h"
#include "opencl_error.h"
#include "pinned_memory.h"
#include "programs.h"
#include "queue_tails.h"
#include "streams.h"
#include "svm_memory.h"

namespace accel::opencl::extension {
namespace {

using detail::DeviceIndex;

template <typename Body>
Status capture(Body&& body) noexcept {
  return adapter::extensionGuard("opencl", std::forward<Body>(body));
}

}  // namespace

Status availability(int& device_count, std::string& reason,
                    std::string& skipped) noexcept {
  return capture([&] {
    const detail::Devices& d = detail::devices();
    device_count = d.count();
    reason = d.reason;
    skipped = d.skipped;
  });
}

Status deviceInfo(std::int8_t device, DeviceInfo& info) noexcept {
  return capture([&] { info = detail::deviceRecord(device).info; });
}

Status nativePlatform(std::int8_t device, _cl_platform_id*& out) noexcept {
  return capture([&] { out = detail::deviceRecord(device).platform; });
}

Status nativeDevice(std::int8_t device, _cl_device_id*& out) noexcept {
  return capture([&] { out = detail::deviceRecord(device).device; });
}

Status nativeContext(std::int8_t device, _cl_context*& out) noexcept {
  return capture([&] { out = detail::deviceContext(device); });
}

Status nativeQueue(accel_stream stream, _cl_command_queue*& out) noexcept {
  return capture([&] {
    (void)detail::deviceRecord(stream.device);
    out = detail::nativeQueue(stream);
    // Work may now be enqueued on it behind the backend's back: queries of
    // the stream ask the queue (queue_tails.h).
    detail::queueTail(out).markExternal();
  });
}

Status svmAllocation(const void* ptr, void*& base, std::size_t& bytes,
                     std::size_t& offset, std::int8_t& device) noexcept {
  return capture([&] {
    detail::requireAvailable();
    const adapter::BlockLookup found = detail::registeredBackend().core().useBlock(ptr);
    const std::optional<detail::Segment> segment = detail::svmMemory().segmentOf(ptr);
    // A block freed to the cache lies in a segment the backend still holds.
    ACCEL_ADAPTER_CHECK(found.state == ACCEL_BLOCK_LIVE || !segment,
                        detail::InvalidArgument, "svmAllocation: ", ptr,
                        " is in a cached (freed) block of ",
                        detail::deviceLabel(segment ? segment->device : 0),
                        ", not in a live allocation; allocate before wrapping");
    ACCEL_ADAPTER_CHECK(segment.has_value(), detail::InvalidArgument,
                        "svmAllocation: ", ptr, " is not device memory of 'opencl' (",
                        ptr == nullptr                         ? "a null pointer"
                        : detail::pinnedMemory().contains(ptr) ? "pinned host memory"
                                                               : "foreign memory",
                        "); pass a pointer from the opencl device allocator");
    base = segment->base;
    bytes = segment->bytes;
    offset = static_cast<std::size_t>(static_cast<const char*>(ptr) -
                                      static_cast<const char*>(segment->base));
    device = segment->device;
  });
}

Status wrapExternalQueue(_cl_command_queue* queue, std::int8_t device,
                         accel_stream& out) noexcept {
  return capture([&] {
    out = detail::wrapExternalQueue(queue, device);
    detail::queueTail(queue).markExternal();  // its owner enqueues on it too
  });
}

Status buildProgram(std::int8_t device, std::string_view source, std::string_view options,
                    _cl_program*& out) noexcept {
  return capture([&] { out = detail::programFor(device, source, options); });
}

Status copyBlocking(void* dst, const void* src, std::size_t bytes) noexcept {
  return capture([&] {
    if (bytes == 0) return;
    ACCEL_ADAPTER_CHECK(dst != nullptr && src != nullptr, detail::InvalidArgument,
                        "copyBlocking: null pointer for a copy of ", bytes, " bytes");
    detail::requireAvailable();
    std::optional<detail::Segment> segment = detail::svmMemory().segmentOf(dst);
    if (!segment) segment = detail::svmMemory().segmentOf(src);
    const DeviceIndex index = segment ? segment->device : DeviceIndex{0};
    const cl_command_queue queue =
        detail::nativeQueue(detail::makeStream(index, detail::kDefaultStreamId));
    detail::checkCl(detail::loader().clEnqueueSVMMemcpy(queue, CL_TRUE, dst, src, bytes,
                                                        0, nullptr, nullptr),
                    "clEnqueueSVMMemcpy (copyBlocking)", index);
  });
}

}  // namespace accel::opencl::extension
