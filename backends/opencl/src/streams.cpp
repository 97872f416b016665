#include "streams.h"

#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "accel/kit/per_device.h"
#include "devices.h"
#include "loader.h"
#include "opencl_error.h"

namespace accel::opencl::detail {
namespace {

struct PriorityPool {
  std::once_flag created;
  std::array<cl_command_queue, kStreamsPerPool> queues{};
  std::atomic<std::uint32_t> next{0};  // 0 until `queues` exist
};

struct DeviceQueues {
  std::once_flag default_created;
  std::atomic<cl_command_queue> default_queue{nullptr};
  std::array<PriorityPool, kMaxPriorityLevels> levels;
};

struct External {
  cl_command_queue queue;
  DeviceIndex device;
};

cl_command_queue createQueue(DeviceIndex device, int level) {
  DeviceRecord& record = deviceRecord(device);
  const cl_context context = deviceContext(device);
  cl_queue_properties properties[5] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0,
                                       0, 0};
  if (record.info.priority_hints) {
    properties[2] = CL_QUEUE_PRIORITY_KHR;
    properties[3] = level > 0 ? CL_QUEUE_PRIORITY_HIGH_KHR : CL_QUEUE_PRIORITY_MED_KHR;
  }
  cl_int status = CL_SUCCESS;
  cl_command_queue queue = loader().clCreateCommandQueueWithProperties(
      context, record.device, properties, &status);
  checkCl(status, "clCreateCommandQueueWithProperties", device);
  return queue;
}

class QueueRegistry {
 public:
  static QueueRegistry& instance() {
    static QueueRegistry* const registry = new QueueRegistry();  // never destroyed
    return *registry;
  }

  DeviceQueues& device(DeviceIndex index) { return devices_.get(index); }
  DeviceQueues* existing(DeviceIndex index) const noexcept {
    return devices_.find(index);
  }

  Stream wrap(cl_command_queue queue, DeviceIndex device) {
    std::lock_guard lock(mutex_);
    if (auto found = ids_.find(queue); found != ids_.end()) {
      const External& known = external_[found->second - kExternalStreamBase];
      ACCEL_ADAPTER_CHECK(known.device == device, InvalidArgument,
                          "wrapExternalQueue: the queue was wrapped for opencl:",
                          static_cast<int>(known.device),
                          ", not opencl:", static_cast<int>(device));
      return makeStream(device, found->second);
    }
    const StreamId id = kExternalStreamBase + static_cast<StreamId>(external_.size());
    checkCl(loader().clRetainCommandQueue(queue), "clRetainCommandQueue", device);
    external_.push_back({queue, device});
    ids_.emplace(queue, id);
    return makeStream(device, id);
  }

  cl_command_queue external(Stream stream) {
    std::lock_guard lock(mutex_);
    const StreamId n = stream.id - kExternalStreamBase;
    ACCEL_ADAPTER_CHECK(
        n >= 0 && n < static_cast<StreamId>(external_.size()), InvalidArgument,
        "stream id ", stream.id, " of ", DeviceName{stream.device},
        " is not a stream of the opencl backend (no pool or wrapped queue has "
        "it)");
    const External& known = external_[n];
    ACCEL_ADAPTER_CHECK(known.device == stream.device, InvalidArgument, "stream id ",
                        stream.id, " was wrapped for ", DeviceName{known.device},
                        ", not ", DeviceName{stream.device});
    return known.queue;
  }

  std::vector<cl_command_queue> externalOf(DeviceIndex device) {
    std::lock_guard lock(mutex_);
    std::vector<cl_command_queue> queues;
    for (const External& e : external_) {
      if (e.device == device) queues.push_back(e.queue);
    }
    return queues;
  }

 private:
  QueueRegistry() = default;
  kit::PerDevice<DeviceQueues> devices_;
  std::mutex mutex_;
  std::vector<External> external_;
  std::unordered_map<cl_command_queue, StreamId> ids_;
};

cl_command_queue defaultQueue(DeviceIndex device) {
  DeviceQueues& queues = QueueRegistry::instance().device(device);
  cl_command_queue queue = queues.default_queue.load(std::memory_order_acquire);
  if (queue != nullptr) [[likely]] {
    return queue;
  }
  std::call_once(queues.default_created, [&] {
    queues.default_queue.store(createQueue(device, 0), std::memory_order_release);
  });
  return queues.default_queue.load(std::memory_order_acquire);
}

}  // namespace

