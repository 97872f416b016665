// ConformanceCase: one check of the hooks contract, and the helpers the
// group files (low_cases.cpp, streams_cases.cpp, ...) write their checks with.
//
// Internal to accel_conformance. A case is a plain function of the hooks
// under test; conformance_suite.cpp turns each (device type, case) into a
// GoogleTest test. The group files expose their cases through functions
// rather than static registration because unreferenced objects of a static
// library are dropped by the linker.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include "accel/capabilities.h"
#include "accel/device.h"
#include "accel/error.h"
#include "accel/hooks.h"

namespace accel::conformance::detail {

struct ConformanceCase {
  HookGroup group;
  const char* name;
  std::vector<std::string_view> hooks;  // hooks exercised; see the undeclared-group check
  bool needsDevice;                     // skipped when the backend is not available
  void (*body)(AcceleratorHooks& hooks);
};

std::vector<ConformanceCase> lowCases();
std::vector<ConformanceCase> highCases();
std::vector<ConformanceCase> deviceCases();
std::vector<ConformanceCase> streamsCases();
std::vector<ConformanceCase> eventsCases();
std::vector<ConformanceCase> memoryCases();
std::vector<ConformanceCase> memoryHistoryCases();
std::vector<ConformanceCase> graphsCases();

// The group of the public hook named `hook` ("getNewStream"), nullopt for a
// name that is not a hook.
std::optional<HookGroup> hookGroupOf(std::string_view hook);
// Calls `hook` on `hooks` with placeholder arguments, for the check that an
// undeclared group refuses every call. Returns false, calling nothing, for an
// unknown name and for destroyEvent (noexcept: it ignores undeclared groups).
bool callHookWithPlaceholders(AcceleratorHooks& hooks, std::string_view hook);

// Runs fn on a new thread and waits for it. Per-thread state (current device,
// current stream) starts fresh there and dies with the thread, so cases can
// set it freely without disturbing the thread running the tests. An exception
// thrown by fn is rethrown here; gtest assertions made in fn are recorded
// (they are thread-safe), though ASSERT_* only leaves fn itself.
template <typename Fn>
void inNewThread(Fn&& fn) {
  std::exception_ptr error;
  std::thread thread([&] {
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  });
  thread.join();
  if (error) std::rethrow_exception(error);
}

// Success if fn throws E (or a subclass) whose message contains every part.
// The failure says what happened instead, for the report.
template <typename E, typename Fn>
::testing::AssertionResult throwsContaining(
    Fn&& fn, std::initializer_list<std::string_view> parts) {
  try {
    fn();
  } catch (const E& e) {
    std::string_view message = e.what();
    for (std::string_view part : parts) {
      if (message.find(part) == std::string_view::npos) {
        return ::testing::AssertionFailure()
               << "threw the expected type, but the message lacks \"" << part
               << "\"; message: " << message;
      }
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw " << typeid(e).name()
                                         << " instead of the expected type: " << e.what();
  } catch (...) {
    return ::testing::AssertionFailure() << "threw a non-std::exception";
  }
  return ::testing::AssertionFailure() << "did not throw";
}

// Success if fn throws any accel::Error.
template <typename Fn>
::testing::AssertionResult throwsAccelError(Fn&& fn) {
  return throwsContaining<Error>(std::forward<Fn>(fn), {});
}

// The exact range message every index check produces (hooks.h).
[[nodiscard]] inline std::string rangeMessage(const AcceleratorHooks& hooks, int index) {
  return "device index " + std::to_string(index) + " out of range [0, " +
         std::to_string(hooks.deviceCount()) + ") for '" + std::string(hooks.name()) +
         "'";
}

// Names the hook to blame for this test's failure in reports (the property
// "broken_hook"), instead of the case's first hook. For a precondition that
// relies on another hook: a broken setCurrentDevice should not be reported
// as a broken getDefaultGenerator.
inline void blame(std::string_view hook) {
  ::testing::Test::RecordProperty("broken_hook", std::string(hook));
}

// Makes `index` current on the calling thread and checks that it is. On
// failure, records it against setCurrentDevice and returns false; the caller
// returns, since what follows relies on the current device.
[[nodiscard]] inline bool makeCurrent(AcceleratorHooks& hooks, DeviceIndex index) {
  hooks.setCurrentDevice(index);
  if (hooks.getCurrentDevice() == index) return true;
  blame("setCurrentDevice");
  ADD_FAILURE() << "precondition failed: getCurrentDevice() is "
                << int(hooks.getCurrentDevice()) << " right after setCurrentDevice("
                << int(index) << ")";
  return false;
}

[[nodiscard]] inline Device deviceOf(const AcceleratorHooks& hooks, int index) {
  return Device(hooks.deviceType(), static_cast<DeviceIndex>(index));
}
[[nodiscard]] inline DeviceIndex lastDevice(const AcceleratorHooks& hooks) {
  return static_cast<DeviceIndex>(hooks.deviceCount() - 1);
}

}  // namespace accel::conformance::detail
