// The adapter's table of a backend's raw memory (accel/adapter/tables.h):
// device_of (plugin API 1.4) is filled for every Memory and answers what
// Memory::deviceOf says, 1 with the device or 0; the default, and a throw,
// answer 0 (the core then answers from its caches alone).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "accel/plugin_adapter.h"

namespace {

class NoMemory : public accel::adapter::Memory {
 public:
  void* allocate(std::int8_t /*device*/, std::size_t /*bytes*/) override {
    return nullptr;
  }
  void free(std::int8_t /*device*/, void* /*data*/,
            std::size_t /*bytes*/) noexcept override {}
};

// A runtime that knows one region on device 3, and whose driver fails for
// another pointer.
char g_region[64];
char g_failing[64];
class RuntimeMemory final : public NoMemory {
 public:
  std::optional<std::int8_t> deviceOf(const void* ptr) const override {
    if (ptr == g_failing) throw std::runtime_error("the driver is gone");
    if (ptr >= g_region && ptr < g_region + sizeof g_region) return 3;
    return std::nullopt;
  }
};

TEST(AdapterSegmentFns, DeviceOfKnowsNothingByDefault) {
  NoMemory memory;
  const accel_segment_fns fns = accel::adapter::detail::segmentFns(memory);
  ASSERT_NE(fns.device_of, nullptr);
  std::int8_t device = -7;
  EXPECT_EQ(fns.device_of(&memory, g_region, &device), 0);
  EXPECT_EQ(device, -7) << "an unknown pointer's answer wrote the device";
}

TEST(AdapterSegmentFns, DeviceOfAnswersWhatTheBackendsMemorySays) {
  RuntimeMemory memory;
  const accel_segment_fns fns = accel::adapter::detail::segmentFns(memory);
  ASSERT_NE(fns.device_of, nullptr);
  std::int8_t device = -7;
  EXPECT_EQ(fns.device_of(&memory, g_region + 10, &device), 1);
  EXPECT_EQ(device, 3);
  device = -7;
  int elsewhere = 0;
  EXPECT_EQ(fns.device_of(&memory, &elsewhere, &device), 0);
  EXPECT_EQ(device, -7);
}

TEST(AdapterSegmentFns, DeviceOfThatThrowsAnswersUnknown) {
  RuntimeMemory memory;
  const accel_segment_fns fns = accel::adapter::detail::segmentFns(memory);
  ASSERT_NE(fns.device_of, nullptr);
  std::int8_t device = -7;
  EXPECT_EQ(fns.device_of(&memory, g_failing, &device), 0);
  EXPECT_EQ(device, -7);
}

}  // namespace
