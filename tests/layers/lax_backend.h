// LaxHooks: a misbehaving backend for the validation layer's tests. It
// checks nothing a hook is given (any stream, event or graph id, any
// pointer: getDeviceFromPtr says device 0 for everything), keeps its memory
// out of the core's caches (a range of its own), and counts the calls that reach
// it, so that a test can show a wrong call reaching it with the layer off
// and stopped before it with the layer on.
//
// Thread-safety: every hook is thread-safe. Lifetime: registered: forever.
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include <sys/mman.h>

#include "accel/allocator.h"
#include "accel/default_generators.h"
#include "accel/error.h"
#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "accel/philox_generator.h"

namespace accel::testing {

class LaxHooks final : public AcceleratorHooks {
 public:
  static constexpr int kDevices = 2;

  explicit LaxHooks(DeviceType type)
      : AcceleratorHooks(
            type, Capabilities{HookGroup::Low, HookGroup::High, HookGroup::Device,
                               HookGroup::Streams, HookGroup::Events, HookGroup::Graphs,
                               HookGroup::Copies, HookGroup::Fill}),
        generators_(type, kDevices, [] { return current_; }) {
    for (int i = 0; i < kDevices; ++i) {
      allocators_[i] = std::make_unique<ArenaAllocator>(Device(type, i));
    }
    pinned_ = std::make_unique<MallocAllocator>(Device(DeviceType::CPU, 0));
  }

  // Frees of device memory that reached this backend.
  [[nodiscard]] static int devicesFrees() noexcept { return frees_.load(); }

  // Calls that reached this backend (the hooks' *Impls), by hook.
  [[nodiscard]] int reached(HookId hook) const noexcept {
    return reached_[static_cast<std::size_t>(hook)].load();
  }

 protected:
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return true; }
  int deviceCountImpl() const override { return kDevices; }
  DeviceIndex getCurrentDeviceImpl() const override { return current_; }
  void setCurrentDeviceImpl(DeviceIndex index) override { current_ = index; }
  void initImpl() override {}
  bool hasPrimaryContextImpl(DeviceIndex) const override { return isInitialized(); }
  const Generator& getDefaultGeneratorImpl(DeviceIndex index) override {
    return generators_.get(index);
  }
  Generator getNewGeneratorImpl(DeviceIndex index) override {
    return makePhiloxGenerator(Device(deviceType(), index));
  }
  // Any address of a device's arena is that device's: the backend does not
  // know where its allocations end (nor whether they are still alive).
  Device getDeviceFromPtrImpl(const void* ptr) const override {
    count(HookId::getDeviceFromPtr);
    for (int i = 0; i < kDevices; ++i) {
      if (allocators_[i]->holds(ptr)) return Device(deviceType(), i);
    }
    throw InvalidArgument("laxdev: not device memory");
  }
  Allocator& getPinnedMemoryAllocatorImpl() override { return *pinned_; }
  bool isPinnedPtrImpl(const void*) const override { return false; }
  Allocator& getDeviceAllocatorImpl(DeviceIndex index) override {
    return *allocators_[index];
  }
  void deviceSynchronizeImpl(DeviceIndex) override { count(HookId::deviceSynchronize); }

  Stream getCurrentStreamImpl(DeviceIndex index) const override {
    return Stream{Device(deviceType(), index), 0};
  }
  Stream getDefaultStreamImpl(DeviceIndex index) const override {
    return Stream{Device(deviceType(), index), 0};
  }
  Stream getNewStreamImpl(DeviceIndex index, int) override {
    return Stream{Device(deviceType(), index), next_stream_.fetch_add(1)};
  }
  void setCurrentStreamImpl(Stream) override {}
  bool queryStreamImpl(Stream) const override {
    count(HookId::queryStream);
    return true;
  }
  void synchronizeStreamImpl(Stream) const override { count(HookId::synchronizeStream); }
  std::pair<int, int> streamPriorityRangeImpl() const override { return {0, 0}; }

