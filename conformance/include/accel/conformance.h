// The conformance suite: the hooks contract (docs/hooks.md, docs/conformance.md)
// as GoogleTest tests that run against any backend, selected by device type.
//
// Use it from a backend's own test binary (linked with accel_conformance and
// GTest::gtest_main) in three lines:
//
//   #include "accel/conformance.h"
//   static const bool kBackendRegistered = (my::registerBackend(), true);
//   ACCEL_INSTANTIATE_CONFORMANCE(MyBackend, "mydev");
//
// or at run time, before RUN_ALL_TESTS (this is what `accel check` does):
//
//   accel::conformance::registerConformanceTests({accel::deviceTypeFromName("mydev")});
//
// Every case belongs to one hook group (capabilities.h). A case runs its
// checks when the backend declares the group; when it does not, the case
// checks instead that each hook it would have used throws NotSupported
// naming the backend and the group. Cases that need a device are skipped,
// with the reason, when the backend reports isAvailable() == false.
//
// Test names: suite "<prefix>/<device type>/<group>", test "<case>", e.g.
// "MyBackend/mydev/streams.CurrentStreamIsPerThreadAndPerDevice"; the
// filter "MyBackend/mydev/*" selects one backend. Each test records the
// properties "backend", "group" and "hooks" (the hooks it exercises), which
// GoogleTest's XML output (--gtest_output=xml) writes into the JUnit report.
//
// Thread-safety: register tests from one thread before RUN_ALL_TESTS, as
// with any GoogleTest registration. The cases themselves start threads of
// their own to check per-thread state, and leave the calling thread's current
// device and streams as they found them.
// Lifetime: registrations live until the process exits.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/capabilities.h"
#include "accel/device_type.h"
#include "accel/hook_catalogue.h"

namespace testing {
class TestInfo;
}  // namespace testing

namespace accel::conformance {

struct SuiteOptions {
  // First component of every test suite name; tells registrations apart.
  std::string prefix = "Conformance";
  // Runs once, on the thread running the tests, before the first test of
  // this registration (for example to register or load the backend). An
  // exception it throws fails every test of the registration with its text.
  std::function<void()> setUp;
};

// Registers the suite's tests for each device type with GoogleTest. The
// backends need not exist yet: each test looks its backend up when it runs,
// and fails with an explanation if none is registered by then. Throws
// InvalidArgument for an empty or duplicate prefix/type combination.
void registerConformanceTests(const std::vector<DeviceType>& types,
                              const SuiteOptions& options = {});
// Same, by device type name; each name is registered as a device type if it
// is new (registerDeviceType), so this works before the backend loads.
void registerConformanceTests(const std::vector<std::string>& typeNames,
                              const SuiteOptions& options = {});

// The --gtest_filter pattern selecting the tests of one registered type.
[[nodiscard]] std::string testFilterFor(DeviceType type,
                                        std::string_view prefix = "Conformance");

// One case of the suite, as documentation and reports see it.
struct CaseInfo {
  HookGroup group = HookGroup::Low;
  std::string name;           // "CurrentDeviceIsZeroUntilSet"
  std::vector<HookId> hooks;  // the hooks it exercises, the one under test first
  bool needsDevice = true;    // skipped when the backend is not available
};

// Every case, in the order tests run (group by group).
[[nodiscard]] std::vector<CaseInfo> conformanceCases();

// What a registered conformance test checks: its backend and case, or
// nullopt for any other test. Used by reporters (`accel check`) to name the
// hooks behind a failure. Thread-safe.
//
// A failed test records the property "broken_hook" (the hook's catalogue
// name) when the case knows better than its first hook whom to blame: a
// precondition hook that misbehaved, or a hook whose *Impl the backend did
// not override (HookNotImplemented).
struct TestDescription {
  DeviceType type = DeviceType::CPU;
  CaseInfo testCase;
};
[[nodiscard]] std::optional<TestDescription> describeTest(
    const ::testing::TestInfo& info);

namespace detail {
// Backs ACCEL_INSTANTIATE_CONFORMANCE; prints the error and returns false
// instead of throwing, since it runs during static initialisation.
bool registerStatically(const char* prefix, std::vector<std::string> typeNames) noexcept;
}  // namespace detail

}  // namespace accel::conformance

// ACCEL_INSTANTIATE_CONFORMANCE(Prefix, "type", ...): registers the suite for
// the named device types at static-initialisation time, with test suite
// names starting with Prefix. A macro because static registration needs a
// namespace-scope object with a unique name.
#define ACCEL_INSTANTIATE_CONFORMANCE(prefix, ...)                           \
  [[maybe_unused]] static const bool accel_conformance_registered_##prefix = \
      ::accel::conformance::detail::registerStatically(#prefix, {__VA_ARGS__})
