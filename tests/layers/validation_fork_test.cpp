// fork() while the validation layer is on: a child forked while other
// threads allocate and free through the layer (inside its books' locks, its
// lanes', its stacks' table) can free the blocks it inherited, those made by
// the threads that did not survive the fork too, print the leak report and
// turn the layer off. The layer's fork callbacks take its locks around the
// fork; without them a child forked while a thread was inside one waited for
// it forever. Each child runs bounded (tests/support/forked_child.h): one
// that hangs is killed after 20 s and fails the test.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "accel/hooks_table.h"
#include "accel/validation.h"
#include "support/forked_child.h"
#include "support/sanitizers.h"
#include "support/test_backend.h"

namespace accel {
namespace {

TEST(ValidationFork,
     AChildOfThreadsAllocatingUnderTheLayerFreesWhatItInheritedAndReports) {
  // The parent's threads allocate as the fork lands.
  if (testing::kAddressSanitizer) GTEST_SKIP() << testing::kForkUnsafeAllocatorReason;
  AcceleratorHooks& backend = testing::registerTestBackend("validforkdev", 1);
  backend.init();
  setValidationMode(ValidationMode::Log);
  setValidationStacks(true);  // the stacks' table is used at every pair
  Allocator& allocator = getHooks(backend.deviceType()).getDeviceAllocator(0);

  // Each thread makes and frees blocks, and keeps its newest block in a
  // slot, so that a child inherits blocks made on every thread's lane.
  constexpr int kThreads = 2;
  std::atomic<DataPtr*> kept[kThreads] = {};
  std::atomic<bool> stop{false};
  std::atomic<long> pairs{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!stop.load(std::memory_order_relaxed)) {
        DataPtr data = allocator.allocate(256);
        if (pairs.fetch_add(1, std::memory_order_relaxed) % 64 == 0)
          delete kept[t].exchange(new DataPtr(allocator.allocate(512)));
      }
    });
  }
  while (pairs.load() < 5'000) std::this_thread::yield();

  int failed = 0;
  for (int round = 0; round < 20 && failed == 0; ++round) {
    const int status = testing::runInChildBounded([&] {
      for (auto& slot : kept) delete slot.exchange(nullptr);
      (void)validationLeakReport();
      setValidationMode(ValidationMode::Off);
      return 0;
    });
    if (status != 0) {
      ++failed;
      ADD_FAILURE() << "round " << round << ": the child ended with " << status
                    << (status == 124 ? " (it hung and was killed)" : "");
    }
    const long before = pairs.load();  // the parent's threads go on after a fork
    while (pairs.load() < before + 500) std::this_thread::yield();
  }
  stop.store(true);
  for (std::thread& thread : threads) thread.join();
  for (auto& slot : kept) delete slot.exchange(nullptr);
  setValidationMode(ValidationMode::Off);
}

}  // namespace
}  // namespace accel
