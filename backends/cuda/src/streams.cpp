#include "streams.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "accel/adapter/failure.h"
#include "accel/kit/per_device.h"
#include "cuda_error.h"
#include "current_device.h"
#include "driver.h"

namespace accel::cuda::detail {
namespace {

struct PriorityPool {
  std::once_flag created;
  std::array<cudaStream_t, kStreamsPerPool> streams{};
  std::atomic<std::uint32_t> next{0};
};

struct DevicePools {
  std::array<PriorityPool, kMaxPriorityLevels> levels;
};

class StreamRegistry {
 public:
  static StreamRegistry& instance() {
    static StreamRegistry* const registry = new StreamRegistry();  // never destroyed
    return *registry;
  }

  DevicePools& pools(DeviceIndex device) { return devices_.get(device); }

  // Null when no pool stream with this id was created.
  cudaStream_t poolStream(DeviceIndex device, StreamId id) {
    const StreamId index = id - 1;
    const auto level = static_cast<int>(index / kStreamsPerPool);
    const auto slot = static_cast<int>(index % kStreamsPerPool);
    if (level >= kMaxPriorityLevels) return nullptr;
    DevicePools* pools = devices_.find(device);
    if (pools == nullptr) return nullptr;
    PriorityPool& pool = pools->levels[level];
    // `next` is bumped only after the pool's streams exist (release below).
    if (pool.next.load(std::memory_order_acquire) == 0) return nullptr;
    return pool.streams[slot];
  }

 private:
  StreamRegistry() = default;
  kit::PerDevice<DevicePools> devices_;
};
}  // namespace

namespace {

// The calling thread's current stream id per device; zero-initialised: every
// device's default stream. Trivially destructible, so readable at any point
// of a thread's or the process's exit.
constinit thread_local std::array<StreamId, 128> t_current_streams{};

// The greatest level, once known (-1: not yet). Every CUDA device reports the
// same range; the query needs a context, so it is asked of a device that has
// one or is about to get one.
std::atomic<int> g_greatest_level{-1};

int queryGreatestLevel(DeviceIndex device) {
  DeviceContext context(device);
  int least = 0;
  int greatestCuda = 0;
  checkCuda(cudaDeviceGetStreamPriorityRange(&least, &greatestCuda),
            "cudaDeviceGetStreamPriorityRange");
  // Levels count from the default priority (0) towards greatestCuda.
  const int level = std::clamp(-greatestCuda, 0, kMaxPriorityLevels - 1);
  g_greatest_level.store(level, std::memory_order_relaxed);
  return level;
}

}  // namespace

std::pair<int, int> streamPriorityRange() {
  int level = g_greatest_level.load(std::memory_order_relaxed);
  if (level < 0) {
    // A device whose context exists answers without creating one; failing
    // that, the thread's current device (where streams are about to be made).
    DeviceIndex device = currentDevice();
    for (DeviceIndex i = 0; i < static_cast<DeviceIndex>(driver().device_count); ++i) {
      if (primaryContextActive(i)) {
        device = i;
        break;
      }
    }
    level = queryGreatestLevel(device);
  }
  return {0, level};
}

std::pair<int, int> streamPriorityRange(DeviceIndex device) {
  const int level = g_greatest_level.load(std::memory_order_relaxed);
  return {0, level >= 0 ? level : queryGreatestLevel(device)};
}

adapter::Stream newStream(DeviceIndex device, int priority) {
  PriorityPool& pool = StreamRegistry::instance().pools(device).levels[priority];
  std::call_once(pool.created, [&] {
    DeviceContext context(device);
    std::array<cudaStream_t, kStreamsPerPool> streams{};
    for (cudaStream_t& stream : streams) {
      checkCuda(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, -priority),
                "cudaStreamCreateWithPriority (a stream pool)");
    }
    pool.streams = streams;
    pool.next.store(1, std::memory_order_release);
  });
  const std::uint32_t ticket = pool.next.fetch_add(1, std::memory_order_relaxed) - 1;
  const StreamId id = 1 + static_cast<StreamId>(priority) * kStreamsPerPool +
                      static_cast<StreamId>(ticket % kStreamsPerPool);
  return {id, device};
}