std::pair<int, int> streamPriorityRange(DeviceIndex index) {
  return {0, deviceRecord(index).info.priority_hints ? kMaxPriorityLevels - 1 : 0};
}

Stream newStream(DeviceIndex device, int priority) {
  (void)deviceRecord(device);  // checks the index
  PriorityPool& pool = QueueRegistry::instance().device(device).levels[priority];
  std::call_once(pool.created, [&] {
    std::array<cl_command_queue, kStreamsPerPool> queues{};
    int made = 0;
    try {
      for (; made < kStreamsPerPool; ++made) queues[made] = createQueue(device, priority);
    } catch (...) {
      for (int i = 0; i < made; ++i) (void)loader().clReleaseCommandQueue(queues[i]);
      throw;
    }
    pool.queues = queues;
    pool.next.store(1, std::memory_order_release);
  });
  const std::uint32_t ticket = pool.next.fetch_add(1, std::memory_order_relaxed) - 1;
  const StreamId id = 1 + static_cast<StreamId>(priority) * kStreamsPerPool +
                      static_cast<StreamId>(ticket % kStreamsPerPool);
  return makeStream(device, id);
}

cl_command_queue nativeQueue(Stream stream) {
  const DeviceIndex device = stream.device;
  (void)deviceRecord(device);  // checks the index
  if (stream.id == kDefaultStreamId) return defaultQueue(device);
  if (stream.id >= kExternalStreamBase) return QueueRegistry::instance().external(stream);
  cl_command_queue queue = nullptr;
  if (stream.id > 0) {
    const StreamId index = stream.id - 1;
    const auto level = static_cast<int>(index / kStreamsPerPool);
    if (level < kMaxPriorityLevels) {
      PriorityPool& pool = QueueRegistry::instance().device(device).levels[level];
      if (pool.next.load(std::memory_order_acquire) != 0) {
        queue = pool.queues[index % kStreamsPerPool];
      }
    }
  }
  ACCEL_ADAPTER_CHECK(queue != nullptr, InvalidArgument, "stream id ", stream.id, " of ",
                      DeviceName{device}, " is not a stream of the opencl backend; use ",
                      name(HookId::getNewStream), " or wrapExternalQueue");
  return queue;
}

Stream wrapExternalQueue(cl_command_queue queue, DeviceIndex device) {
  ACCEL_ADAPTER_CHECK(
      queue != nullptr, InvalidArgument,
      "wrapExternalQueue: null is not a queue (the default stream is id 0)");
  DeviceRecord& record = deviceRecord(device);
  const Loader& l = loader();
  cl_context context = nullptr;
  cl_device_id queue_device = nullptr;
  cl_command_queue_properties properties = 0;
  checkCl(
      l.clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr),
      "clGetCommandQueueInfo (wrapExternalQueue)", device);
  checkCl(l.clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof queue_device,
                                  &queue_device, nullptr),
          "clGetCommandQueueInfo (wrapExternalQueue)", device);
  checkCl(l.clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof properties,
                                  &properties, nullptr),
          "clGetCommandQueueInfo (wrapExternalQueue)", device);
  ACCEL_ADAPTER_CHECK(queue_device == record.device && context == deviceContext(device),
                      InvalidArgument,
                      "wrapExternalQueue: the queue belongs to another device "
                      "or context than ",
                      deviceLabel(device), "; create it on nativeContext(",
                      static_cast<int>(device), ")");
  ACCEL_ADAPTER_CHECK(
      (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0, InvalidArgument,
      "wrapExternalQueue: the queue is out of order; a stream must run its "
      "work in order (create the queue without "
      "CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)");
  return QueueRegistry::instance().wrap(queue, device);
}

void synchronizeDevice(DeviceIndex device) {
  (void)deviceRecord(device);
  const Loader& l = loader();
  DeviceQueues* queues = QueueRegistry::instance().existing(device);
  if (queues != nullptr) {
    if (cl_command_queue q = queues->default_queue.load(std::memory_order_acquire)) {
      checkCl(l.clFinish(q), "clFinish", HookId::deviceSynchronize, device);
    }
    for (PriorityPool& pool : queues->levels) {
      if (pool.next.load(std::memory_order_acquire) == 0) continue;
      for (cl_command_queue q : pool.queues) {
        checkCl(l.clFinish(q), "clFinish", HookId::deviceSynchronize, device);
      }
    }
  }
  for (cl_command_queue q : QueueRegistry::instance().externalOf(device)) {
    checkCl(l.clFinish(q), "clFinish", HookId::deviceSynchronize, device);
  }
}

}  // namespace accel::opencl::detail
