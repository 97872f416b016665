// The test backend's own behaviour: what other tests rely on when they use
// TestHooks as a stand-in device.
#include "support/test_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/memory/size_rules.h"
#include "accel/philox_generator.h"
#include "support/error_of.h"

namespace accel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Action = MemoryTraceEntry::Action;

std::vector<Action> actions(const std::vector<MemoryTraceEntry>& trace) {
  std::vector<Action> out;
  for (const MemoryTraceEntry& e : trace) out.push_back(e.action);
  return out;
}

// Each test gets its own unregistered backend, so state never leaks between tests.
class TestBackendTest : public ::testing::Test {
 protected:
  TestHooks hooks_{registerDeviceType("tb_unit"), 2};
  DeviceType type_ = hooks_.deviceType();
};

TEST(TestBackendRegistrationTest, RegisterIsIdempotentForTheSameName) {
  TestHooks& first = registerTestBackend("tb_registered", 3);
  TestHooks& second = registerTestBackend("tb_registered", 3);
  EXPECT_EQ(&first, &second);
  EXPECT_EQ(&getHooks(*findDeviceType("tb_registered")), &first);
  EXPECT_EQ(hooksOrigin(first.deviceType()), "accel::testing::registerTestBackend");
  EXPECT_THAT(errorOf<InvalidArgument>([] { registerTestBackend("tb_registered", 2); }),
              HasSubstr("the type has a TestHooks with 3 devices"));
}

TEST(TestBackendRegistrationTest, DefaultsAreTestdevWithTwoDevices) {
  TestHooks& hooks = registerTestBackend();
  EXPECT_EQ(hooks.name(), "testdev");
  EXPECT_EQ(hooks.deviceCount(), 2);
}

TEST(TestBackendRegistrationTest, RefusesATypeServedByAnotherBackend) {
  class Other final : public AcceleratorHooks {
   public:
    explicit Other(DeviceType t) : AcceleratorHooks(t, {}) {}
  };
  DeviceType type = registerDeviceType("tb_taken");
  registerHooks(std::make_unique<Other>(type), "another library");
  EXPECT_THAT(errorOf<InvalidArgument>([] { registerTestBackend("tb_taken"); }),
              HasSubstr("not a TestHooks (from another library)"));
}

TEST(TestBackendRegistrationTest, RejectsBadNamesAndCounts) {
  EXPECT_THROW(registerTestBackend("Bad Name"), InvalidArgument);
  EXPECT_THROW(TestHooks(registerDeviceType("tb_counts"), -1), InvalidArgument);
  EXPECT_THROW(TestHooks(registerDeviceType("tb_counts"), kMaxDevicesPerType + 1),
               InvalidArgument);
  EXPECT_NO_THROW(TestHooks(registerDeviceType("tb_counts"), kMaxDevicesPerType));
}

TEST_F(TestBackendTest, InitCountsCallsAndFailsOnRequest) {
  EXPECT_FALSE(hooks_.isInitialized());
  EXPECT_FALSE(hooks_.hasPrimaryContext(0));
  hooks_.failHook(HookId::init, 2);
  EXPECT_THROW(hooks_.init(), DeviceError);
  EXPECT_THROW(hooks_.init(), DeviceError);
  EXPECT_FALSE(hooks_.isInitialized());
  hooks_.init();
  EXPECT_TRUE(hooks_.isInitialized());
  EXPECT_EQ(hooks_.initCalls(), 3);
  EXPECT_TRUE(hooks_.hasPrimaryContext(0));
  EXPECT_FALSE(hooks_.hasPrimaryContext(1));
}

TEST_F(TestBackendTest, FailHookFailsTheGivenNumberOfCalls) {
  hooks_.failHook(HookId::getCurrentStream, 2);
  std::string message = errorOf<DeviceError>([&] { (void)hooks_.getCurrentStream(0); });
  EXPECT_THAT(message, HasSubstr(std::string(hookInfo(HookId::getCurrentStream).name) +
                                 "(): injected failure on 'tb_unit'"));
  EXPECT_THROW((void)hooks_.getCurrentStream(0), DeviceError);
  EXPECT_NO_THROW((void)hooks_.getCurrentStream(0));
}

