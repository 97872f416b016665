// docs/memory.md's "Plugging a backend in" code, compiled as the page shows
// it: tests/memory/CMakeLists.txt copies every block marked "compiled as
// written by tests/memory/docs_snippet_test.cpp" into docs_memory_snippets.inc
// at configure time, and this file includes it after what the page assumes
// (its headers, and a driver's malloc/free). A page edit that no longer
// compiles fails the build; the test below checks that the hooks it defines
// answer the memory group from the allocator.
#include <gtest/gtest.h>

#include <cstdlib>

#include "accel/hooks_table.h"
#include "accel/kit/synchronous_device.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/memory_hooks.h"
#include "accel/memory/segment_source.h"

namespace {

void* my_runtime_malloc(accel::DeviceIndex, std::size_t bytes) {
  return std::aligned_alloc(512, (bytes + 511) / 512 * 512);
}
void my_runtime_free(accel::DeviceIndex, void* ptr) { std::free(ptr); }

#include "docs_memory_snippets.inc"

TEST(DocsMemorySnippet, HooksAsThePageWritesThemAnswerTheMemoryGroups) {
  MyHooks hooks(accel::registerDeviceType("docs_memory_snippet"));
  EXPECT_TRUE(hooks.supports(accel::HookGroup::Memory));
  EXPECT_TRUE(hooks.supports(accel::HookGroup::MemoryHistory));
  EXPECT_EQ(hooks.deviceCount(), 1);
  const accel::MemoryStats stats = hooks.memoryStats(0);
  EXPECT_EQ(stats.allocated_bytes.current, 0);
  EXPECT_EQ(stats.num_device_alloc, 0);
  hooks.emptyCache();
}

}  // namespace
