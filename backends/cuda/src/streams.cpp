#include "streams.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "accel/error.h"
#include "accel/kit/per_device.h"
#include "accel/kit/thread_current.h"
#include "cuda_error.h"
#include "current_device.h"

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

struct External {
  cudaStream_t stream;
  DeviceIndex device;
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

  Stream wrap(cudaStream_t stream, DeviceIndex device) {
    std::lock_guard lock(mutex_);
    if (auto found = ids_.find(stream); found != ids_.end()) {
      const External& known = external_[found->second - kExternalStreamBase];
      ACCEL_CHECK(known.device == device, InvalidArgument,
                  "wrapExternalStream: the CUDA stream was wrapped for cuda:",
                  static_cast<int>(known.device),
                  ", not cuda:", static_cast<int>(device));
      return Stream(Device(DeviceType::CUDA, device), found->second);
    }
    const StreamId id = kExternalStreamBase + static_cast<StreamId>(external_.size());
    external_.push_back({stream, device});
    ids_.emplace(stream, id);
    return Stream(Device(DeviceType::CUDA, device), id);
  }

  cudaStream_t external(Stream stream) {
    std::lock_guard lock(mutex_);
    const StreamId n = stream.id - kExternalStreamBase;
    ACCEL_CHECK(n >= 0 && n < static_cast<StreamId>(external_.size()), InvalidArgument,
                "stream id ", stream.id, " of ", stream.device.str(),
                " is not a stream of the cuda backend (no pool or wrapped external "
                "stream has it)");
    const External& known = external_[n];
    ACCEL_CHECK(known.device == stream.device.index(), InvalidArgument, "stream id ",
                stream.id, " was wrapped for cuda:", static_cast<int>(known.device),
                ", not ", stream.device.str());
    return known.stream;
  }

 private:
  StreamRegistry() = default;
  kit::PerDevice<DevicePools> devices_;
  std::mutex mutex_;
  std::vector<External> external_;
  std::unordered_map<cudaStream_t, StreamId> ids_;
};

// The per-thread current stream ids (the kit's, which stay readable during
// static destruction). Never destroyed.
kit::ThreadCurrent& threadCurrent() {
  static kit::ThreadCurrent* const current = new kit::ThreadCurrent();
  return *current;
}

}  // namespace

std::pair<int, int> streamPriorityRange() {
  static const int greatest = [] {
    DeviceContext context(currentDevice());  // where streams are about to be made
    int least = 0;
    int greatestCuda = 0;
    checkCuda(cudaDeviceGetStreamPriorityRange(&least, &greatestCuda),
              "cudaDeviceGetStreamPriorityRange");
    // Levels count from the default priority (0) towards greatestCuda.
    return std::clamp(-greatestCuda, 0, kMaxPriorityLevels - 1);
  }();
  return {0, greatest};
}

Stream newStream(DeviceIndex device, int priority) {
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
  return Stream(Device(DeviceType::CUDA, device), id);
}

cudaStream_t nativeStream(Stream stream) {
  if (stream.id == kDefaultStreamId) return nullptr;  // the legacy default stream
  if (stream.id >= kExternalStreamBase)
    return StreamRegistry::instance().external(stream);
  cudaStream_t native = nullptr;
  if (stream.id > 0) {
    native = StreamRegistry::instance().poolStream(stream.device.index(), stream.id);
  }
  ACCEL_CHECK(native != nullptr, InvalidArgument, "stream id ", stream.id, " of ",
              stream.device.str(),
              " is not a stream of the cuda backend; use a pool stream or "
              "wrapExternalStream");
  return native;
}

Stream wrapExternalStream(cudaStream_t stream, DeviceIndex device) {
  ACCEL_CHECK(
      stream != nullptr, InvalidArgument,
      "wrapExternalStream: null is the default stream (id 0), not an external one");
  return StreamRegistry::instance().wrap(stream, device);
}

Stream currentStream(DeviceIndex device) {
  return Stream(Device(DeviceType::CUDA, device), threadCurrent().stream(device));
}

void setCurrentStream(Stream stream) {
  threadCurrent().setStream(stream.device.index(), stream.id);
}

}  // namespace accel::cuda::detail