TEST_F(TestBackendTest, FailHookAlwaysFailsUntilCleared) {
  hooks_.failHook(HookId::getDeviceProperties);
  for (int i = 0; i < 3; ++i) {
    EXPECT_THROW((void)hooks_.getDeviceProperties(0), DeviceError);
  }
  hooks_.clearHookFailures();
  EXPECT_NO_THROW((void)hooks_.getDeviceProperties(0));
}

TEST_F(TestBackendTest, FailHookRejectsUnknownNamesUntracedHooksAndBadCounts) {
  EXPECT_THAT(errorOf<InvalidArgument>([&] { hooks_.failHook("getCurentStream"); }),
              HasSubstr("failHook('getCurentStream', -1): name a hook"));
  // The memory groups are the core allocator's: a failure there would never fire.
  for (HookId hook : {HookId::memoryStats, HookId::memorySnapshot}) {
    EXPECT_THAT(errorOf<InvalidArgument>([&] { hooks_.failHook(hook); }),
                HasSubstr("outside the memory groups"));
  }
  EXPECT_THROW(hooks_.failHook(HookId::init, 0), InvalidArgument);
  EXPECT_THROW(hooks_.failHook(HookId::init, -2), InvalidArgument);
}

TEST_F(TestBackendTest, AllocatorFailuresAreInjectable) {
  hooks_.failHook("allocate", 1);
  EXPECT_THROW((void)hooks_.getDeviceAllocator(0).allocate(8), DeviceError);
  EXPECT_NO_THROW((void)hooks_.getDeviceAllocator(0).allocate(8));
  hooks_.failHook("allocatePinned", 1);
  EXPECT_THROW((void)hooks_.getPinnedMemoryAllocator().allocate(8), DeviceError);
}

TEST_F(TestBackendTest, ObserverSeesEveryHookCallByName) {
  std::mutex mutex;
  std::vector<std::string> seen;
  hooks_.init();  // the first initialising hook would run init() first
  hooks_.setHookObserver([&](std::string_view hook) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.emplace_back(hook);
  });
  (void)hooks_.getCurrentDevice();
  (void)hooks_.getNewStream(1);
  hooks_.failHook(HookId::showConfig, 1);
  EXPECT_THROW((void)hooks_.showConfig(), DeviceError);
  (void)hooks_.memoryStats(0);  // the core's: not traced
  hooks_.setHookObserver({});
  (void)hooks_.getCurrentDevice();
  // The core asks getNewStream's priority range first; the index check of an
  // initialised backend uses the device count read at init.
  EXPECT_THAT(seen, ElementsAre(hookInfo(HookId::getCurrentDevice).name,
                                hookInfo(HookId::streamPriorityRange).name,
                                hookInfo(HookId::getNewStream).name,
                                hookInfo(HookId::showConfig).name));
}

TEST_F(TestBackendTest, AvailabilityCanBeSwitched) {
  EXPECT_TRUE(hooks_.isAvailable());
  hooks_.setAvailable(false);
  EXPECT_FALSE(hooks_.isAvailable());
  EXPECT_EQ(hooks_.deviceCount(), 2);  // still counted: only availability changes
  TestHooks none(registerDeviceType("tb_none"), 0);
  EXPECT_FALSE(none.isAvailable());
}

// Current device and stream, streams, events, generators and pointer lookup
// are the backend kit's, tested once in tests/kit; here only what TestHooks adds.

// ---- streams ----

TEST_F(TestBackendTest, WorkIsSynchronousSoStreamsAreAlwaysIdle) {
  Stream s = hooks_.getNewStream(1);
  EXPECT_TRUE(hooks_.queryStream(s));
  EXPECT_TRUE(hooks_.queryStream(hooks_.getDefaultStream(0)));
  EXPECT_NO_THROW(hooks_.synchronizeStream(s));
  EXPECT_NO_THROW(hooks_.deviceSynchronize(1));
}

// ---- device memory ----

