// The memory_history group: recorded history, snapshots, out-of-memory observers.
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace memory_history_cases {
namespace {

constexpr std::size_t kBytes = std::size_t{1} << 16;

using Action = MemoryTraceEntry::Action;

bool traceHas(const MemorySnapshot& snapshot, Action action, std::uint64_t address) {
  for (const auto& trace : snapshot.device_traces) {
    for (const MemoryTraceEntry& entry : trace) {
      if (entry.action == action && entry.address == address) return true;
    }
  }
  return false;
}

// The block of the snapshot containing `address`, or nullptr.
const MemoryBlock* blockAt(const MemorySnapshot& snapshot, Device device,
                           std::uint64_t address) {
  for (const MemorySegment& segment : snapshot.segments) {
    if (segment.device != device || address < segment.address ||
        address >= segment.address + segment.total_size) {
      continue;
    }
    for (const MemoryBlock& block : segment.blocks) {
      if (address >= block.address && address < block.address + block.size) return &block;
    }
  }
  return nullptr;
}

// Turns recording off when the case ends, also when a check throws.
class ScopedHistoryRecording {
 public:
  explicit ScopedHistoryRecording(AcceleratorHooks& hooks) : hooks_(hooks) {
    MemoryHistoryOptions options;
    options.enabled = HistoryRecording::All;
    hooks_.recordMemoryHistory(options);
  }
  ScopedHistoryRecording(const ScopedHistoryRecording&) = delete;
  ScopedHistoryRecording& operator=(const ScopedHistoryRecording&) = delete;
  ~ScopedHistoryRecording() {
    MemoryHistoryOptions off;
    off.enabled = HistoryRecording::Off;
    try {
      hooks_.recordMemoryHistory(off);
    } catch (const std::exception& e) {
      ADD_FAILURE() << hookName(HookId::recordMemoryHistory)
                    << "(Off) threw: " << thrownText(e);
    }
  }

 private:
  AcceleratorHooks& hooks_;
};

void snapshotShowsRecordedAllocation(AcceleratorHooks& hooks) {
  Device device = deviceOf(hooks, 0);
  ScopedHistoryRecording recording(hooks);
  DataPtr data = hooks.getDeviceAllocator(0).allocate(kBytes);
  auto address = reinterpret_cast<std::uint64_t>(data.get());
  MemorySnapshotOptions options;
  options.device = 0;
  MemorySnapshot live = hooks.memorySnapshot(options);
  const MemoryBlock* block = blockAt(live, device, address);
  ASSERT_NE(block, nullptr) << hookName(HookId::memorySnapshot)
                            << "() has no segment block containing a live "
                               "allocation of device 0";
  EXPECT_EQ(block->state, MemoryBlock::State::Allocated)
      << hookName(HookId::memorySnapshot)
      << "(): the block of a live allocation is not Allocated";
  EXPECT_GE(block->size, kBytes)
      << hookName(HookId::memorySnapshot) << "(): the block of a " << kBytes
      << "-byte allocation is smaller";
  EXPECT_TRUE(traceHas(live, Action::Alloc, address))
      << hookName(HookId::memorySnapshot)
      << "() trace has no Alloc entry for an allocation made while "
         "recording";

  data.reset();
  MemorySnapshot freed = hooks.memorySnapshot(options);
  EXPECT_TRUE(traceHas(freed, Action::FreeRequested, address) ||
              traceHas(freed, Action::FreeCompleted, address))
      << hookName(HookId::memorySnapshot)
      << "() trace has no free entry for memory freed while recording";
  const MemoryBlock* after = blockAt(freed, device, address);
  if (after != nullptr) {
    EXPECT_NE(after->state, MemoryBlock::State::Allocated)
        << hookName(HookId::memorySnapshot)
        << "(): freed memory is still shown Allocated";
  }
}

void outOfMemoryObserverSeesFailedAllocation(AcceleratorHooks& hooks) {
  EXPECT_TRUE(throwsContaining<InvalidArgument>(
      [&] { hooks.attachOutOfMemoryObserver(OutOfMemoryObserver{}); }, {}))
      << hookName(HookId::attachOutOfMemoryObserver) << "(an empty function)";
  if (!hooks.supports(HookGroup::Device) ||
      hooks.getDeviceProperties(0).total_memory_bytes == 0) {
    GTEST_SKIP()
        << "needs the device group and a known total_memory_bytes to ask for more "
           "memory than device 0 has";
  }
  std::uint64_t total = hooks.getDeviceProperties(0).total_memory_bytes;
  ASSERT_LT(total, std::numeric_limits<std::size_t>::max() / 2);
  std::size_t request = std::size_t(total) + 1;

  // Observers cannot be detached: this one stays attached, so it only
  // counts, and what it counts lives as long as it does.
  struct Seen {
    std::atomic<int> calls{0};
    std::atomic<int> device{-2};
    std::atomic<std::size_t> requested{0};
  };
  auto seen = std::make_shared<Seen>();
  hooks.attachOutOfMemoryObserver([seen](const OutOfMemoryEvent& event) {
    seen->device.store(event.device);
    seen->requested.store(event.requested_bytes);
    seen->calls.fetch_add(1);
  });
  EXPECT_TRUE(throwsContaining<OutOfMemory>(
      [&] { (void)hooks.getDeviceAllocator(0).allocate(request); }, {}))
      << "allocating total_memory_bytes + 1 = " << request << " bytes on device 0";
  EXPECT_GE(seen->calls.load(), 1) << "the out-of-memory observer was not called";
  EXPECT_EQ(seen->device.load(), 0) << "OutOfMemoryEvent::device";
  EXPECT_GE(seen->requested.load(), request) << "OutOfMemoryEvent::requested_bytes";
}

}  // namespace
}  // namespace memory_history_cases

std::vector<ConformanceCase> memoryHistoryCases() {
  using namespace memory_history_cases;
  using enum HookId;
  return {
      deviceCase("SnapshotShowsRecordedAllocation", snapshotShowsRecordedAllocation,
                 {recordMemoryHistory, memorySnapshot}),
      deviceCase("OutOfMemoryObserverSeesFailedAllocation",
                 outOfMemoryObserverSeesFailedAllocation, {attachOutOfMemoryObserver})};
}

}  // namespace accel::conformance::detail
