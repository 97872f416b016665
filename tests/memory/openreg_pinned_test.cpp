// openreg's pinned host memory through the core PinnedCachingAllocator: a
// block freed while an asynchronous copy from it is queued is not reused
// until the copy's stream has reached it.
#include <gtest/gtest.h>

#include "openreg/openreg_test_support.h"

namespace {

using OpenRegPinnedTest = openreg_test::OpenRegTest;

TEST_F(OpenRegPinnedTest, FreedPinnedBlockWaitsForTheQueuedCopy) {
  accel::Allocator& pinned = hooks().getPinnedMemoryAllocator();
  const accel::Stream stream = hooks().getNewStream(1);
  accel::DataPtr device = accel::openreg::allocate(4096, 1);
  openreg_test::Gate gate;
  openreg_test::launchGatedKernel(stream, gate);
  accel::DataPtr host = pinned.allocate(4096);
  void* const address = host.get();
  accel::openreg::copyAsync(device.get(), host.get(), 4096, stream);
  host.reset();  // the copy has not run yet
  accel::DataPtr other = pinned.allocate(4096);
  EXPECT_NE(other.get(), address);
  EXPECT_TRUE(hooks().isPinnedPtr(address));  // cached, still pinned
  gate.open();
  hooks().synchronizeStream(stream);
  accel::DataPtr again = pinned.allocate(4096);
  EXPECT_EQ(again.get(), address);  // reused once the copy ran
}

TEST_F(OpenRegPinnedTest, UnusedFreedBlockIsReusedAtOnce) {
  accel::Allocator& pinned = hooks().getPinnedMemoryAllocator();
  accel::DataPtr host = pinned.allocate(100);
  void* const address = host.get();
  host.reset();
  accel::DataPtr again = pinned.allocate(200);
  EXPECT_EQ(again.get(), address);
}

}  // namespace