TEST_F(TestBackendTest, AllocationsAreAlignedAndOnTheirDevice) {
  DataPtr data = hooks_.getDeviceAllocator(1).allocate(100);
  ASSERT_TRUE(data);
  EXPECT_EQ(
      reinterpret_cast<std::uintptr_t>(data.get()) % TestHooks::kAllocationAlignment, 0u);
  EXPECT_EQ(data.device(), Device(type_, 1));
  EXPECT_EQ(hooks_.getDeviceAllocator(1).device(), Device(type_, 1));
  EXPECT_EQ(hooks_.memoryStats(1).allocations.current, 1);
  EXPECT_TRUE(hooks_.hasPrimaryContext(1));
  data.reset();
  EXPECT_EQ(hooks_.memoryStats(1).allocations.current, 0);
}

TEST_F(TestBackendTest, ZeroByteAllocationIsEmptyButOnTheDevice) {
  DataPtr data = hooks_.getDeviceAllocator(0).allocate(0);
  EXPECT_FALSE(data);
  EXPECT_EQ(data.device(), Device(type_, 0));
  EXPECT_EQ(hooks_.memoryStats(0).allocations.allocated, 0);
}

TEST_F(TestBackendTest, GetDeviceFromPtrRejectsForeignFreedAndPinnedPointers) {
  int local = 0;
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)hooks_.getDeviceFromPtr(&local); }),
              HasSubstr("is not memory allocated by 'tb_unit'"));
  DataPtr data = hooks_.getDeviceAllocator(0).allocate(64);
  void* freed = data.get();
  data.reset();
  // A freed block stays in its cached segment until the cache is emptied.
  EXPECT_EQ(hooks_.getDeviceFromPtr(freed), Device(type_, 0));
  hooks_.emptyCache();
  EXPECT_THAT(errorOf<InvalidArgument>([&] { (void)hooks_.getDeviceFromPtr(freed); }),
              HasSubstr("that was freed"));
  DataPtr pinned = hooks_.getPinnedMemoryAllocator().allocate(64);
  EXPECT_THAT(
      errorOf<InvalidArgument>([&] { (void)hooks_.getDeviceFromPtr(pinned.get()); }),
      HasSubstr("is pinned host memory"));
}

TEST_F(TestBackendTest, PinnedPointersIncludingInteriorOnesAreRecognised) {
  Allocator& allocator = hooks_.getPinnedMemoryAllocator();
  EXPECT_EQ(&allocator, &hooks_.getPinnedMemoryAllocator());
  EXPECT_TRUE(allocator.device().isCpu()) << allocator.device();
  DataPtr pinned = allocator.allocate(300);
  EXPECT_EQ(pinned.device(), allocator.device());
  auto* base = static_cast<char*>(pinned.get());
  EXPECT_TRUE(hooks_.isPinnedPtr(base));
  EXPECT_TRUE(hooks_.isPinnedPtr(base + 299));
  DataPtr device = hooks_.getDeviceAllocator(0).allocate(300);
  EXPECT_FALSE(hooks_.isPinnedPtr(device.get()));
  int local = 0;
  EXPECT_FALSE(hooks_.isPinnedPtr(&local));
  // The core's pinned cache keeps a freed block pinned and hands it out again.
  pinned.reset();
  EXPECT_TRUE(hooks_.isPinnedPtr(base));
  EXPECT_EQ(allocator.allocate(300).get(), base);
}

// The memory groups are the core caching allocator's (tests/memory pins its
// rules down); here, that they are wired to the device allocators.
TEST_F(TestBackendTest, MemoryStatsAreTheCachingAllocators) {
  Allocator& allocator = hooks_.getDeviceAllocator(0);
  DataPtr small = allocator.allocate(100);   // rounded to 512
  DataPtr large = allocator.allocate(1000);  // rounded to 1024
  MemoryStats stats = hooks_.memoryStats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 1536);
  // Two small segments: 512 B blocks have a (uniform) pool of their own.
  EXPECT_EQ(stats.reserved_bytes.current, std::int64_t{2 * memory::kSmallBuffer});
  EXPECT_EQ(stats.requested_bytes.current, 1100);
  EXPECT_EQ(stats.allocations.current, 2);
  EXPECT_EQ(stats.segments.current, 2);
  EXPECT_EQ(stats.num_device_alloc, 2);

  large.reset();
  stats = hooks_.memoryStats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 512);
  EXPECT_EQ(stats.allocated_bytes.peak, 1536);
  EXPECT_EQ(stats.allocated_bytes.freed, 1024);
  EXPECT_EQ(stats.requested_bytes.current, 100);
  EXPECT_EQ(stats.allocations.peak, 2);
  EXPECT_EQ(stats.num_device_free, 0);  // cached

  hooks_.resetPeakMemoryStats(0);
  stats = hooks_.memoryStats(0);
  EXPECT_EQ(stats.allocated_bytes.peak, 512);
  EXPECT_EQ(stats.allocated_bytes.allocated, 1536);  // cumulative counts stay
  EXPECT_EQ(hooks_.memoryStats(1).allocated_bytes.allocated, 0);

  hooks_.emptyCache();  // frees the 1 KiB block's segment; the other is in use
  EXPECT_EQ(hooks_.memoryStats(0).reserved_bytes.current,
            std::int64_t{memory::kSmallBuffer});
  EXPECT_EQ(hooks_.memoryStats(0).num_device_free, 1);
  small.reset();
  hooks_.emptyCache();
  EXPECT_EQ(hooks_.memoryStats(0).reserved_bytes.current, 0);
  EXPECT_EQ(hooks_.memoryStats(0).num_device_free, 2);
}

