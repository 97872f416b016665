// Kernels: host callables that openreg runs on a stream as device work.
//
// A kernel names the device buffers it uses; while it runs, exactly those
// allocations are readable and writable from the host thread that executes
// it, and every other device allocation still faults. That catches the bug a
// real device would catch: a kernel touching memory it was not given.
//
//   accel::openreg::launchKernel(stream, "scale",
//       {{"x", x.get(), n * sizeof(float)}},
//       [](const accel::openreg::KernelContext& k) {
//         for (float& v : k.buffer<float>("x")) v *= 2.0f;
//       });
//
// The launch validates the buffers at once (each inside one live allocation
// of the stream's device) and returns; the kernel runs on the stream's worker
// after the work enqueued before it, occupying one of the device's execution
// units (execution_units.h). An exception thrown by the kernel does not reach
// the launcher: it is reported as DeviceError by the next synchronisation of
// that stream (synchronizeStream, queryStream, deviceSynchronize, copy()),
// once, naming the kernel.
//
// Thread-safety: launchKernel is thread-safe. A kernel body runs on a worker
// thread, possibly concurrently with kernels of other streams of the same
// device; it must synchronise with the host the way device code would.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/device.h"
#include "accel/error.h"
#include "accel/openreg/export.h"
#include "accel/stream.h"

namespace accel::openreg {

// One device buffer a kernel uses: a name to find it by, and the range.
struct KernelBuffer {
  std::string name;
  void* data = nullptr;
  std::size_t bytes = 0;
};

// What a running kernel sees: its buffers (accessible now) and where it runs.
class ACCEL_OPENREG_API KernelContext {
 public:
  struct Binding {
    std::string name;
    std::span<std::byte> bytes;
  };

  KernelContext(std::string_view kernel, Stream stream, std::vector<Binding> buffers)
      : kernel_(kernel), stream_(stream), buffers_(std::move(buffers)) {}

  // The buffer called `name`, as bytes. Throws InvalidArgument naming the
  // kernel and the buffers it has when there is no such buffer.
  [[nodiscard]] std::span<std::byte> bytes(std::string_view name) const;
  // The buffer called `name` as elements of T. Throws InvalidArgument if the
  // size is not a multiple of sizeof(T) (alignment is the allocation's: pages).
  template <typename T>
  [[nodiscard]] std::span<T> buffer(std::string_view name) const {
    std::span<std::byte> raw = bytes(name);
    ACCEL_CHECK(raw.size() % sizeof(T) == 0, InvalidArgument, "kernel '", kernel_,
                "': buffer '", name, "' has ", raw.size(),
                " bytes, not a whole number of elements of ", sizeof(T), " bytes");
    return {reinterpret_cast<T*>(raw.data()), raw.size() / sizeof(T)};
  }
  [[nodiscard]] const std::vector<Binding>& buffers() const noexcept { return buffers_; }
  [[nodiscard]] std::string_view kernelName() const noexcept { return kernel_; }
  [[nodiscard]] Stream stream() const noexcept { return stream_; }
  [[nodiscard]] Device device() const noexcept { return stream_.device; }

 private:
  std::string kernel_;
  Stream stream_;
  std::vector<Binding> buffers_;
};

using KernelFunction = std::function<void(const KernelContext&)>;

// Enqueues `body` on `stream` with `buffers` accessible while it runs. Throws
// InvalidArgument for a stream that is not openreg's, an empty body, a buffer
// not inside one live allocation of the stream's device, or two buffers with
// one name; DeviceError when the device is lost. While the stream captures a
// graph the kernel is recorded, not run (and `body` must be callable again on
// every replay).
ACCEL_OPENREG_API void launchKernel(Stream stream, std::string_view name,
                                    std::vector<KernelBuffer> buffers,
                                    KernelFunction body);

}  // namespace accel::openreg
