// Recording: the cl_khr_command_buffer a graph capture records into, and
// which streams are being captured.
//
// While a stream is captured, the backend's own commands on it (fill
// kernels, device-to-device copies) are recorded into the capture's command
// buffer instead of being enqueued: the fill code and the copies ask
// recordingOf(stream) first (one relaxed load while nothing is captured
// anywhere). Work a program enqueues itself on the stream's native queue is
// not recorded (it runs at once).
//
// Kernels: each recorded launch records a clone of the kernel
// (clCloneKernel, which copies the arguments set), kept until the recording
// is released. The backend's fill kernels are per-thread objects whose
// arguments are set again by the next fill, and pocl 3.1 reads a recorded
// kernel's arguments when the command buffer runs, not when the command was
// recorded (seen: two launches recorded with different arguments both ran
// with the last ones); a clone nobody touches again is right either way.
// Copies: cl_khr_command_buffer 0.9 has no SVM copy, so both sides are
// wrapped as CL_MEM_USE_HOST_PTR buffers over their clSVMAlloc allocations
// (whose storage OpenCL defines to be that SVM memory) and recorded with
// clCommandCopyBufferKHR at the offsets; one buffer per allocation, kept
// until the recording is released.
// Random fills: a recorded fill kernel reads its Philox position from a
// slot of device memory, [seed, offset], that each replay writes first, so
// that every replay draws new numbers, as running the fills again would.
// The bookkeeping (a slot per captured fill, each fill's generator kept
// alive, the draws claimed in capture order at each replay) is the
// adapter's (accel/adapter/captured_draws.h); what is OpenCL's is the slot's
// memory (16 bytes of SVM of the stream's device, from clSVMAlloc, kept as
// long as the recording) and its write: clEnqueueSVMMemFill, whose 16-byte
// pattern is copied when it is enqueued, on the replay's queue ahead of the
// command buffer (writePositions).
//
// Thread-safety: thread-safe (a recording has its own mutex; the table of
// captured streams another). Lifetime: a recording lives while its graph
// holds it and while a caller that looked it up uses it (shared_ptr).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "accel/adapter/captured_draws.h"
#include "accel/adapter/core.h"
#include "cl_api.h"
#include "command_buffers.h"
#include "types.h"

namespace accel::opencl::detail {

class Recording {
 public:
  // A command buffer for `stream`'s queue (simultaneous use where the
  // device allows it). Throws NotSupported when the device cannot record,
  // DeviceError when clCreateCommandBufferKHR fails.
  Recording(const adapter::Core& core, Stream stream);
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  [[nodiscard]] Stream stream() const noexcept { return stream_; }
  [[nodiscard]] const CommandBufferSupport& support() const noexcept { return support_; }
  [[nodiscard]] cl_command_buffer_khr commandBuffer() const noexcept { return buffer_; }
  // A slot for a captured fill of `outputs` outputs of `generator` (kept
  // alive with the recording): `device` is the memory its kernel reads the
  // position from. Throws what CapturedDraws::claim throws, OutOfMemory when
  // clSVMAlloc fails.
  struct Slot {
    std::shared_ptr<const adapter::PhiloxPosition> position;
    void* device = nullptr;
  };
  [[nodiscard]] Slot claimSlot(accel_generator* generator, std::uint64_t outputs);
  // Gives a slot back when its fill was not recorded after all. Never throws.
  void unclaimSlot(const Slot& slot) noexcept;
  // Claims the recorded fills' draws for one replay (in capture order) and
  // enqueues the write of each position on `queue` (of `device`), after
  // `previous` (the graph's last replay, or null). Throws what the core's
  // reservation throws (a draw past 2^64 - 1: the earlier ones stay
  // claimed), DeviceError when an enqueue fails.
  void writePositions(cl_command_queue queue, cl_event previous, DeviceIndex device);

  // Records `kernel` (its arguments as set now) over a 1-D range. `what`
  // names the call for errors ("fillUniform"). Throws DeviceError.
  void addKernel(cl_kernel kernel, std::size_t global, std::size_t local,
                 std::string_view what);
  // Records a copy of `bytes` between two device allocations of the
  // stream's device (both checked by the caller). Throws DeviceError.
  void addCopy(void* dst, const void* src, std::size_t bytes, std::string_view what);
  // Ends recording (clFinalizeCommandBufferKHR). Throws DeviceError.
  void finalize();

 private:
  cl_mem bufferOver(const void* ptr, std::size_t* offset);

  const adapter::Core core_;
  const Stream stream_;
  const CommandBufferSupport& support_;
  std::mutex mutex_;  // guards the command buffer while recording, and below
  cl_command_buffer_khr buffer_ = nullptr;
  std::vector<cl_kernel> kernels_;
  std::unordered_map<void*, cl_mem> buffers_;  // allocation base -> buffer
  adapter::CapturedDraws draws_;
  // Each claimed position's device slot (clSVMAlloc), freed with the recording.
  std::unordered_map<const adapter::PhiloxPosition*, void*> slots_;
};

// The recording `stream` is captured into, or null. Never throws.
std::shared_ptr<Recording> recordingOf(Stream stream) noexcept;
// Throws NotSupported naming `hook`, the stream and its device when
// `stream` is being captured; `why` says what cl_khr_command_buffer lacks
// and what to do instead ("records no events; ..."). Nothing otherwise.
void refuseWhileRecording(Stream stream, HookId hook, std::string_view why);
// Starts sending `stream`'s commands to `recording`. Throws InvalidArgument
// when the stream is already being captured.
void beginRecording(const std::shared_ptr<Recording>& recording);
// Stops it (nothing when `stream` is not being captured). Never throws.
void endRecording(Stream stream) noexcept;

}  // namespace accel::opencl::detail
