// Internal: the hooks object of a backend registered through the C plugin
// boundary (accel/plugin_abi.h). The core's AcceleratorHooks wrappers keep
// the contract (index and stream checks, init, discovery, fork, copies'
// guarantees); this object translates each *Impl into a call of the
// plugin's table and a failed status into the library's error. What the
// boundary does not carry is the core's: the caching device allocator and
// pinned cache over the plugin's raw memory (and with them the memory and
// memory_history groups, pointer queries and allocators), Philox generators
// per device, the graphs' private pools, and the current device and stream
// for a backend that does not keep them itself.
//
// Thread-safety: as every hooks object: any hook from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "accel/hooks.h"
#include "accel/philox.h"
#include "accel/plugin_abi.h"

namespace accel::detail {

// A live block of a C backend's device cache.
struct CDeviceBlock {
  std::int8_t device = 0;
  void* base = nullptr;
  std::size_t bytes = 0;
};

// The hooks of the backend `backend` describes, registered by the plugin
// behind `core`. Reads only what the tables' sizes and the negotiated
// version cover, and copies it. Throws InvalidArgument naming the table or
// function when the description is unusable: an unregistered or built-in
// type, no low or high table, a table whose size is 0 or absurd, a declared
// group without its table, a table without a function its group needs, a
// half-provided pair or set (current device get/set, page mapping, events).
std::unique_ptr<AcceleratorHooks> makeCPluginHooks(accel_core& core,
                                                   const accel_backend& backend);

// The live block of the C backend of `device_type`'s device cache that holds
// `ptr`. Throws InvalidArgument when the type has no C backend, it is not
// initialised, or no block holds ptr.
CDeviceBlock findCPluginBlock(std::int32_t device_type, const void* ptr);

// While `on`, each allocation of the device allocator of device `device` of
// the C backend of `device_type` asks the plugin's check_allocation first.
// Throws InvalidArgument when the type has no asynchronous C backend, the
// index is out of range, or the plugin has no check_allocation.
void divertCPluginAllocations(std::int32_t device_type, std::int8_t device, bool on);

// join_capture: `joined` allocates into the private pool of the capture that
// `capturing` is in, until it ends. Throws InvalidArgument when `capturing`
// is not being captured, the streams are of different devices or the same,
// or the type has no C backend; NotSupported for a synchronous backend.
void joinCPluginCapture(std::int32_t device_type, accel_stream capturing,
                        accel_stream joined);

// The calling thread's current device, and current stream of `device`, as
// the core keeps them for the C backend of `device_type`. Throws
// InvalidArgument when the type has no C backend, the plugin keeps them
// itself (the core has none to tell), or the index is out of range.
std::int8_t cPluginCurrentDevice(std::int32_t device_type);
std::int64_t cPluginCurrentStream(std::int32_t device_type, std::int8_t device);

// use_block: a use of the live block of the C backend of `device_type` that
// holds `ptr` (ACCEL_BLOCK_LIVE, *use set, to be released with
// releaseCPluginBlockUse), ACCEL_BLOCK_FREED or ACCEL_BLOCK_NONE. Throws
// InvalidArgument when the type has no C backend.
std::int32_t useCPluginBlock(std::int32_t device_type, const void* ptr,
                             accel_block_use*& use, std::int8_t& device, void*& base,
                             std::size_t& requested);
void releaseCPluginBlockUse(accel_block_use* use) noexcept;

}  // namespace accel::detail
