// The copies group on OpenCL: clEnqueueSVMMemcpy on the stream's queue.
//
// Asynchronous where OpenCL allows it: a copy whose host side is pinned
// memory of this backend (or device to device) is enqueued and returns at
// once; a copy from or to pageable host memory blocks until it is done
// (OpenCL reads and writes host memory when the command runs, and pageable
// memory may be freed as soon as the call returns). Between two devices
// (two contexts, whose SVM pointers a queue cannot mix) the copy goes through
// a host buffer, blocking. The core has checked everything the copy's
// contract asks before these run — device ranges inside one live
// allocation of the device cache, host ranges inside their pinned block,
// neither side another's memory — and keeps a pinned block from its next
// owner until the stream has passed the copy (docs/hooks.md, copies).
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "loader.h"
#include "opencl_backend.h"
#include "opencl_error.h"
#include "pinned_memory.h"
#include "queue_tails.h"
#include "recording.h"
#include "streams.h"
#include "svm_memory.h"

namespace accel::opencl::detail {
namespace {

// The device holding `ptr`, which the core found in a live allocation.
DeviceIndex deviceHolding(const void* ptr) {
  const std::optional<Segment> segment = svmMemory().segmentOf(ptr);
  return segment ? segment->device : DeviceIndex{0};
}
// cl_khr_command_buffer 0.9 copies only between buffers: host memory cannot
// be recorded, and a copy between two contexts (through the host) neither.
void refuseHostCopyWhileCaptured(HookId hook, Stream stream) {
  refuseWhileRecording(stream, hook,
                       "has no command that copies from or to host memory or between "
                       "devices; copy before or after the capture");
}

void enqueueCopy(HookId hook, void* dst, const void* src, std::size_t bytes,
                 Stream stream, bool blocking) {
  const cl_command_queue queue = nativeQueue(stream);
  checkCl(queueTail(queue).enqueue([&](cl_event* done) {
    return loader().clEnqueueSVMMemcpy(queue, blocking ? CL_TRUE : CL_FALSE, dst, src,
                                       bytes, 0, nullptr, done);
  }),
          "clEnqueueSVMMemcpy", hook, stream.device);
  if (!blocking) (void)loader().clFlush(queue);
}

}  // namespace

void OpenClBackend::copyHostToDevice(void* dst, const void* src, std::size_t bytes,
                                     Stream stream) {
  if (bytes == 0) return;
  refuseHostCopyWhileCaptured(HookId::copyHostToDevice, stream);
  enqueueCopy(HookId::copyHostToDevice, dst, src, bytes, stream,
              /*blocking=*/!detail::pinnedMemory().contains(src));
}

void OpenClBackend::copyDeviceToHost(void* dst, const void* src, std::size_t bytes,
                                     Stream stream) {
  if (bytes == 0) return;
  refuseHostCopyWhileCaptured(HookId::copyDeviceToHost, stream);
  enqueueCopy(HookId::copyDeviceToHost, dst, src, bytes, stream,
              /*blocking=*/!detail::pinnedMemory().contains(dst));
}

void OpenClBackend::copyDeviceToDevice(void* dst, const void* src, std::size_t bytes,
                                       Stream stream) {
  if (bytes == 0) return;
  const DeviceIndex to = deviceHolding(dst);
  const DeviceIndex from = deviceHolding(src);
  if (to == from) {
    if (const std::shared_ptr<Recording> recording = recordingOf(stream)) {
      recording->addCopy(dst, src, bytes, name(HookId::copyDeviceToDevice));
      return;
    }
    enqueueCopy(HookId::copyDeviceToDevice, dst, src, bytes, stream, /*blocking=*/false);
    return;
  }
  // Two contexts: through the host, on each device's default queue after
  // the stream's work (the stream is on one of them).
  refuseHostCopyWhileCaptured(HookId::copyDeviceToDevice, stream);
  checkCl(loader().clFinish(nativeQueue(stream)), "clFinish", HookId::copyDeviceToDevice,
          stream.device);
  std::vector<unsigned char> staging(bytes);
  enqueueCopy(HookId::copyDeviceToDevice, staging.data(), src, bytes,
              makeStream(from, kDefaultStreamId), /*blocking=*/true);
  enqueueCopy(HookId::copyDeviceToDevice, dst, staging.data(), bytes,
              makeStream(to, kDefaultStreamId), /*blocking=*/true);
}

}  // namespace accel::opencl::detail
