#include "recording.h"

#include <atomic>
#include <string>
#include <unordered_map>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/opencl/opencl.h"
#include "loader.h"
#include "opencl_error.h"
#include "streams.h"

namespace accel::opencl::detail {
namespace {

// The streams being captured. `active` lets every enqueue skip the lock
// while nothing is captured.
struct CapturedStreams {
  std::atomic<int> active{0};
  std::mutex mutex;
  std::unordered_map<Stream, std::shared_ptr<Recording>> recordings;
};

CapturedStreams& captured() {
  static auto* const streams = new CapturedStreams();  // never destroyed
  return *streams;
}

}  // namespace

Recording::Recording(Stream stream)
    : stream_(stream), support_(commandBufferSupport(stream.device.index())) {
  const DeviceIndex device = stream.device.index();
  ACCEL_CHECK(support_.usable, NotSupported, "'opencl' cannot capture ",
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
}

void Recording::addKernel(cl_kernel kernel, std::size_t global, std::size_t local,
                          std::string_view what) {
  const Loader& l = loader();
  const DeviceIndex device = stream_.device.index();
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
  const SvmAllocation a = svmAllocation(ptr);
  *offset = a.offset;
  auto found = buffers_.find(a.base);
  if (found != buffers_.end()) return found->second;
  cl_int status = CL_SUCCESS;
  cl_mem mem = loader().clCreateBuffer(nativeContext(a.device),
                                       CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, a.bytes,
                                       a.base, &status);
  checkCl(status, "clCreateBuffer (CL_MEM_USE_HOST_PTR over an SVM allocation)",
          a.device);
  try {
    buffers_.emplace(a.base, mem);
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
          "clCommandCopyBufferKHR (recording " + std::string(what) + ")",
          stream_.device.index());
}

void Recording::finalize() {
  std::lock_guard lock(mutex_);
  checkCl(support_.finalize(buffer_), "clFinalizeCommandBufferKHR",
          stream_.device.index());
}

std::shared_ptr<Recording> recordingOf(Stream stream) noexcept {
  CapturedStreams& c = captured();
  if (c.active.load(std::memory_order_relaxed) == 0) [[likely]] {
    return nullptr;
  }
  std::lock_guard lock(c.mutex);
  auto found = c.recordings.find(stream);
  return found == c.recordings.end() ? nullptr : found->second;
}

void refuseWhileRecording(Stream stream, HookId hook, std::string_view why) {
  if (recordingOf(stream) == nullptr) [[likely]] {
    return;
  }
  throw NotSupported(accel::detail::concat(
      "'opencl' does not support ", hookInfo(hook).name, "() on stream ", stream.id,
      " of ", deviceLabel(stream.device.index()),
      " while a graph captures it: cl_khr_command_buffer 0.9 ", why));
}

void beginRecording(const std::shared_ptr<Recording>& recording) {
  CapturedStreams& c = captured();
  std::lock_guard lock(c.mutex);
  const bool added = c.recordings.emplace(recording->stream(), recording).second;
  ACCEL_CHECK(added, InvalidArgument, hookInfo(HookId::graphCaptureBegin).name,
              "(): stream ", recording->stream().id, " of ",
              recording->stream().device.str(),
              " is already being captured by another graph; end that capture first, "
              "or capture on another stream");
  c.active.fetch_add(1, std::memory_order_relaxed);
}

void endRecording(Stream stream) noexcept {
  CapturedStreams& c = captured();
  std::lock_guard lock(c.mutex);
  if (c.recordings.erase(stream) > 0) c.active.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace accel::opencl::detail
