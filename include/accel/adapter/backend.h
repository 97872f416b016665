// What a plugin's C++ backend implements: its raw memory, and either a
// synchronous device (SynchronousBackend: the core's kit serves streams,
// events, graphs and copies) or an asynchronous one (Backend: each group's
// functions are the backend's). Part of the plugin adapter
// (accel/plugin_adapter.h): compiled into the plugin, C++17.
//
// A function of a group the backend declared and does not override throws
// NotSupported naming itself; the groups it did not declare the core
// answers (NotSupported naming the backend and the hook; probes benign).
//
// Thread-safety: the core calls a backend from any thread; its functions
// must be thread-safe. Errors: a function fails by throwing a Failure
// (accel/adapter/failure.h).
#ifndef ACCEL_ADAPTER_BACKEND_H
#define ACCEL_ADAPTER_BACKEND_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "accel/adapter/core.h"
#include "accel/adapter/failure.h"
#include "accel/plugin_abi.h"

#pragma GCC visibility push(hidden)

namespace accel::adapter {

// A device's description (getDeviceProperties).
struct Properties {
  std::string name;                      // at most 255 bytes are kept
  std::uint64_t total_memory_bytes = 0;  // 0 if unknown
  int multiprocessor_count = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int warp_size = 0;
  int max_threads_per_multiprocessor = 0;
  std::uint64_t l2_cache_bytes = 0;
  bool is_integrated = false;
  std::string uuid;  // at most 63 bytes are kept
};

// A device's capacity; total 0 when unknown.
struct MemoryInfo {
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
};

// Events the core's caching allocator records on an asynchronous backend's
// streams: a block freed while a stream may still use it is reused only
// once the event recorded there has completed. Ids are the backend's.
class StreamEvents {
 public:
  virtual ~StreamEvents() = default;
  [[nodiscard]] virtual std::uint64_t record(Stream stream) = 0;
  [[nodiscard]] virtual bool completed(std::uint64_t event) noexcept = 0;
  virtual void wait(Stream stream, std::uint64_t event) = 0;
  virtual void release(std::uint64_t event) noexcept = 0;
  virtual void synchronize(std::uint64_t event) = 0;
};

// Address ranges and the pages mapped into them, for expandable segments.
class PageMapping {
 public:
  virtual ~PageMapping() = default;
  [[nodiscard]] virtual std::size_t pageSize() const noexcept = 0;
  [[nodiscard]] virtual void* reserve(std::int8_t device, std::size_t bytes) = 0;
  virtual void release(std::int8_t device, void* base, std::size_t bytes) noexcept = 0;
  // False when the device is out of memory.
  [[nodiscard]] virtual bool map(std::int8_t device, void* address,
                                 std::size_t bytes) = 0;
  virtual void unmap(std::int8_t device, void* address, std::size_t bytes) noexcept = 0;
};

// Raw memory in whole segments, what the core's caches draw from. The core
// calls allocate and free holding the device's allocator lock, never
// re-entrantly.
class Memory {
 public:
  virtual ~Memory() = default;
  // A segment of exactly `bytes` on `device`, or nullptr when the device is
  // full (the cache then frees what it holds and retries). Throws for any
  // other failure.
  virtual void* allocate(std::int8_t device, std::size_t bytes) = 0;
  virtual void free(std::int8_t device, void* data, std::size_t bytes) noexcept = 0;
  // Capacity and free bytes (getMemoryInfo, memory fractions, out-of-memory
  // messages). Default: unknown.
  [[nodiscard]] virtual MemoryInfo info(std::int8_t /*device*/) const noexcept {
    return {};
  }
  // An asynchronous backend's stream events (nullptr: none, as for a
  // synchronous device).
  [[nodiscard]] virtual StreamEvents* streamEvents() noexcept { return nullptr; }
  // Page mapping for expandable segments (nullptr: none).
  [[nodiscard]] virtual PageMapping* pages() noexcept { return nullptr; }
  // What to do when the device's capacity refuses an allocation (static
  // text the core adds to that out-of-memory message); null for nothing.
  [[nodiscard]] virtual const char* outOfMemoryAdvice() const noexcept { return nullptr; }
  // Asked before each allocation on a device whose allocations the backend
  // diverted (Core::divertAllocations): throws to refuse it (a lost
  // device, an injected fault). Default: allows.
  virtual void checkAllocation(std::int8_t /*device*/, std::size_t /*bytes*/) {}
  // Memory of this kind that the backend's runtime knows but the core's
  // caches did not hand out (a framework's own device allocation; host
  // memory it page-locked or registered itself): for device memory, the
  // device holding `ptr`; for pinned memory, any value (only whether it
  // answers counts). std::nullopt when `ptr` is not such memory. Asked by
  // getDeviceFromPtr and isPinnedPtr after the core's caches, from any
  // thread and also before init(): it must not block on the device nor
  // create a device context. A throw counts as std::nullopt. Default:
  // the runtime knows nothing beyond the caches. Plugin API 1.4; a core
  // older than that never asks.
  [[nodiscard]] virtual std::optional<std::int8_t> deviceOf(const void* /*ptr*/) const {
    return std::nullopt;
  }
};

// Shared by both kinds of backend: the probes, init, the description and
// memory, and the core the backend was registered with.
class BackendBase {
 public:
  virtual ~BackendBase() = default;
  [[nodiscard]] virtual bool isBuilt() const { return true; }
  [[nodiscard]] virtual bool isAvailable() const { return true; }
  // Why isAvailable() is false, in one line ("no NVIDIA driver:
  // libcuda.so.1 not found"): the core puts it in the NotAvailable error of
  // every hook that needs a device. Empty when available or unknown. A
  // probe: a throw says nothing.
  [[nodiscard]] virtual std::string unavailableReason() const { return {}; }
  // Runs once before any hook that needs the device; a throw is retried by
  // the next such hook.
  virtual void init() {}
  [[nodiscard]] virtual Memory& deviceMemory() = 0;
  // Page-locked host memory (getPinnedMemoryAllocator); a device without
  // page-locked memory of its own hands ordinary host memory.
  [[nodiscard]] virtual Memory& pinnedMemory() = 0;
  // The device group (declare ACCEL_GROUP_DEVICE to have them asked).
  [[nodiscard]] virtual std::string showConfig() const { return {}; }
  [[nodiscard]] virtual Properties properties(std::int8_t /*device*/) const { return {}; }

