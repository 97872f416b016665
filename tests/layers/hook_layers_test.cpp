// The hook layers' mechanism (src/core/layers/hook_layer.h): a decorator goes
// in front of every backend while a layer is added, and leaves the path when
// the last one is removed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/record_stream.h"
#include "layers/hook_layer.h"
#include "support/test_backend.h"

namespace accel {
namespace {

class RecordingLayer final : public detail::HookLayer {
 public:
  void before(const detail::HookCall& call) override {
    std::lock_guard<std::mutex> lock(mutex);
    befores.push_back(call.hook);
    if (refuse == call.hook) throw InvalidArgument("refused by the layer");
  }
  void after(const detail::HookCall& call, bool failed) noexcept override {
    std::lock_guard<std::mutex> lock(mutex);
    afters.push_back(call.hook);
    if (failed) ++failures;
    last_result = call.result;
    last_begin_ns = call.begin_ticks;
  }
  [[nodiscard]] bool wantsTimes() const noexcept override { return wants_times; }
  void allocated(DeviceType, Device, const void* ptr, std::size_t bytes,
                 bool pinned) noexcept override {
    std::lock_guard<std::mutex> lock(mutex);
    allocations.push_back({ptr, bytes, pinned});
  }
  void freed(DeviceType, Device, const void* ptr, std::size_t bytes,
             bool pinned) noexcept override {
    std::lock_guard<std::mutex> lock(mutex);
    frees.push_back({ptr, bytes, pinned});
  }
  struct Memory {
    const void* ptr;
    std::size_t bytes;
    bool pinned;
    friend bool operator==(const Memory&, const Memory&) = default;
  };
  std::mutex mutex;
  std::vector<HookId> befores, afters;
  std::vector<Memory> allocations, frees;
  int failures = 0;
  std::uint64_t last_result = 0;
  std::int64_t last_begin_ns = -1;
  bool wants_times = true;
  std::optional<HookId> refuse;
};

// One backend for the program: a type has one backend for the process.
testing::TestHooks& backend() {
  static testing::TestHooks& hooks = testing::registerTestBackend("layertestdev", 2);
  return hooks;
}

// Adds `layer` for the scope of the test.
struct Added {
  explicit Added(detail::HookLayer& layer) : layer(layer) { detail::addHookLayer(layer); }
  ~Added() { detail::removeHookLayer(layer); }
  detail::HookLayer& layer;
};

TEST(HookLayers, NoLayerLeavesTheBackendInTheTable) {
  AcceleratorHooks& own = backend();
  EXPECT_EQ(&getHooks(own.deviceType()), &own);
  EXPECT_EQ(detail::unlayeredHooks(own.deviceType()), &own);
}

TEST(HookLayers, AddedLayerSeesEachCallAroundTheBackend) {
  AcceleratorHooks& own = backend();
  RecordingLayer layer;
  {
    Added added(layer);
    AcceleratorHooks& served = getHooks(own.deviceType());
    ASSERT_NE(&served, &own);
    EXPECT_EQ(detail::unlayeredHooks(own.deviceType()), &own);
    EXPECT_EQ(served.deviceCount(), own.deviceCount());
    EXPECT_EQ(served.capabilities(), own.capabilities());
    const Stream stream = served.getNewStream(1);
    EXPECT_EQ(stream.device.index(), 1);
    EXPECT_EQ(layer.last_result, static_cast<std::uint64_t>(stream.id));
    const EventId event = served.createEvent(1);
    served.recordEvent(event, stream);
    served.destroyEvent(event);
  }
  EXPECT_EQ(&getHooks(own.deviceType()), &own);
  const std::vector<HookId> expected = {HookId::getNewStream, HookId::createEvent,
                                        HookId::recordEvent, HookId::destroyEvent};
  // init runs first on a backend's first initialising call.
  std::vector<HookId> befores = layer.befores;
  std::erase(befores, HookId::init);
  EXPECT_EQ(befores, expected);
  EXPECT_EQ(layer.failures, 0);
}

TEST(HookLayers, TheClockIsReadOnlyWhenALayerWantsTimes) {
  AcceleratorHooks& own = backend();
  RecordingLayer timeless;
  timeless.wants_times = false;
  {
    Added added(timeless);
    (void)getHooks(own.deviceType()).getCurrentStream(0);
    EXPECT_EQ(timeless.last_begin_ns, 0);
    RecordingLayer timed;
    Added also(timed);
    (void)getHooks(own.deviceType()).getCurrentStream(0);
    EXPECT_GT(timed.last_begin_ns, 0);
    EXPECT_EQ(timeless.last_begin_ns, timed.last_begin_ns);  // one call, one reading
  }
}

TEST(HookLayers, AThrowingBeforeKeepsTheCallFromTheBackend) {
  AcceleratorHooks& own = backend();
  RecordingLayer layer;
  layer.refuse = HookId::createEvent;
  Added added(layer);
  std::atomic<int> reached{0};
  backend().setHookObserver([&](std::string_view hook) {
    if (hook == hookInfo(HookId::createEvent).name) ++reached;
  });
  EXPECT_THROW((void)getHooks(own.deviceType()).createEvent(0), InvalidArgument);
  backend().setHookObserver({});
  EXPECT_EQ(reached.load(), 0);
  // A layer whose before() threw gets no after(): it never began the call.
  EXPECT_EQ(std::count(layer.afters.begin(), layer.afters.end(), HookId::createEvent), 0);
}

TEST(HookLayers, AllocationsAndFreesReachTheLayerAndKeepTheCachesView) {
  AcceleratorHooks& own = backend();
  RecordingLayer layer;
  Added added(layer);
  AcceleratorHooks& served = getHooks(own.deviceType());
  const Stream stream = served.getNewStream(0);
  const void* ptr = nullptr;
  {
    DataPtr data = served.getDeviceAllocator(0).allocate(256);
    ptr = data.get();
    // The core's cache still knows its block behind the layer's DataPtr.
    EXPECT_TRUE(memory::recordStreamUse(data, stream));
    std::vector<char> host(256, 'x');
    served.copyHostToDevice(data.get(), host.data(), host.size(), stream);
  }
  {
    DataPtr pinned = served.getPinnedMemoryAllocator().allocate(64);
    EXPECT_TRUE(served.isPinnedPtr(pinned.get()));
  }
  ASSERT_EQ(layer.allocations.size(), 2u);
  EXPECT_EQ(layer.allocations[0], (RecordingLayer::Memory{ptr, 256, false}));
  EXPECT_TRUE(layer.allocations[1].pinned);
  EXPECT_EQ(layer.frees, layer.allocations);
}

// Blocks freed on another thread than the one that made them reach the
// layer alike; that thread keeps the decorator's blocks for its own
// allocations and gives them back when it exits (the sanitizer builds check
// that none leaks).
TEST(HookLayers, BlocksFreedOnAnotherThreadReachTheLayer) {
  AcceleratorHooks& own = backend();
  RecordingLayer layer;
  Added added(layer);
  Allocator& allocator = getHooks(own.deviceType()).getDeviceAllocator(0);
  std::vector<DataPtr> made;
  for (std::size_t i = 1; i <= 100; ++i) made.push_back(allocator.allocate(64 * i));
  std::thread([&] {
    made.clear();
    DataPtr again = allocator.allocate(32);  // from the blocks this thread keeps
  }).join();
  auto byAddress = [](const RecordingLayer::Memory& a, const RecordingLayer::Memory& b) {
    return a.ptr < b.ptr;
  };
  ASSERT_EQ(layer.allocations.size(), 101u);
  ASSERT_EQ(layer.frees.size(), 101u);
  std::sort(layer.allocations.begin(), layer.allocations.end(), byAddress);
  std::sort(layer.frees.begin(), layer.frees.end(), byAddress);
  EXPECT_EQ(layer.frees, layer.allocations);
}

TEST(HookLayers, BackendRegisteredWhileALayerIsAddedIsLayeredAtOnce) {
  RecordingLayer layer;
  Added added(layer);
  testing::TestHooks& late = testing::registerTestBackend("layerlatedev", 1);
  EXPECT_NE(&getHooks(late.deviceType()), &late);
  EXPECT_EQ(detail::unlayeredHooks(late.deviceType()), &late);
}

TEST(HookLayers, TheContextsReadySlotFollowsTheLayers) {
  AcceleratorHooks& own = backend();
  globalContext().lazyInitDevice(own.deviceType());
  const auto slot = static_cast<std::uint8_t>(own.deviceType());
  EXPECT_EQ(detail::g_context_ready[slot].load(), &own);
  {
    RecordingLayer layer;
    Added added(layer);
    EXPECT_EQ(detail::g_context_ready[slot].load(), &getHooks(own.deviceType()));
    EXPECT_TRUE(getHooks(own.deviceType()).isInitialized());
  }
  EXPECT_EQ(detail::g_context_ready[slot].load(), &own);
}

// Threads keep calling hooks and allocating while layers are added and
// removed: every call goes through the backend or the decorator whole, and
// a layer sees only calls it can count (the ThreadSanitizer build runs it).
TEST(HookLayers, LayersComeAndGoWhileOtherThreadsCall) {
  AcceleratorHooks& own = backend();
  own.init();
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      const DeviceIndex device = static_cast<DeviceIndex>(t % 2);
      while (!stop.load()) {
        AcceleratorHooks& served = getHooks(own.deviceType());
        (void)served.getCurrentStream(device);
        DataPtr data = served.getDeviceAllocator(device).allocate(128);
        const EventId event = served.createEvent(device);
        served.recordEvent(event, served.getCurrentStream(device));
        served.destroyEvent(event);
      }
    });
  }
  // One layer for the whole test: a layer must outlive the calls in flight
  // when it is removed (hook_layer.h), and these threads are always in one.
  RecordingLayer layer;
  for (int round = 0; round < 200; ++round) {
    detail::addHookLayer(layer);
    detail::removeHookLayer(layer);
  }
  stop.store(true);
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(&getHooks(own.deviceType()), &own);
}

}  // namespace
}  // namespace accel