TEST_F(TestBackendTest, TheCapacityBoundsWhatTheCacheReservesAndOutOfMemoryIsTheCores) {
  constexpr std::int64_t kMiB = 1 << 20;
  hooks_.setMemoryCapacity(2 * memory::kSmallBuffer);  // two small segments
  EXPECT_EQ(hooks_.getDeviceProperties(1).total_memory_bytes, 4u << 20);
  std::vector<OutOfMemoryEvent> events;
  hooks_.attachOutOfMemoryObserver(
      [&](const OutOfMemoryEvent& e) { events.push_back(e); });
  hooks_.attachOutOfMemoryObserver([&](const OutOfMemoryEvent&) { throw 1; });  // ignored
  Allocator& allocator = hooks_.getDeviceAllocator(1);
  DataPtr held = allocator.allocate(1024);  // the first 2 MiB segment
  // 3 MiB is a large request: it wants a 20 MiB segment.
  std::string message = errorOf<OutOfMemory>([&] { (void)allocator.allocate(3 * kMiB); });
  EXPECT_THAT(message, HasSubstr("tb_unit:1"));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].device, 1);
  EXPECT_EQ(events[0].requested_bytes, std::size_t(3 * kMiB));
  EXPECT_EQ(events[0].device_total_bytes, 4u << 20);
  EXPECT_EQ(events[0].device_free_bytes, 2u << 20);
  MemoryStats stats = hooks_.memoryStats(1);
  EXPECT_EQ(stats.num_ooms, 1);
  EXPECT_EQ(stats.allocated_bytes.current, 1024);
  // Up to exactly full: a second segment, filled by two 1 MiB blocks.
  DataPtr first = allocator.allocate(kMiB);  // the rest of the first segment
  DataPtr second = allocator.allocate(kMiB);
  DataPtr third = allocator.allocate(kMiB);
  EXPECT_EQ(hooks_.memoryStats(1).reserved_bytes.current, 4 * kMiB);
  EXPECT_THROW((void)allocator.allocate(kMiB), OutOfMemory);
  EXPECT_THROW((void)allocator.allocate(SIZE_MAX), OutOfMemory);
  EXPECT_EQ(hooks_.memoryStats(0).num_ooms, 0);
}

TEST_F(TestBackendTest, AllocatorsTakeTheCurrentStreamOfTheirDevice) {
  hooks_.recordMemoryHistory({HistoryRecording::AllocationsOnly, 100, false});
  const Stream side = hooks_.getNewStream(1);
  hooks_.setCurrentStream(side);
  DataPtr data = hooks_.getDeviceAllocator(1).allocate(64);
  const std::vector<MemoryTraceEntry> trace =
      hooks_.memorySnapshot({.device = 1}).device_traces[1];
  ASSERT_EQ(trace.size(), 1u);
  EXPECT_EQ(trace[0].stream, side);
  hooks_.setCurrentStream(hooks_.getDefaultStream(1));
}

// ---- memory history ----

