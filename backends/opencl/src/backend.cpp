// registerBackend and the opencl-specific public API (accel/opencl/opencl.h).
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/opencl/opencl.h"
#include "devices.h"
#include "loader.h"
#include "opencl_error.h"
#include "opencl_hooks.h"
#include "opencl_memory.h"
#include "programs.h"
#include "queue_tails.h"
#include "streams.h"

namespace accel::opencl {

DeviceType deviceType() {
  static const DeviceType type = registerDeviceType(kDeviceTypeName);
  return type;
}

AcceleratorHooks& registerBackend() {
  static std::atomic<AcceleratorHooks*> registered{nullptr};
  if (AcceleratorHooks* hooks = registered.load(std::memory_order_acquire)) [[likely]] {
    return *hooks;
  }
  static std::mutex* const mutex = new std::mutex();  // never destroyed
  std::lock_guard lock(*mutex);
  if (AcceleratorHooks* hooks = registered.load(std::memory_order_relaxed)) return *hooks;
  const DeviceType type = deviceType();
  // In a fork child of a process that started the backend, the slot holds
  // the core's stand-in (docs/lifecycle.md, "fork()"): it is the backend
  // here, refusing every use with the fork's DeviceError. Registering again
  // would be a duplicate registration; not kept, it is the child's only.
  if (isPoisonedByFork(type)) return getHooks(type);
  // Registered by the plugin entry (through the loader's registrar): adopt them.
  if (auto* existing = dynamic_cast<detail::OpenClHooks*>(&getHooks(type))) {
    registered.store(existing, std::memory_order_release);
    return *existing;
  }
  AcceleratorHooks& hooks =
      registerHooks(std::make_unique<detail::OpenClHooks>(type),
                    "libaccel_opencl.so (accel::opencl::registerBackend)");
  registered.store(&hooks, std::memory_order_release);
  return hooks;
}

Availability availability() {
  const detail::Devices& d = detail::devices();
  return {d.count(), d.reason, d.skipped};
}

DeviceInfo deviceInfo(DeviceIndex index) { return detail::deviceRecord(index).info; }

_cl_platform_id* nativePlatform(DeviceIndex index) {
  return detail::deviceRecord(index).platform;
}
_cl_device_id* nativeDevice(DeviceIndex index) {
  return detail::deviceRecord(index).device;
}
_cl_context* nativeContext(DeviceIndex index) { return detail::deviceContext(index); }

_cl_command_queue* nativeQueue(Stream stream) {
  _cl_command_queue* queue = detail::nativeQueue(stream);
  // Work may now be enqueued on it behind the backend's back: queries of
  // the stream ask the queue (queue_tails.h).
  detail::queueTail(queue).markExternal();
  return queue;
}

SvmAllocation svmAllocation(const void* ptr) {
  detail::requireAvailable();
  const kit::AddressMap& addresses = detail::addresses();
  const std::optional<kit::AddressRange> range = addresses.find(ptr);
  if (!range || range->kind != kit::MemoryKind::Device) {
    // Pinned, freed or foreign: the map's diagnosis says which.
    (void)addresses.deviceOf(ptr);
    throw InvalidArgument("svmAllocation: the pointer is not device memory of 'opencl'");
  }
  const DeviceIndex index = range->device.index();
  // A freed block of a cached segment is still in the map; refuse it too.
  ACCEL_CHECK(detail::deviceCachingAllocator().findBlock(index, ptr).has_value(),
              InvalidArgument, "svmAllocation: ", ptr,
              " is in a cached (freed) block of ", detail::deviceLabel(index),
              ", not in a live allocation; allocate before wrapping");
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  return {reinterpret_cast<void*>(range->begin), range->size, address - range->begin,
          index};
}

Stream wrapExternalQueue(_cl_command_queue* queue, DeviceIndex index) {
  const Stream stream = detail::wrapExternalQueue(queue, index);
  detail::queueTail(queue).markExternal();  // its owner enqueues on it too
  return stream;
}

_cl_program* buildProgram(DeviceIndex index, std::string_view source,
                          std::string_view options) {
  return detail::programFor(index, source, options);
}

void copyBlocking(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  ACCEL_CHECK(dst != nullptr && src != nullptr, InvalidArgument,
              "copyBlocking: null pointer for a copy of ", bytes, " bytes");
  detail::requireAvailable();
  memory::CachingAllocator& allocator = detail::deviceCachingAllocator();
  std::optional<DeviceIndex> device = allocator.deviceOf(dst);
  if (!device) device = allocator.deviceOf(src);
  const DeviceIndex index = device.value_or(0);
  const cl_command_queue queue =
      detail::nativeQueue(Stream(Device(deviceType(), index), 0));
  detail::checkCl(detail::loader().clEnqueueSVMMemcpy(queue, CL_TRUE, dst, src, bytes, 0,
                                                      nullptr, nullptr),
                  "clEnqueueSVMMemcpy (copyBlocking)", index);
}

}  // namespace accel::opencl