namespace {

constexpr StreamId kExternalDeviceShift = 56;
constexpr StreamId kExternalAddressMask = (StreamId{1} << kExternalDeviceShift) - 1;

bool isExternal(StreamId id) noexcept { return id > 0 && (id & kExternalStreamTag) != 0; }

}  // namespace

cudaStream_t nativeStream(adapter::Stream stream) {
  if (stream.id == kDefaultStreamId) return nullptr;  // the legacy default stream
  if (isExternal(stream.id)) {
    const auto device =
        static_cast<int>((stream.id & ~kExternalStreamTag) >> kExternalDeviceShift);
    ACCEL_ADAPTER_CHECK(device == stream.device, adapter::InvalidArgument, "stream id ",
                        stream.id, " was wrapped for cuda:", device,
                        ", not cuda:", static_cast<int>(stream.device));
    return reinterpret_cast<cudaStream_t>(
        static_cast<std::uintptr_t>(stream.id & kExternalAddressMask));
  }
  cudaStream_t native = nullptr;
  if (stream.id > 0) {
    native = StreamRegistry::instance().poolStream(stream.device, stream.id);
  }
  ACCEL_ADAPTER_CHECK(native != nullptr, adapter::InvalidArgument, "stream id ",
                      stream.id, " of cuda:", static_cast<int>(stream.device),
                      " is not a stream of the cuda backend; use a pool stream or "
                      "wrapExternalStream");
  return native;
}

adapter::Stream wrapExternalStream(cudaStream_t stream, DeviceIndex device) {
  ACCEL_ADAPTER_CHECK(
      stream != nullptr, adapter::InvalidArgument,
      "wrapExternalStream: null is the default stream (id 0), not an external one");
  const auto address = reinterpret_cast<std::uintptr_t>(stream);
  ACCEL_ADAPTER_CHECK(
      address <= static_cast<std::uintptr_t>(kExternalAddressMask) &&
          device < (kExternalStreamTag >> kExternalDeviceShift),
      adapter::InvalidArgument, "wrapExternalStream: the CUDA stream ", stream,
      " of cuda:", static_cast<int>(device),
      " does not fit a stream id (an address below 2^56 on a device below 64)");
  // The stream's own device, asked of CUDA: an id names the stream that
  // lives at the address now, so a stream destroyed and another created at
  // the same address (on any device) is wrapped as what it is now.
  int actual = -1;
  {
    DeviceContext context(device);
    checkCuda(cudaStreamGetDevice(stream, &actual),
              "cudaStreamGetDevice (wrapExternalStream: is it a live CUDA stream?)");
  }
  ACCEL_ADAPTER_CHECK(
      actual == device, adapter::InvalidArgument, "wrapExternalStream: the CUDA stream ",
      stream, " belongs to cuda:", actual, ", not cuda:", static_cast<int>(device));
  const StreamId id = kExternalStreamTag |
                      (static_cast<StreamId>(device) << kExternalDeviceShift) |
                      static_cast<StreamId>(address);
  return {id, device};
}

std::string describe(adapter::Stream stream) {
  return adapter::concat("stream ", stream.id,
                         " on cuda:", static_cast<int>(stream.device));
}

bool isCapturing(adapter::Stream stream, unsigned long long* capture_id) {
  if (stream.id == kDefaultStreamId) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  checkCuda(cudaStreamGetCaptureInfo(nativeStream(stream), &status, capture_id),
            "cudaStreamGetCaptureInfo");
  return status != cudaStreamCaptureStatusNone;
}

adapter::Stream currentStream(DeviceIndex device) noexcept {
  return {t_current_streams[static_cast<std::size_t>(device)], device};
}

void setCurrentStream(adapter::Stream stream) noexcept {
  t_current_streams[static_cast<std::size_t>(stream.device)] = stream.id;
}

}  // namespace accel::cuda::detail