TEST_F(TestBackendTest, HistoryRecordsAllocationAndSegmentEventsWhenEnabled) {
  DataPtr before = hooks_.getDeviceAllocator(0).allocate(10);  // not recorded: off
  hooks_.recordMemoryHistory({HistoryRecording::All, 100, true});
  DataPtr data = hooks_.getDeviceAllocator(0).allocate(3 << 20);  // a large segment
  const auto address = reinterpret_cast<std::uint64_t>(data.get());
  data.reset();
  hooks_.emptyCache();  // returns the large segment; `before` holds the small one
  MemorySnapshot snapshot = hooks_.memorySnapshot({.all_devices = true});
  ASSERT_EQ(snapshot.device_traces.size(), 2u);
  const std::vector<MemoryTraceEntry>& trace = snapshot.device_traces[0];
  // All also records the snapshot itself, on every device.
  EXPECT_THAT(actions(trace),
              ElementsAre(Action::SegmentAlloc, Action::Alloc, Action::FreeRequested,
                          Action::FreeCompleted, Action::SegmentFree, Action::Snapshot));
  EXPECT_THAT(actions(snapshot.device_traces[1]), ElementsAre(Action::Snapshot));
  ASSERT_EQ(trace.size(), 6u);
  for (std::size_t i = 0; i < 5; ++i) {
    const MemoryTraceEntry& e = trace[i];
    EXPECT_EQ(e.address, address);
    EXPECT_EQ(e.size, e.action == Action::SegmentAlloc || e.action == Action::SegmentFree
                          ? memory::kLargeBuffer
                          : std::size_t{3} << 20);
    EXPECT_EQ(e.stream, hooks_.getDefaultStream(0));
  }
  EXPECT_FALSE(trace[1].frames.empty());  // record_stack asked for frames
  EXPECT_LE(trace.front().time_ns, trace.back().time_ns);
}

TEST_F(TestBackendTest, AllocationsOnlyHistorySkipsSegmentEvents) {
  hooks_.recordMemoryHistory({HistoryRecording::AllocationsOnly, 100, false});
  hooks_.getDeviceAllocator(1).allocate(1).reset();
  hooks_.emptyCache();
  MemorySnapshot snapshot = hooks_.memorySnapshot({.device = 1});
  EXPECT_THAT(actions(snapshot.device_traces[1]),
              ElementsAre(Action::Alloc, Action::FreeRequested, Action::FreeCompleted));
  EXPECT_TRUE(snapshot.device_traces[1][0].frames.empty());
}

TEST_F(TestBackendTest, HistoryKeepsOnlyTheNewestEntries) {
  hooks_.recordMemoryHistory({HistoryRecording::AllocationsOnly, 3, false});
  std::vector<DataPtr> blocks;
  for (int i = 0; i < 5; ++i) blocks.push_back(hooks_.getDeviceAllocator(0).allocate(1));
  MemorySnapshot snapshot = hooks_.memorySnapshot({.device = 0});
  ASSERT_EQ(snapshot.device_traces[0].size(), 3u);
  EXPECT_EQ(snapshot.device_traces[0][0].address,
            reinterpret_cast<std::uint64_t>(blocks[2].get()));
}

TEST_F(TestBackendTest, DisablingHistoryStopsRecordingAndDropsTheTrace) {
  hooks_.recordMemoryHistory({HistoryRecording::AllocationsOnly, 100, false});
  DataPtr a = hooks_.getDeviceAllocator(0).allocate(1);
  EXPECT_EQ(hooks_.memorySnapshot({.device = 0}).device_traces[0].size(), 1u);
  hooks_.recordMemoryHistory({HistoryRecording::Off, 0, false});
  DataPtr b = hooks_.getDeviceAllocator(0).allocate(1);
  EXPECT_TRUE(hooks_.memorySnapshot({.device = 0}).device_traces[0].empty());
  hooks_.recordMemoryHistory({HistoryRecording::AllocationsOnly, 100, false});
  EXPECT_TRUE(hooks_.memorySnapshot({.device = 0}).device_traces[0].empty());
}

