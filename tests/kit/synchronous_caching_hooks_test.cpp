// SynchronousCachingHooks: device allocators over the caching allocator, and
// graph capture for a synchronous device (phases, private pools, errors,
// launch() and copies recorded and replayed, what a capture forbids); and the
// whole conformance suite on the smallest backend built on it.
#include "accel/kit/synchronous_caching_hooks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>

#include "accel/conformance.h"
#include "accel/device_guard.h"
#include "accel/hooks_table.h"
#include "accel/memory/pinned_caching_allocator.h"
#include "accel/registrar.h"
#include "accel/stream_guard.h"

namespace accel::kit {
namespace {

constexpr std::size_t kCapacity = std::size_t{256} << 20;  // per source, all devices

// Host memory up to kCapacity, each segment recorded in the kit's address map.
class HostMemory final : public memory::SegmentSource {
 public:
  HostMemory(AddressMap& addresses, Device (*where)(DeviceType, DeviceIndex),
             DeviceType type)
      : addresses_(addresses), where_(where), type_(type) {}
  void* allocateSegment(DeviceIndex index, std::size_t bytes) override {
    if (used_ + bytes > kCapacity) return nullptr;  // "the device is full"
    void* data = std::aligned_alloc(512, (bytes + 511) / 512 * 512);
    if (data == nullptr) return nullptr;
    addresses_.insert(data, bytes, where_(type_, index), kind(index));
    used_ += bytes;
    return data;
  }
  void freeSegment(DeviceIndex, void* data, std::size_t bytes) noexcept override {
    addresses_.erase(data);
    std::free(data);
    used_ -= bytes;
  }

 private:
  MemoryKind kind(DeviceIndex) const {
    return where_(type_, 0).type() == DeviceType::CPU ? MemoryKind::Pinned
                                                      : MemoryKind::Device;
  }
  AddressMap& addresses_;
  Device (*where_)(DeviceType, DeviceIndex);
  DeviceType type_;
  std::atomic<std::size_t> used_{0};
};

Device onDevice(DeviceType type, DeviceIndex index) { return Device(type, index); }
Device onHost(DeviceType, DeviceIndex) { return Device(DeviceType::CPU); }

// Everything a backend on the kit writes: its memory and nothing else.
class CachingKitHooks final : public SynchronousCachingHooks {
 public:
  CachingKitHooks(DeviceType type, int devices)
      : SynchronousCachingHooks(
            type,
            Capabilities{HookGroup::Device, HookGroup::Memory, HookGroup::MemoryHistory,
                         HookGroup::Graphs, HookGroup::Copies},
            devices),
        device_memory_(addresses(), onDevice, type),
        pinned_memory_(addresses(), onHost, type),
        cache_(type, devices, device_memory_),
        pinned_(pinned_memory_) {}

 protected:
  memory::CachingAllocator& cachingAllocator() const override { return cache_; }
  // Named, so that hostMemoryStats reports on it and the copies group checks
  // pinned ranges against its blocks.
  memory::PinnedCachingAllocator* pinnedCachingAllocator() const override {
    return &pinned_;
  }
  Allocator& getPinnedMemoryAllocatorImpl() override { return pinned_; }
  std::string showConfigImpl() const override { return "caching kit test backend\n"; }
  DeviceProperties getDevicePropertiesImpl(DeviceIndex) const override {
    DeviceProperties properties;
    properties.name = "caching kit test device";
    properties.total_memory_bytes = kCapacity;
    return properties;
  }

