// adapter::Core's wrappers of the core's services (accel/adapter/core.h),
// over a services table of the test's own: a service a minor version added
// is asked only of a core that speaks that version, and a refusal of the
// core's is passed on with its status.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "accel/adapter/core.h"

namespace {

using accel::adapter::Core;
using accel::adapter::Stream;

struct Calls {
  int joins = 0;
  std::int32_t type = -1;
  Stream capturing{};
  Stream joined{};
  accel_status answer = ACCEL_OK;
};
Calls g_calls;
std::uint32_t g_version = ACCEL_PLUGIN_ABI_VERSION(1, 3);

accel_core* const kCore = reinterpret_cast<accel_core*>(0x1);

accel_core_services servicesSpeaking(std::uint32_t version) {
  g_version = version;
  g_calls = Calls{};
  accel_core_services s{};
  s.struct_size = sizeof(s);
  s.negotiated_version = [](accel_core*) noexcept { return g_version; };
  s.join_capture = [](accel_core* core, std::int32_t type, accel_stream capturing,
                      accel_stream joined) noexcept {
    EXPECT_EQ(core, kCore);
    ++g_calls.joins;
    g_calls.type = type;
    g_calls.capturing = capturing;
    g_calls.joined = joined;
    return g_calls.answer;
  };
  return s;
}

TEST(AdapterCore, JoinCaptureCallsTheCoresServiceWithTheBackendsType) {
  const accel_core_services services = servicesSpeaking(ACCEL_PLUGIN_ABI_VERSION(1, 3));
  const Core core(kCore, &services, 5);
  core.joinCapture(Stream{3, 0}, Stream{7, 0});
  EXPECT_EQ(g_calls.joins, 1);
  EXPECT_EQ(g_calls.type, 5);
  EXPECT_EQ(g_calls.capturing.id, 3);
  EXPECT_EQ(g_calls.joined.id, 7);
}

TEST(AdapterCore, JoinCaptureIsNotSupportedByAnOlderCore) {
  const accel_core_services services = servicesSpeaking(ACCEL_PLUGIN_ABI_VERSION(1, 2));
  const Core core(kCore, &services, 5);
  try {
    core.joinCapture(Stream{3, 0}, Stream{7, 0});
    ADD_FAILURE() << "a 1.2 core was asked for join_capture";
  } catch (const accel::adapter::NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("plugin API 1.2, which has no join_capture "
                                         "(since 1.3)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(g_calls.joins, 0);
}

TEST(AdapterCore, JoinCapturePassesTheCoresRefusalOn) {
  const accel_core_services services = servicesSpeaking(ACCEL_PLUGIN_ABI_VERSION(1, 3));
  g_calls.answer = ACCEL_ERROR_INVALID_ARGUMENT;
  const Core core(kCore, &services, 5);
  try {
    core.joinCapture(Stream{3, 0}, Stream{3, 0});
    ADD_FAILURE() << "the core's refusal was dropped";
  } catch (const accel::adapter::Failure& e) {
    EXPECT_EQ(e.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  }
}

}  // namespace