TEST_F(TestBackendTest, SnapshotListsLiveSegmentsOfTheChosenDevices) {
  hooks_.recordMemoryHistory({HistoryRecording::AllocationsOnly, 100, false});
  DataPtr a = hooks_.getDeviceAllocator(0).allocate(2u << 20);
  DataPtr b = hooks_.getDeviceAllocator(1).allocate(100);
  MemorySnapshot only0 = hooks_.memorySnapshot({.device = 0, .include_trace = false});
  ASSERT_EQ(only0.segments.size(), 1u);
  for (const auto& trace : only0.device_traces) EXPECT_TRUE(trace.empty());
  const MemorySegment& segment = only0.segments[0];
  EXPECT_EQ(segment.device, Device(type_, 0));
  EXPECT_EQ(segment.address, reinterpret_cast<std::uint64_t>(a.get()));
  EXPECT_EQ(segment.total_size, memory::kLargeBuffer);
  EXPECT_TRUE(segment.is_large);
  ASSERT_EQ(segment.blocks.size(), 2u);  // the allocation and the free rest
  EXPECT_EQ(segment.blocks[0].state, MemoryBlock::State::Allocated);
  EXPECT_EQ(segment.blocks[0].requested_size, 2u << 20);
  EXPECT_EQ(segment.blocks[1].state, MemoryBlock::State::Free);

  MemorySnapshot all = hooks_.memorySnapshot({.all_devices = true});
  EXPECT_EQ(all.segments.size(), 2u);
  ASSERT_EQ(all.device_traces.size(), 2u);
  EXPECT_EQ(all.device_traces[1].size(), 1u);
  hooks_.setCurrentDevice(1);
  MemorySnapshot current = hooks_.memorySnapshot();  // -1: the current device
  ASSERT_EQ(current.segments.size(), 1u);
  EXPECT_EQ(current.segments[0].device, Device(type_, 1));
  EXPECT_FALSE(current.segments[0].is_large);
  hooks_.setCurrentDevice(0);
}

// ---- graphs ----

TEST_F(TestBackendTest, KeptGraphGoesThroughEveryPhase) {
  GraphId graph = hooks_.graphCreate(/*keep_graph=*/true);
  EXPECT_NE(graph, kNoGraph);
  hooks_.graphCaptureBegin(graph);
  hooks_.graphCaptureEnd(graph);
  EXPECT_THAT(errorOf<DeviceError>([&] { hooks_.graphReplay(graph); }),
              HasSubstr("holds a capture that is not instantiated"));
  hooks_.graphInstantiate(graph);
  for (int i = 0; i < 3; ++i) hooks_.graphReplay(graph);
  hooks_.graphInstantiate(graph);  // keep_graph: may instantiate again
  hooks_.graphReplay(graph);
  hooks_.graphReset(graph);
  EXPECT_THAT(errorOf<DeviceError>([&] { hooks_.graphReplay(graph); }),
              HasSubstr("holds no capture"));
  EXPECT_TRUE(hooks_.graphPool(graph).isDefault()) << "reset forgets the pool";
  hooks_.graphCaptureBegin(graph);  // an empty graph can capture again
  hooks_.graphCaptureEnd(graph);
  hooks_.graphDestroy(graph);
  EXPECT_THAT(errorOf<InvalidArgument>([&] { hooks_.graphReplay(graph); }),
              HasSubstr("is not a live graph of 'tb_unit'"));
}

TEST_F(TestBackendTest, GraphWithoutKeepGraphIsInstantiatedByCaptureEnd) {
  GraphId graph = hooks_.graphCreate();
  hooks_.graphCaptureBegin(graph);
  hooks_.graphCaptureEnd(graph);
  hooks_.graphReplay(graph);
  hooks_.graphReplay(graph);
  EXPECT_THAT(errorOf<DeviceError>([&] { hooks_.graphInstantiate(graph); }),
              HasSubstr("was instantiated as its capture ended (no keep_graph)"));
}