 private:
  HostMemory device_memory_;
  HostMemory pinned_memory_;
  mutable memory::CachingAllocator cache_;
  mutable memory::PinnedCachingAllocator pinned_;
};

// Registered once for the conformance suite below; the unit tests use it too.
CachingKitHooks& kitBackend() {
  static CachingKitHooks& hooks = [&]() -> CachingKitHooks& {
    Registrar registrar("synchronous_caching_hooks_test");
    DeviceType type = registrar.registerDeviceType("cachingkit");
    auto owned = std::make_unique<CachingKitHooks>(type, 2);
    CachingKitHooks& ref = *owned;
    registrar.registerHooks(std::move(owned));
    (void)registrar.commitTo(processHooksTable());
    return ref;
  }();
  return hooks;
}
const bool kRegistered = (kitBackend(), true);

TEST(SynchronousCachingHooks, DeviceAllocatorDrawsFromTheCacheOnTheCurrentStream) {
  CachingKitHooks& hooks = kitBackend();
  DataPtr block = hooks.getDeviceAllocator(1).allocate(4096);
  ASSERT_NE(block.get(), nullptr);
  EXPECT_EQ(block.device(), Device(hooks.deviceType(), 1));
  EXPECT_EQ(hooks.getDeviceFromPtr(block.get()), Device(hooks.deviceType(), 1));
  EXPECT_TRUE(hooks.hasPrimaryContext(1));
  EXPECT_GE(hooks.memoryStats(1).allocated_bytes.current, 4096);
}

TEST(SynchronousCachingHooks, DeviceAllocatorIsTheKitsAndItsFirstUseMarksTheDevice) {
  // A backend of its own, so that no other test has used its devices.
  Registrar registrar("DeviceAllocatorIsTheKitsAndItsFirstUseMarksTheDevice");
  CachingKitHooks hooks(registrar.registerDeviceType("cachingkitfresh"), 2);
  auto* allocator = dynamic_cast<CachingDeviceAllocator*>(&hooks.getDeviceAllocator(1));
  ASSERT_NE(allocator, nullptr) << "the kit's device allocator is CachingDeviceAllocator";
  EXPECT_EQ(allocator, &hooks.getDeviceAllocator(1)) << "one allocator per device";
  EXPECT_FALSE(hooks.hasPrimaryContext(1));
  EXPECT_TRUE(allocator->diverted()) << "the first allocation must mark the device";
  {
    DataPtr first = allocator->allocate(256);
    EXPECT_EQ(first.device(), Device(hooks.deviceType(), 1));
  }
  EXPECT_TRUE(hooks.hasPrimaryContext(1));
  EXPECT_FALSE(hooks.hasPrimaryContext(0));
  EXPECT_FALSE(allocator->diverted()) << "later allocations take the fast path";
  DataPtr second = allocator->allocate(256);
  EXPECT_EQ(hooks.getDeviceFromPtr(second.get()), Device(hooks.deviceType(), 1));
}

TEST(SynchronousCachingHooks, LaunchedWorkIsRecordedDuringCaptureAndRunByReplay) {
  CachingKitHooks& hooks = kitBackend();
  Stream stream = hooks.getNewStream(0);
  StreamGuard guard(stream);
  int runs = 0;
  hooks.launch(stream, [&] { ++runs; });
  EXPECT_EQ(runs, 1) << "outside a capture, work runs at once";
  GraphId graph = hooks.graphCreate();
  hooks.graphCaptureBegin(graph);
  hooks.launch(stream, [&] { runs += 10; });
  hooks.launch(hooks.getNewStream(0), [&] { runs += 100; });  // another stream: runs
  EXPECT_EQ(runs, 101) << "captured work must not run during the capture";
  hooks.graphCaptureEnd(graph);
  hooks.graphReplay(graph);
  hooks.graphReplay(graph);
  EXPECT_EQ(runs, 121);
  hooks.graphReset(graph);
  hooks.graphDestroy(graph);
}

TEST(SynchronousCachingHooks, CaptureAllocatesFromAPrivatePoolReleasedByReset) {
  CachingKitHooks& hooks = kitBackend();
  Stream stream = hooks.getNewStream(0);
  StreamGuard guard(stream);
  hooks.emptyCache();
  const auto before = hooks.memoryStats(0).num_device_alloc;
  GraphId graph = hooks.graphCreate();
  hooks.graphCaptureBegin(graph);
  { DataPtr inside = hooks.getDeviceAllocator(0).allocate(1 << 20); }
  hooks.graphCaptureEnd(graph);
  EXPECT_FALSE(hooks.graphPool(graph).isDefault());
  // The block freed inside the capture stays in the graph's pool: the same
  // request outside the capture needs a segment of its own.
  { DataPtr outside = hooks.getDeviceAllocator(0).allocate(1 << 20); }
  EXPECT_EQ(hooks.memoryStats(0).num_device_alloc, before + 2);
  hooks.graphReset(graph);
  EXPECT_TRUE(hooks.graphPool(graph).isDefault());
  hooks.graphDestroy(graph);
}

TEST(SynchronousCachingHooks, MisuseIsRefusedNamingThePhase) {
  CachingKitHooks& hooks = kitBackend();
  StreamGuard guard(hooks.getNewStream(0));
  GraphId kept = hooks.graphCreate(/*keep_graph=*/true);
  EXPECT_THROW(hooks.graphReplay(kept), DeviceError);  // empty
  EXPECT_THROW(hooks.graphCaptureEnd(kept), DeviceError);
  hooks.graphCaptureBegin(kept);
  GraphId second = hooks.graphCreate();
  try {
    hooks.graphCaptureBegin(second);  // the same stream
    ADD_FAILURE() << "two captures of one stream";
  } catch (const DeviceError& e) {
    EXPECT_NE(e.message().find("already being captured by graph"), std::string::npos)
        << e.message();
  }
  hooks.graphCaptureEnd(kept);
  try {
    hooks.graphReplay(kept);
    ADD_FAILURE() << "a kept graph replayed before it was instantiated";
  } catch (const DeviceError& e) {
    EXPECT_NE(e.message().find("is captured, not instantiated"), std::string::npos)
        << e.message();
  }
  hooks.graphInstantiate(kept);
  EXPECT_NO_THROW(hooks.graphReplay(kept));
  hooks.graphDestroy(kept);
  EXPECT_THROW(hooks.graphReplay(kept), InvalidArgument);
  hooks.graphDestroy(second);
}

TEST(SynchronousCachingHooks, CopiesOnACapturingStreamAreRecordedAndMadeByReplay) {
  CachingKitHooks& hooks = kitBackend();
  Stream stream = hooks.getNewStream(0);
  StreamGuard guard(stream);
  DataPtr device = hooks.getDeviceAllocator(0).allocate(sizeof(int));
  int source = 1;
  int back = 0;
  hooks.copyHostToDevice(device.get(), &source, sizeof(int), stream);
  GraphId graph = hooks.graphCreate();
  hooks.graphCaptureBegin(graph);
  source = 2;
  hooks.copyHostToDevice(device.get(), &source, sizeof(int), stream);
  hooks.copyDeviceToHost(&back, device.get(), sizeof(int), stream);
  EXPECT_EQ(back, 0)
      << "a copy on a capturing stream must not be made during the capture";
  // Checked at once, not at replay: a host side that is device memory.
  DataPtr elsewhere = hooks.getDeviceAllocator(0).allocate(sizeof(int));
  EXPECT_THROW(hooks.copyHostToDevice(device.get(), elsewhere.get(), sizeof(int), stream),
               InvalidArgument);
  // Another stream is not captured: its copy is made now.
  int other = 0;
  hooks.copyDeviceToHost(&other, device.get(), sizeof(int), hooks.getNewStream(0));
  EXPECT_EQ(other, 1);
  hooks.graphCaptureEnd(graph);
  hooks.graphReplay(graph);
  EXPECT_EQ(back, 2);
  source = 3;  // the graph holds the addresses, as a GPU graph does
  hooks.graphReplay(graph);
  EXPECT_EQ(back, 3);
  hooks.graphDestroy(graph);
}

TEST(SynchronousCachingHooks, WaitingForACapturingStreamInvalidatesTheCapture) {
  CachingKitHooks& hooks = kitBackend();
  Stream stream = hooks.getNewStream(0);
  StreamGuard guard(stream);
  for (HookId hook : {HookId::synchronizeStream, HookId::queryStream}) {
    GraphId graph = hooks.graphCreate();
    hooks.graphCaptureBegin(graph);
    int runs = 0;
    hooks.launch(stream, [&] { ++runs; });
    try {
      if (hook == HookId::queryStream) {
        (void)hooks.queryStream(stream);
      } else {
        hooks.synchronizeStream(stream);
      }
      ADD_FAILURE() << hookInfo(hook).name << " of a capturing stream did not throw";
    } catch (const DeviceError& e) {
      EXPECT_NE(e.message().find("is being captured by graph"), std::string::npos)
          << e.message();
    }
    // Other streams are not affected.
    EXPECT_TRUE(hooks.queryStream(hooks.getDefaultStream(0)));
    try {
      hooks.graphCaptureEnd(graph);
      ADD_FAILURE() << "an invalidated capture ended as if valid";
    } catch (const DeviceError& e) {
      EXPECT_NE(e.message().find("was invalidated and is discarded"), std::string::npos)
          << e.message();
      EXPECT_NE(e.message().find(hookInfo(hook).name), std::string::npos) << e.message();
    }
    // The graph is empty again, its pool given back; it can be captured anew.
    EXPECT_TRUE(hooks.graphPool(graph).isDefault());
    EXPECT_THROW(hooks.graphReplay(graph), DeviceError);
    hooks.graphCaptureBegin(graph);
    EXPECT_TRUE(hooks.queryStream(hooks.getDefaultStream(0)));
    hooks.graphCaptureEnd(graph);
    hooks.graphReplay(graph);
    EXPECT_EQ(runs, 0) << "the discarded capture's work must not be replayed";
    hooks.graphDestroy(graph);
  }
}

TEST(SynchronousCachingHooks, DeviceSynchronizeDuringACaptureFollowsItsMode) {
  CachingKitHooks& hooks = kitBackend();
  Stream stream = hooks.getNewStream(1);
  StreamGuard guard(stream);
  DeviceGuard device(Device(hooks.deviceType(), 1));
  {
    GraphId relaxed = hooks.graphCreate();
    hooks.graphCaptureBegin(relaxed, MempoolId{}, CaptureMode::Relaxed);
    EXPECT_NO_THROW(hooks.deviceSynchronize(1));
    EXPECT_NO_THROW(hooks.deviceSynchronize(0)) << "another device";
    EXPECT_NO_THROW(hooks.graphCaptureEnd(relaxed));
    hooks.graphDestroy(relaxed);
  }
  {
    GraphId local = hooks.graphCreate();
    hooks.graphCaptureBegin(local, MempoolId{}, CaptureMode::ThreadLocal);
    std::thread other([&] { EXPECT_NO_THROW(hooks.deviceSynchronize(1)); });
    other.join();
    EXPECT_THROW(hooks.deviceSynchronize(1), DeviceError);
    EXPECT_THROW(hooks.graphCaptureEnd(local), DeviceError);
    hooks.graphDestroy(local);
  }
  {
    GraphId global = hooks.graphCreate();
    hooks.graphCaptureBegin(global, MempoolId{}, CaptureMode::Global);
    std::thread other([&] { EXPECT_THROW(hooks.deviceSynchronize(1), DeviceError); });
    other.join();
    EXPECT_THROW(hooks.graphCaptureEnd(global), DeviceError);
    hooks.graphDestroy(global);
  }
}

// Captures begin and end on one thread while another launches, copies and
// synchronises on its own stream: nothing of the other thread is captured,
// nothing of the capturing one runs before replay (run under TSan).
TEST(SynchronousCachingHooks, OtherThreadsStreamsRunWhileOneCaptures) {
  CachingKitHooks& hooks = kitBackend();
  constexpr int kRounds = 200;
  std::atomic<bool> done{false};
  std::atomic<int> other_runs{0};
  std::thread other([&] {
    Stream mine = hooks.getNewStream(0);
    DataPtr device = hooks.getDeviceAllocator(0).allocate(sizeof(int));
    int value = 7;
    int back = 0;
    while (!done.load()) {
      hooks.launch(mine, [&] { other_runs.fetch_add(1); });
      hooks.copyHostToDevice(device.get(), &value, sizeof(int), mine);
      hooks.copyDeviceToHost(&back, device.get(), sizeof(int), mine);
      hooks.synchronizeStream(mine);
      ASSERT_EQ(back, 7);
    }
  });
  Stream stream = hooks.getNewStream(0);
  StreamGuard guard(stream);
  int captured_runs = 0;
  // Until both threads went round often enough to overlap.
  for (int round = 0; round < kRounds || other_runs.load() < kRounds; ++round) {
    GraphId graph = hooks.graphCreate();
    hooks.graphCaptureBegin(graph, MempoolId{}, CaptureMode::ThreadLocal);
    hooks.launch(stream, [&] { ++captured_runs; });
    EXPECT_EQ(captured_runs, round);
    hooks.graphCaptureEnd(graph);
    hooks.graphReplay(graph);
    EXPECT_EQ(captured_runs, round + 1);
    hooks.graphDestroy(graph);
  }
  done.store(true);
  other.join();
}

TEST(SynchronousCachingHooks, EventsOnACapturingStreamAreNotSupported) {
  CachingKitHooks& hooks = kitBackend();
  Stream stream = hooks.getNewStream(0);
  StreamGuard guard(stream);
  EventId event = hooks.createEvent(0);
  GraphId graph = hooks.graphCreate();
  hooks.graphCaptureBegin(graph);
  try {
    hooks.recordEvent(event, stream);
    ADD_FAILURE() << "an event was recorded on a capturing stream";
  } catch (const NotSupported& e) {
    EXPECT_NE(e.message().find(hooks.name()), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(hookInfo(HookId::recordEvent).name), std::string::npos)
        << e.message();
  }
  EXPECT_THROW(hooks.blockStream(event, stream), NotSupported);
  EXPECT_NO_THROW(hooks.recordEvent(event, hooks.getDefaultStream(0)));
  EXPECT_NO_THROW(hooks.graphCaptureEnd(graph))
      << "refusing an event does not invalidate";
  EXPECT_NO_THROW(hooks.recordEvent(event, stream));
  hooks.graphDestroy(graph);
  hooks.destroyEvent(event);
}

}  // namespace
}  // namespace accel::kit

ACCEL_INSTANTIATE_CONFORMANCE(CachingKit, "cachingkit");
