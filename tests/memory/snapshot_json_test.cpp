#include "accel/memory/snapshot_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "accel/error.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/memory_hooks.h"
#include "memory/fake_segment_source.h"
#include "memory/test_units.h"

namespace accel::memory {
namespace {

using nlohmann::json;
using testing::kKiB;
using testing::kMiB;

using testing::stream;

std::set<std::string> keysOf(const json& object) {
  std::set<std::string> out;
  for (auto it = object.begin(); it != object.end(); ++it) out.insert(it.key());
  return out;
}

TEST(SnapshotJson, KeysAndValuesAreThoseOfPyTorchsSnapshotDictionary) {
  testing::FakeSegmentSource source(std::size_t{1} << 30, /*events=*/true);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  allocator.recordHistory({HistoryRecording::All, 100, true});
  DataPtr a = allocator.allocate(0, 1000, stream(0));
  DataPtr b = allocator.allocate(0, 3 * kMiB, stream(1));
  DataPtr c = allocator.allocate(0, 4 * kKiB, stream(0));
  allocator.recordStream(c, stream(2));
  c.reset();  // active_pending_free

  const MemorySnapshot snapshot = allocator.snapshot({.device = 0});
  const json parsed = json::parse(memorySnapshotToJson(snapshot));
  EXPECT_EQ(keysOf(parsed), (std::set<std::string>{"segments", "device_traces"}));
  ASSERT_EQ(parsed["segments"].size(), 2u);
  std::multiset<std::string> states;
  std::int64_t reserved = 0;
  for (const json& segment : parsed["segments"]) {
    EXPECT_EQ(
        keysOf(segment),
        (std::set<std::string>{"device", "address", "total_size", "allocated_size",
                               "active_size", "requested_size", "stream", "segment_type",
                               "segment_pool_id", "is_expandable", "frames", "blocks"}));
    EXPECT_EQ(segment["device"], 0);
    EXPECT_EQ(segment["segment_pool_id"], json::array({0, 0}));
    const std::string type = segment["segment_type"];
    EXPECT_EQ(type, segment["total_size"] == 2 * kMiB ? "small" : "large");
    reserved += segment["total_size"].get<std::int64_t>();
    for (const json& block : segment["blocks"]) {
      EXPECT_EQ(keysOf(block), (std::set<std::string>{"address", "size", "requested_size",
                                                      "state", "frames"}));
      states.insert(block["state"].get<std::string>());
      if (block["state"] == "active_allocated") {
        ASSERT_FALSE(block["frames"].empty());
        EXPECT_EQ(keysOf(block["frames"][0]),
                  (std::set<std::string>{"filename", "line", "name"}));
      }
    }
  }
  EXPECT_EQ(reserved, allocator.stats(0).reserved_bytes.current);
  EXPECT_EQ(states,
            (std::multiset<std::string>{"active_allocated", "active_allocated",
                                        "active_pending_free", "inactive", "inactive"}));
  ASSERT_EQ(parsed["device_traces"].size(), 1u);
  std::vector<std::string> actions;
  for (const json& entry : parsed["device_traces"][0]) {
    EXPECT_EQ(keysOf(entry), (std::set<std::string>{"action", "addr", "size", "stream",
                                                    "time_us", "frames"}));
    actions.push_back(entry["action"]);
  }
  EXPECT_EQ(actions,
            (std::vector<std::string>{"segment_alloc", "alloc", "segment_alloc", "alloc",
                                      "alloc", "free_requested", "snapshot"}));
  EXPECT_EQ(parsed["device_traces"][0][1]["size"], 1024);
  EXPECT_EQ(parsed["device_traces"][0][2]["stream"], 1);
}

TEST(SnapshotJson, EveryTraceActionHasPyTorchsName) {
  using Action = MemoryTraceEntry::Action;
  EXPECT_EQ(traceActionName(Action::Alloc), "alloc");
  EXPECT_EQ(traceActionName(Action::FreeRequested), "free_requested");
  EXPECT_EQ(traceActionName(Action::FreeCompleted), "free_completed");
  EXPECT_EQ(traceActionName(Action::SegmentAlloc), "segment_alloc");
  EXPECT_EQ(traceActionName(Action::SegmentFree), "segment_free");
  EXPECT_EQ(traceActionName(Action::Snapshot), "snapshot");
  EXPECT_EQ(traceActionName(Action::Oom), "oom");
  EXPECT_EQ(traceActionName(Action::SegmentMap), "segment_map");
  EXPECT_EQ(traceActionName(Action::SegmentUnmap), "segment_unmap");
  EXPECT_EQ(traceActionName(static_cast<Action>(200)), "unknown");
}

TEST(SnapshotJson, StringsAreEscaped) {
  MemorySnapshot snapshot;
  MemorySegment segment;
  MemoryBlock block;
  block.state = MemoryBlock::State::Allocated;
  block.frames.push_back({"f<\"quoted\"\\\n>", "lib\tx.so", 3});
  segment.blocks.push_back(block);
  snapshot.segments.push_back(segment);
  const json parsed = json::parse(memorySnapshotToJson(snapshot));
  EXPECT_EQ(parsed["segments"][0]["blocks"][0]["frames"][0]["name"], "f<\"quoted\"\\\n>");
  EXPECT_EQ(parsed["segments"][0]["blocks"][0]["frames"][0]["filename"], "lib\tx.so");
}

// A backend that gets the memory groups from the allocator in one line.
class PluggedHooks final : public CachingAllocatorHooks<> {
 public:
  explicit PluggedHooks(CachingAllocator& allocator)
      : CachingAllocatorHooks<>(
            DeviceType::CUDA, Capabilities{HookGroup::Low, HookGroup::High,
                                           HookGroup::Memory, HookGroup::MemoryHistory}),
        allocator_(allocator) {}

 protected:
  CachingAllocator& cachingAllocator() const override { return allocator_; }
  bool isBuiltImpl() const override { return true; }
  bool isAvailableImpl() const override { return true; }
  int deviceCountImpl() const override { return 1; }
  DeviceIndex getCurrentDeviceImpl() const override { return 0; }
  void setCurrentDeviceImpl(DeviceIndex) override {}
  void initImpl() override {}

 private:
  CachingAllocator& allocator_;
};

TEST(CachingAllocatorHooks, AnswerTheMemoryGroupsFromTheAllocator) {
  testing::FakeSegmentSource source(8 * kMiB);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  PluggedHooks hooks(allocator);
  int observed = 0;
  hooks.attachOutOfMemoryObserver([&](const OutOfMemoryEvent&) { ++observed; });
  hooks.recordMemoryHistory({HistoryRecording::All, 10, false});
  DataPtr block = allocator.allocate(0, 4 * kKiB, stream(0));
  EXPECT_EQ(hooks.memoryStats(0), allocator.stats(0));
  EXPECT_EQ(hooks.memoryStats().allocated_bytes.current, 4 * 1024);
  EXPECT_THROW((void)allocator.allocate(0, 20 * kMiB, stream(0)), OutOfMemory);
  EXPECT_EQ(observed, 1);
  block.reset();
  hooks.emptyCache();
  EXPECT_EQ(hooks.memoryStats(0).reserved_bytes.current, 0);
  hooks.resetPeakMemoryStats(0);
  EXPECT_EQ(hooks.memoryStats(0).reserved_bytes.peak, 0);
  const MemorySnapshot snapshot = hooks.memorySnapshot({.device = 0});
  EXPECT_FALSE(snapshot.device_traces.at(0).empty());
}

}  // namespace
}  // namespace accel::memory
