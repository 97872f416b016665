#include "recording.h"

#include <atomic>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "devices.h"
#include "loader.h"
#include "opencl_error.h"
#include "streams.h"
#include "svm_memory.h"

namespace accel::opencl::detail {
namespace {

// The streams being captured. `active` lets every enqueue skip the lock
// while nothing is captured.
struct CapturedStreams {
  std::atomic<int> active{0};
  std::mutex mutex;
  // By (device, id): few streams are captured at once.
  std::vector<std::shared_ptr<Recording>> recordings;
};

CapturedStreams& captured() {
  static auto* const streams = new CapturedStreams();  // never destroyed
  return *streams;
}

}  // namespace

Recording::Recording(const adapter::Core& core, Stream stream)
    : core_(core), stream_(stream), support_(commandBufferSupport(stream.device)) {
  const DeviceIndex device = stream.device;
  ACCEL_ADAPTER_CHECK(support_.usable, NotSupported, "'opencl' cannot capture ",
                      deviceLabel(device), ": ", support_.reason);
  cl_command_queue queue = nativeQueue(stream);
  const cl_command_buffer_properties_khr simultaneous[] = {
      CL_COMMAND_BUFFER_FLAGS_KHR, CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  cl_int status = CL_SUCCESS;
  buffer_ = support_.create(1, &queue, support_.simultaneous_use ? simultaneous : nullptr,
                            &status);
  checkCl(status, "clCreateCommandBufferKHR", device);
}

Recording::~Recording() {
  const Loader& l = loader();
  if (buffer_ != nullptr) (void)support_.release(buffer_);
  for (cl_kernel kernel : kernels_) (void)l.clReleaseKernel(kernel);
  for (const auto& [base, mem] : buffers_) (void)l.clReleaseMemObject(mem);
  if (!slots_.empty()) {
    const cl_context context = devices().used[stream_.device]->context.load();
    for (const auto& [position, slot] : slots_) l.clSVMFree(context, slot);
  }
}

Recording::Slot Recording::claimSlot(accel_generator* generator, std::uint64_t outputs) {
  Slot slot;
  slot.position = draws_.claim(core_, generator, outputs);
  const cl_ulong empty[2] = {0, 0};
  slot.device = loader().clSVMAlloc(deviceContext(stream_.device), CL_MEM_READ_WRITE,
                                    sizeof empty, 0);
  if (slot.device == nullptr) {
    draws_.unclaim(slot.position);
    throw OutOfMemory(concat("clSVMAlloc of a captured fill's Philox position (",
                             sizeof empty, " bytes) failed on ",
                             deviceLabel(stream_.device)));
  }
  try {
    std::lock_guard lock(mutex_);
    slots_.emplace(slot.position.get(), slot.device);
  } catch (...) {
    loader().clSVMFree(deviceContext(stream_.device), slot.device);
    draws_.unclaim(slot.position);
    throw;
  }
  return slot;
}

void Recording::unclaimSlot(const Slot& slot) noexcept {
  draws_.unclaim(slot.position);
  std::lock_guard lock(mutex_);
  if (slots_.erase(slot.position.get()) > 0) {
    loader().clSVMFree(devices().used[stream_.device]->context.load(), slot.device);
  }
}

void Recording::writePositions(cl_command_queue queue, cl_event previous,
                               DeviceIndex device) {
  for (const auto& [position, from] : draws_.advance(core_)) {
    void* slot = nullptr;
    {
      std::lock_guard lock(mutex_);
      slot = slots_.at(position.get());
    }
    const cl_ulong value[2] = {from.seed, from.offset};
    checkCl(
        loader().clEnqueueSVMMemFill(queue, slot, value, sizeof value, sizeof value,
                                     previous != nullptr ? 1 : 0,
                                     previous != nullptr ? &previous : nullptr, nullptr),
        "clEnqueueSVMMemFill (a graph replay's Philox position)", device);
  }
}

void Recording::addKernel(cl_kernel kernel, std::size_t global, std::size_t local,
                          std::string_view what) {
  const Loader& l = loader();
  const DeviceIndex device = stream_.device;
  cl_int status = CL_SUCCESS;
  cl_kernel clone = l.clCloneKernel(kernel, &status);
  checkCl(status, "clCloneKernel (recording " + std::string(what) + ")", device);
  std::lock_guard lock(mutex_);
  try {
    kernels_.push_back(clone);
  } catch (...) {
    (void)l.clReleaseKernel(clone);
    throw;
  }
  checkCl(support_.ndrange(buffer_, nullptr, nullptr, clone, 1, nullptr, &global, &local,
                           0, nullptr, nullptr, nullptr),
          "clCommandNDRangeKernelKHR (recording " + std::string(what) + ")", device);
}

cl_mem Recording::bufferOver(const void* ptr, std::size_t* offset) {
  // The core checked that the copy's ranges lie in live blocks of the
  // stream's device; the block's segment is the allocation to wrap.
  const std::optional<Segment> a = svmMemory().segmentOf(ptr);
  ACCEL_ADAPTER_CHECK(a.has_value(), InvalidArgument, ptr,
                      " is not in an SVM allocation of the opencl backend");
  *offset = static_cast<std::size_t>(static_cast<const char*>(ptr) -
                                     static_cast<const char*>(a->base));
  auto found = buffers_.find(a->base);
  if (found != buffers_.end()) return found->second;
  cl_int status = CL_SUCCESS;
  cl_mem mem = loader().clCreateBuffer(deviceContext(a->device),
                                       CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, a->bytes,
                                       a->base, &status);
  checkCl(status, "clCreateBuffer (CL_MEM_USE_HOST_PTR over an SVM allocation)",
          a->device);
  try {
    buffers_.emplace(a->base, mem);
  } catch (...) {
    (void)loader().clReleaseMemObject(mem);
    throw;
  }
  return mem;
}

void Recording::addCopy(void* dst, const void* src, std::size_t bytes,
                        std::string_view what) {
  std::lock_guard lock(mutex_);
  std::size_t dst_offset = 0;
  std::size_t src_offset = 0;
  cl_mem to = bufferOver(dst, &dst_offset);
  cl_mem from = bufferOver(src, &src_offset);
  checkCl(support_.copy_buffer(buffer_, nullptr, from, to, src_offset, dst_offset, bytes,
                               0, nullptr, nullptr, nullptr),
          "clCommandCopyBufferKHR (recording " + std::string(what) + ")", stream_.device);
}

void Recording::finalize() {
  std::lock_guard lock(mutex_);
  checkCl(support_.finalize(buffer_), "clFinalizeCommandBufferKHR", stream_.device);
}

std::shared_ptr<Recording> recordingOf(Stream stream) noexcept {
  CapturedStreams& c = captured();
  if (c.active.load(std::memory_order_relaxed) == 0) [[likely]] {
    return nullptr;
  }
  std::lock_guard lock(c.mutex);
  for (const std::shared_ptr<Recording>& recording : c.recordings) {
    if (sameStream(recording->stream(), stream)) return recording;
  }
  return nullptr;
}

void refuseWhileRecording(Stream stream, HookId hook, std::string_view why) {
  if (recordingOf(stream) == nullptr) [[likely]] {
    return;
  }
  throw NotSupported(concat("'opencl' does not support ", name(hook), "() on stream ",
                            stream.id, " of ", deviceLabel(stream.device),
                            " while a graph captures it: cl_khr_command_buffer 0.9 ",
                            why));
}

void beginRecording(const std::shared_ptr<Recording>& recording) {
  CapturedStreams& c = captured();
  std::lock_guard lock(c.mutex);
  for (const std::shared_ptr<Recording>& other : c.recordings) {
    ACCEL_ADAPTER_CHECK(!sameStream(other->stream(), recording->stream()),
                        InvalidArgument, name(HookId::graphCaptureBegin),
                        "(): ", StreamName{recording->stream()},
                        " is already being captured by another graph; end that capture "
                        "first, or capture on another stream");
  }
  c.recordings.push_back(recording);
  c.active.fetch_add(1, std::memory_order_relaxed);
}

void endRecording(Stream stream) noexcept {
  CapturedStreams& c = captured();
  std::lock_guard lock(c.mutex);
  const auto removed = std::erase_if(c.recordings, [&](const auto& recording) {
    return sameStream(recording->stream(), stream);
  });
  if (removed > 0) c.active.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace accel::opencl::detail