  // The core this backend is registered with (set by the Registrar before
  // the core sees the backend; unlinked before).
  [[nodiscard]] const Core& core() const noexcept { return core_; }
  void attach(const Core& core) noexcept { core_ = core; }

 protected:
  // Thrown by a declared group's function that the backend did not write.
  [[noreturn]] static void notWritten(const char* function) {
    throw NotImplemented(concat("the backend declared the group of ", function,
                                " but does not implement it"));
  }

 private:
  Core core_;
};

// A synchronous device (its work is done when the call that enqueues it
// returns, and the host can address its memory).
class SynchronousBackend : public BackendBase {
 public:
  // The number of devices, asked once, at registration (a synchronous
  // device's count is its configuration). Throws for a bad configuration:
  // the registration then fails with the message.
  [[nodiscard]] virtual int deviceCount() const = 0;
};

// An asynchronous device: the backend's own streams, events, graphs and
// copies (each group's functions asked only when the group is declared).
// The core keeps the current device and current streams unless
// keepsCurrent() says the backend does.
class Backend : public BackendBase {
 public:
  // A probe: never throws (a throw answers 0).
  [[nodiscard]] virtual int deviceCount() const = 0;
  // Whether the backend answers hasPrimaryContext itself (asked once, at
  // registration). Default: no, the core answers from its own use of each
  // device.
  [[nodiscard]] virtual bool answersPrimaryContext() const { return false; }
  // Whether `device` has been initialised (a probe: a throw answers false).
  [[nodiscard]] virtual bool hasPrimaryContext(std::int8_t /*device*/) const {
    return false;
  }

  // ---- the current device and streams, when the backend keeps them ----
  [[nodiscard]] virtual bool keepsCurrent() const { return false; }
  [[nodiscard]] virtual std::int8_t currentDevice() const { notWritten("currentDevice"); }
  virtual void setCurrentDevice(std::int8_t /*device*/) {
    notWritten("setCurrentDevice");
  }
  [[nodiscard]] virtual std::int64_t currentStream(std::int8_t /*device*/) const {
    notWritten("currentStream");
  }
  virtual void setCurrentStream(Stream /*stream*/) { notWritten("setCurrentStream"); }

  // ---- device ----
  virtual void synchronizeDevice(std::int8_t /*device*/) {
    notWritten("synchronizeDevice");
  }