TEST_F(TestBackendTest, GraphMisuseIsRejected) {
  GraphId graph = hooks_.graphCreate(true);
  EXPECT_THAT(errorOf<DeviceError>([&] { hooks_.graphCaptureEnd(graph); }),
              HasSubstr("holds no capture"));
  EXPECT_THROW(hooks_.graphInstantiate(graph), DeviceError);  // nothing captured
  EXPECT_THROW(hooks_.graphReplay(graph), DeviceError);
  hooks_.graphCaptureBegin(graph);
  EXPECT_THAT(errorOf<DeviceError>([&] { hooks_.graphCaptureBegin(graph); }),
              HasSubstr("is capturing"));
  EXPECT_THROW(hooks_.graphInstantiate(graph), DeviceError);
  EXPECT_THROW(hooks_.graphReplay(graph), DeviceError);
  EXPECT_THROW(hooks_.graphReset(graph), DeviceError);
  EXPECT_THROW(hooks_.graphDestroy(graph), DeviceError);
  hooks_.graphCaptureEnd(graph);
  EXPECT_THROW(hooks_.graphCaptureBegin(graph), DeviceError);  // holds a capture
  EXPECT_THROW(hooks_.graphCaptureEnd(graph), DeviceError);
  EXPECT_THROW(hooks_.graphReplay(999), InvalidArgument);
  EXPECT_THROW((void)hooks_.graphPool(999), InvalidArgument);
  EXPECT_THROW(hooks_.graphDestroy(999), InvalidArgument);
}

TEST_F(TestBackendTest, CaptureUsesAPrivatePoolUnlessOneIsShared) {
  GraphId a = hooks_.graphCreate(true);
  GraphId b = hooks_.graphCreate(true);
  GraphId c = hooks_.graphCreate(true);
  EXPECT_TRUE(hooks_.graphPool(a).isDefault());
  hooks_.graphCaptureBegin(a);
  hooks_.graphCaptureEnd(a);
  MempoolId pool_a = hooks_.graphPool(a);
  EXPECT_FALSE(pool_a.isDefault());
  hooks_.graphCaptureBegin(b);
  hooks_.graphCaptureEnd(b);
  EXPECT_NE(hooks_.graphPool(b), pool_a);
  hooks_.graphCaptureBegin(c, pool_a);
  hooks_.graphCaptureEnd(c);
  EXPECT_EQ(hooks_.graphPool(c), pool_a);
}

// ---- the rest ----

TEST_F(TestBackendTest, DefaultGeneratorsArePhiloxOnePerDevice) {
  Generator g0 = hooks_.getDefaultGenerator(0);
  EXPECT_EQ(g0, hooks_.getDefaultGenerator(0));
  EXPECT_EQ(g0.device(), Device(type_, 0));
  EXPECT_EQ(g0.currentSeed(), kDefaultSeed);
  EXPECT_NE(g0.as<PhiloxGenerator>(), nullptr);
  Generator fresh = hooks_.getNewGenerator(1);
  EXPECT_EQ(fresh.device(), Device(type_, 1));
  EXPECT_NE(fresh, hooks_.getDefaultGenerator(1));
}

TEST_F(TestBackendTest, DescribesItself) {
  DeviceProperties props = hooks_.getDeviceProperties(1);
  EXPECT_EQ(props.name, "tb_unit in-memory test device");
  EXPECT_EQ(props.uuid, "test-tb_unit-1");
  EXPECT_EQ(props.total_memory_bytes, TestHooks::kDefaultMemoryCapacity);
  EXPECT_THAT(hooks_.showConfig(), HasSubstr("2 in-memory devices of 1073741824 bytes"));
  EXPECT_EQ(hooks_.streamPriorityRange(), std::make_pair(0, 0));  // the kit's
}

TEST_F(TestBackendTest, ConcurrentAllocationAndLookupKeepExactCounts) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      DeviceIndex device = static_cast<DeviceIndex>(t % 2);
      hooks_.setCurrentDevice(device);
      for (int i = 0; i < kRounds; ++i) {
        DataPtr data = hooks_.getDeviceAllocator(-1).allocate(64);
        EXPECT_EQ(hooks_.getDeviceFromPtr(data.get()), Device(type_, device));
        EventId event = hooks_.createEvent();
        hooks_.recordEvent(event, hooks_.getCurrentStream());
        hooks_.destroyEvent(event);
        (void)hooks_.memoryStats(device);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (DeviceIndex device : {0, 1}) {
    MemoryStats stats = hooks_.memoryStats(device);
    EXPECT_EQ(stats.allocations.current, 0);
    EXPECT_EQ(stats.allocated_bytes.current, 0);
    EXPECT_EQ(stats.allocations.allocated, kThreads / 2 * kRounds);
  }
}

}  // namespace
}  // namespace accel::testing
