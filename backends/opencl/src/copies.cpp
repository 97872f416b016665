// The copies group on OpenCL: clEnqueueSVMMemcpy on the stream's queue.
//
// Asynchronous where OpenCL allows it: a copy whose host side is pinned
// memory of this backend (or device to device) is enqueued and returns at
// once; a copy from or to pageable host memory blocks until it is done
// (OpenCL reads and writes host memory when the command runs, and pageable
// memory may be freed as soon as the call returns). Between two devices
// (two contexts, whose SVM pointers a queue cannot mix) the copy goes through
// a host buffer, blocking. The core has checked everything the copy's
// contract asks before the *Impl runs — device ranges inside one live
// allocation of the device cache, host ranges inside their pinned block,
// neither side another's memory — and keeps a pinned block from its next
// owner until the stream has passed the copy (hooks.h, copies group).
#include <cstdint>
#include <memory>
#include <vector>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/opencl/opencl.h"
#include "devices.h"
#include "loader.h"
#include "opencl_error.h"
#include "opencl_hooks.h"
#include "opencl_memory.h"
#include "queue_tails.h"
#include "recording.h"
#include "streams.h"

namespace accel::opencl::detail {
namespace {

// The device holding `ptr`, which the core found in a live allocation.
DeviceIndex deviceHolding(const void* ptr) {
  return deviceCachingAllocator().deviceOf(ptr).value_or(0);
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
          "clEnqueueSVMMemcpy", hook, stream.device.index());
  if (!blocking) (void)loader().clFlush(queue);
}

}  // namespace

void OpenClHooks::copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                                       Stream stream) {
  requireAvailable();
  if (bytes == 0) return;
  refuseHostCopyWhileCaptured(HookId::copyHostToDevice, stream);
  enqueueCopy(HookId::copyHostToDevice, dst, src, bytes, stream,
              /*blocking=*/!addresses().isPinned(src));
}

void OpenClHooks::copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                                       Stream stream) {
  requireAvailable();
  if (bytes == 0) return;
  refuseHostCopyWhileCaptured(HookId::copyDeviceToHost, stream);
  enqueueCopy(HookId::copyDeviceToHost, dst, src, bytes, stream,
              /*blocking=*/!addresses().isPinned(dst));
}

void OpenClHooks::copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                                         Stream stream) {
  requireAvailable();
  if (bytes == 0) return;
  const DeviceIndex to = deviceHolding(dst);
  const DeviceIndex from = deviceHolding(src);
  if (to == from) {
    if (const std::shared_ptr<Recording> recording = recordingOf(stream)) {
      recording->addCopy(dst, src, bytes, hookInfo(HookId::copyDeviceToDevice).name);
      return;
    }
    enqueueCopy(HookId::copyDeviceToDevice, dst, src, bytes, stream, /*blocking=*/false);
    return;
  }
  // Two contexts: through the host, on each device's default queue after
  // the stream's work (the stream is on one of them).
  refuseHostCopyWhileCaptured(HookId::copyDeviceToDevice, stream);
  checkCl(loader().clFinish(nativeQueue(stream)), "clFinish", HookId::copyDeviceToDevice,
          stream.device.index());
  std::vector<unsigned char> staging(bytes);
  enqueueCopy(HookId::copyDeviceToDevice, staging.data(), src, bytes,
              Stream(Device(deviceType(), from), kDefaultStreamId), /*blocking=*/true);
  enqueueCopy(HookId::copyDeviceToDevice, dst, staging.data(), bytes,
              Stream(Device(deviceType(), to), kDefaultStreamId), /*blocking=*/true);
}

}  // namespace accel::opencl::detail