  // ---- streams (ids are the backend's; the device is checked) ----
  [[nodiscard]] virtual std::int64_t defaultStream(std::int8_t /*device*/) { return 0; }
  [[nodiscard]] virtual std::int64_t createStream(std::int8_t /*device*/,
                                                  int /*priority*/) {
    notWritten("createStream");
  }
  [[nodiscard]] virtual bool queryStream(Stream /*stream*/) { notWritten("queryStream"); }
  virtual void synchronizeStream(Stream /*stream*/) { notWritten("synchronizeStream"); }
  // {lowest, greatest}; greater runs first; 0 is the default.
  [[nodiscard]] virtual std::pair<int, int> priorityRange(std::int8_t /*device*/) {
    return {0, 0};
  }

  // ---- events (flags: ACCEL_EVENT_*) ----
  [[nodiscard]] virtual std::uint64_t createEvent(std::int8_t /*device*/,
                                                  std::uint32_t /*flags*/) {
    notWritten("createEvent");
  }
  virtual void destroyEvent(std::uint64_t /*event*/) noexcept {}
  virtual void recordEvent(std::uint64_t /*event*/, Stream /*stream*/) {
    notWritten("recordEvent");
  }
  virtual void blockStream(std::uint64_t /*event*/, Stream /*stream*/) {
    notWritten("blockStream");
  }
  [[nodiscard]] virtual bool queryEvent(std::uint64_t /*event*/) {
    notWritten("queryEvent");
  }
  virtual void synchronizeEvent(std::uint64_t /*event*/) {
    notWritten("synchronizeEvent");
  }
  [[nodiscard]] virtual double elapsedMs(std::uint64_t /*start*/, std::uint64_t /*end*/) {
    notWritten("elapsedMs");
  }

  // ---- graphs (the core keeps their private pools and capture rules) ----
  [[nodiscard]] virtual std::uint64_t createGraph(bool /*keep_graph*/) {
    notWritten("createGraph");
  }
  virtual void destroyGraph(std::uint64_t /*graph*/) { notWritten("destroyGraph"); }
  // mode: ACCEL_CAPTURE_*.
  virtual void captureBegin(std::uint64_t /*graph*/, Stream /*stream*/, int /*mode*/) {
    notWritten("captureBegin");
  }
  virtual void captureEnd(std::uint64_t /*graph*/) { notWritten("captureEnd"); }
  virtual void instantiateGraph(std::uint64_t /*graph*/) {
    notWritten("instantiateGraph");
  }
  // Before each replay: captured random draws take their next positions
  // here (Core::reservePhilox). Default: nothing to prepare.
  virtual void prepareReplay(std::uint64_t /*graph*/) {}
  virtual void replayGraph(std::uint64_t /*graph*/) { notWritten("replayGraph"); }
  virtual void resetGraph(std::uint64_t /*graph*/) { notWritten("resetGraph"); }

  // ---- copies (ranges already checked against the core's caches) ----
  virtual void copyHostToDevice(void* /*dst*/, const void* /*src*/, std::size_t /*bytes*/,
                                Stream /*stream*/) {
    notWritten("copyHostToDevice");
  }
  virtual void copyDeviceToHost(void* /*dst*/, const void* /*src*/, std::size_t /*bytes*/,
                                Stream /*stream*/) {
    notWritten("copyDeviceToHost");
  }
  virtual void copyDeviceToDevice(void* /*dst*/, const void* /*src*/,
                                  std::size_t /*bytes*/, Stream /*stream*/) {
    notWritten("copyDeviceToDevice");
  }

  // ---- fill (declare ACCEL_GROUP_FILL; plugin API 1.3) ----
  // Enqueues on `stream` a fill of `count` elements of `kind` (ACCEL_FILL_*)
  // at `data`, drawn from `generator` (accel_fill_fns in accel/plugin_abi.h
  // has the contract; the core has checked the arguments): outside a
  // capture, reserve the draw before returning (core().reservePhilox); on a
  // capturing stream, record the fill so that each replay draws anew
  // (adapter::CapturedDraws).
  virtual void fill(Stream /*stream*/, std::int32_t /*kind*/, void* /*data*/,
                    std::uint64_t /*count*/, double /*a*/, double /*b*/,
                    accel_generator* /*generator*/) {
    notWritten("fill");
  }
};

}  // namespace accel::adapter

#pragma GCC visibility pop

#endif  // ACCEL_ADAPTER_BACKEND_H