  EventId createEventImpl(DeviceIndex, EventFlags) override {
    return next_id_.fetch_add(1);
  }
  void destroyEventImpl(EventId) noexcept override { count(HookId::destroyEvent); }
  void recordEventImpl(EventId, Stream) override { count(HookId::recordEvent); }
  void blockStreamImpl(EventId, Stream) override { count(HookId::blockStream); }
  bool queryEventImpl(EventId) const override {
    count(HookId::queryEvent);
    return true;
  }
  void synchronizeEventImpl(EventId) const override { count(HookId::synchronizeEvent); }
  double elapsedTimeImpl(EventId, EventId) const override {
    count(HookId::elapsedTime);
    return 0.0;
  }

  GraphId graphCreateImpl(bool) override { return next_id_.fetch_add(1); }
  void graphDestroyImpl(GraphId) override {}
  void graphCaptureBeginImpl(GraphId, MempoolId, CaptureMode) override {}
  void graphCaptureEndImpl(GraphId) override {}

  void copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                            Stream) override {
    count(HookId::copyHostToDevice);
    (void)dst, (void)src, (void)bytes;  // a lax device: no bytes move
  }
  void copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                            Stream) override {
    count(HookId::copyDeviceToHost);
    (void)dst, (void)src, (void)bytes;
  }
  void copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                              Stream) override {
    count(HookId::copyDeviceToDevice);
    (void)dst, (void)src, (void)bytes;
  }
  void fillRandomImpl(Stream, DeviceFill, void*, std::size_t, double, double,
                      const Generator&) override {
    count(HookId::fillRandom);
  }

 private:
  // Device memory: a bump allocator over an address range of its own, which
  // never hands an address out twice and frees nothing.
  class ArenaAllocator final : public Allocator {
   public:
    static constexpr std::size_t kArenaBytes = std::size_t{64} << 20;
    explicit ArenaAllocator(Device device) : device_(device) {
      void* base = mmap(nullptr, kArenaBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (base == MAP_FAILED) throw std::bad_alloc();
      base_ = static_cast<char*>(base);
    }
    DataPtr allocate(std::size_t bytes) override {
      if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, device_);
      const std::size_t rounded = (bytes + 255) / 256 * 256;
      const std::size_t offset = next_.fetch_add(rounded);
      if (offset + rounded > kArenaBytes) throw std::bad_alloc();
      return DataPtr(base_ + offset, nullptr, &freeNothing, device_);
    }
    Device device() const noexcept override { return device_; }
    [[nodiscard]] bool holds(const void* ptr) const noexcept {
      const char* p = static_cast<const char*>(ptr);
      return p >= base_ && p < base_ + kArenaBytes;
    }

   private:
    static void freeNothing(void*) noexcept { ++frees_; }
    Device device_;
    char* base_ = nullptr;
    std::atomic<std::size_t> next_{0};
  };
  class MallocAllocator final : public Allocator {
   public:
    explicit MallocAllocator(Device device) : device_(device) {}
    DataPtr allocate(std::size_t bytes) override {
      if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, device_);
      void* data = std::malloc(bytes);
      if (data == nullptr) throw std::bad_alloc();
      return DataPtr(data, data, &freeData, device_);
    }
    Device device() const noexcept override { return device_; }

   private:
    static void freeData(void* context) noexcept { std::free(context); }
    Device device_;
  };

  void count(HookId hook) const noexcept { ++reached_[static_cast<std::size_t>(hook)]; }

  static inline thread_local DeviceIndex current_ = 0;
  static inline std::atomic<int> frees_{0};
  DefaultGenerators generators_;
  std::unique_ptr<ArenaAllocator> allocators_[kDevices];
  std::unique_ptr<MallocAllocator> pinned_;
  std::atomic<StreamId> next_stream_{1};
  std::atomic<std::uint64_t> next_id_{1};
  mutable std::atomic<int> reached_[kNumHooks] = {};
};

// Registers (once) and returns the lax backend, device type "laxdev".
inline LaxHooks& laxBackend() {
  static LaxHooks& hooks = [&]() -> LaxHooks& {
    auto made = std::make_unique<LaxHooks>(registerDeviceType("laxdev"));
    LaxHooks& raw = *made;
    registerHooks(std::move(made), "the validation tests");
    return raw;
  }();
  return hooks;
}

}  // namespace accel::testing
