// ConformanceCase: one check of the hooks contract, and the helpers the
// group files (low_cases.cpp, streams_cases.cpp, ...) write their checks with.
//
// Internal to accel_conformance. A case is a plain function of the hooks
// under test; conformance_suite.cpp turns each (device type, case) into a
// GoogleTest test. The group files expose their cases through functions
// rather than static registration because unreferenced objects of a static
// library are dropped by the linker.
//
// The files are compiled in batches (cmake/unity_build.cmake: one
// translation unit includes several), where each file sees the names of the
// files before it. So a file keeps its own helpers in an anonymous namespace
// inside a namespace named after the file (low_cases.cpp: namespace
// low_cases), and a function it exports says `using namespace low_cases;`:
// two files may then each have a kBytes or a throwsAccelError, and neither
// sees the other's.
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
#include "accel/hook_catalogue.h"
#include "accel/hooks.h"

namespace accel::conformance::detail {

// What a case reads of an exception: an accel::Error's message without the
// location appended to what(), so that a check that the message names the
// backend or the hook is not passed by a file path (backends/openreg/...).
[[nodiscard]] inline std::string_view errorMessage(const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  return error != nullptr ? std::string_view(error->message())
                          : std::string_view(e.what());
}

// What a failure report shows of an exception. accelhooks' own builds record
// locations relative to the checkout ("[src/core/hooks/hooks.cpp:89]": the
// top-level CMakeLists.txt maps the path away), a file a vendor running the
// suite does not have, so such a location is left out; the message names the
// backend, the hook and what to do. An absolute location (the throw site in
// the vendor's own code, or an installed header it includes) is kept.
[[nodiscard]] inline std::string thrownText(const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  if (error == nullptr) return e.what();
  const char* file = error->location().file_name();
  return file != nullptr && file[0] == '/' ? std::string(e.what()) : error->message();
}

struct ConformanceCase {
  HookGroup group;
  const char* name;
  // Hooks exercised, the one under test first (it is blamed when the case
  // fails without a more precise culprit); see the undeclared-group check.
  std::vector<HookId> hooks;
  bool needsDevice;  // skipped when the backend is not available
  void (*body)(AcceleratorHooks& hooks);
};

// A case of the group of the hook it is about, the first of `hooks` (the
// catalogue's group, not written again here), that needs a device: skipped
// when the backend is not available, run after the backend initialised.
[[nodiscard]] inline ConformanceCase deviceCase(const char* name,
                                                void (*body)(AcceleratorHooks& hooks),
                                                std::vector<HookId> hooks) {
  const HookGroup group = hookInfo(hooks.at(0)).group;
  return {group, name, std::move(hooks), /*needsDevice=*/true, body};
}

// As deviceCase, for a case that runs on every backend, with or without
// devices (the probes, the init check).
[[nodiscard]] inline ConformanceCase noDeviceCase(const char* name,
                                                  void (*body)(AcceleratorHooks& hooks),
                                                  std::vector<HookId> hooks) {
  ConformanceCase c = deviceCase(name, body, std::move(hooks));
  c.needsDevice = false;
  return c;
}

std::vector<ConformanceCase> lowCases();
std::vector<ConformanceCase> highCases();
std::vector<ConformanceCase> deviceCases();
std::vector<ConformanceCase> streamsCases();
std::vector<ConformanceCase> eventsCases();
std::vector<ConformanceCase> memoryCases();
std::vector<ConformanceCase> memoryHistoryCases();
std::vector<ConformanceCase> graphsCases();
std::vector<ConformanceCase> copiesCases();
std::vector<ConformanceCase> fillCases();
// fork(): the discovery cases run first of all, the device cases last.
std::vector<ConformanceCase> forkDiscoveryCases();
std::vector<ConformanceCase> forkDeviceCases();

// The hook's public name, for failure messages ("getNewStream").
[[nodiscard]] constexpr std::string_view hookName(HookId hook) noexcept {
  return hookInfo(hook).name;
}

// Calls `hook` on `hooks` with placeholder arguments, for the check that an
// undeclared group refuses every call. Returns false, calling nothing, for
// destroyEvent (noexcept: it ignores undeclared groups).
bool callHookWithPlaceholders(AcceleratorHooks& hooks, HookId hook);

// "streams.QueryIsTrueAfterSynchronize on 'mydev'": the case running on the
// thread that runs the tests, set by the suite for inNewThread's trace, so
// that a failure on a case's own thread names the case too. Empty between
// cases.
std::string& runningCaseLabel();

// Runs fn on a new thread and waits for it. Per-thread state (current device,
// current stream) starts fresh there and dies with the thread, so cases can
// set it freely without disturbing the thread running the tests. An exception
// thrown by fn is rethrown here; gtest assertions made in fn are recorded
// (they are thread-safe), though ASSERT_* only leaves fn itself.
template <typename Fn>
void inNewThread(Fn&& fn) {
  std::exception_ptr error;
  const std::string label = runningCaseLabel();
  std::thread thread([&] {
    // gtest's traces are per thread: repeat the case's own here.
    SCOPED_TRACE(label);
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
// The failure says what happened instead, for the report. A hook that is not
// implemented at all (HookNotImplemented) propagates unless E covers it, so
// that the case blames the missing *Impl rather than the hook it checks.
template <typename E, typename Fn>
::testing::AssertionResult throwsContaining(
    Fn&& fn, std::initializer_list<std::string_view> parts) {
  try {
    fn();
  } catch (const E& e) {
    const std::string_view message = errorMessage(e);
    for (std::string_view part : parts) {
      if (message.find(part) == std::string_view::npos) {
        return ::testing::AssertionFailure()
               << "threw the expected type, but the message lacks \"" << part
               << "\"; message: " << thrownText(e);
      }
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    // A missing *Impl reaches here only when E does not cover it.
    if (dynamic_cast<const HookNotImplemented*>(&e) != nullptr) throw;
    return ::testing::AssertionFailure()
           << "threw " << typeid(e).name()
           << " instead of the expected type: " << thrownText(e);
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
// "broken_hook", its catalogue name), instead of the case's first hook. For a
// precondition that relies on another hook: a broken setCurrentDevice should
// not be reported as a broken getDefaultGenerator.
inline void blame(HookId hook) {
  ::testing::Test::RecordProperty("broken_hook", std::string(hookInfo(hook).name));
}

// Makes `index` current on the calling thread and checks that it is. On
// failure, records it against setCurrentDevice and returns false; the caller
// returns, since what follows relies on the current device.
[[nodiscard]] inline bool makeCurrent(AcceleratorHooks& hooks, DeviceIndex index) {
  hooks.setCurrentDevice(index);
  if (hooks.getCurrentDevice() == index) return true;
  blame(HookId::setCurrentDevice);
  ADD_FAILURE() << "precondition failed: expected "
                << hookInfo(HookId::getCurrentDevice).name << "() to return "
                << int(index) << " right after "
                << hookInfo(HookId::setCurrentDevice).name << "(" << int(index)
                << "); it returned " << int(hooks.getCurrentDevice()) << ". Fix "
                << hookInfo(HookId::setCurrentDevice).impl << " / "
                << hookInfo(HookId::getCurrentDevice).impl;
  return false;
}

[[nodiscard]] inline Device deviceOf(const AcceleratorHooks& hooks, int index) {
  return Device(hooks.deviceType(), static_cast<DeviceIndex>(index));
}
[[nodiscard]] inline DeviceIndex lastDevice(const AcceleratorHooks& hooks) {
  return static_cast<DeviceIndex>(hooks.deviceCount() - 1);
}

// Checks that `call(index)` refuses `index` with the InvalidArgument every
// index check throws (rangeMessage); `hook` names the call in the failure.
// call takes the DeviceIndex and may return anything (it is discarded).
template <typename Call>
void expectIndexRejected(AcceleratorHooks& hooks, HookId hook, int index, Call&& call) {
  EXPECT_TRUE(throwsContaining<InvalidArgument>([&] { (void)call(DeviceIndex(index)); },
                                                {rangeMessage(hooks, index)}))
      << "expected " << hookName(hook) << "(" << index
      << ") to throw InvalidArgument for an index out of range (" << hookInfo(hook).impl
      << " or the public hook's index check)";
}

// Checks that `hook` given kCurrentDevice (-1) answers for the calling
// thread's current device: on a new thread, makes the last device current and
// compares read(kCurrentDevice) with read(last). read takes the DeviceIndex
// and returns a value EXPECT_EQ can compare and print.
template <typename Read>
void expectCurrentDeviceResolved(AcceleratorHooks& hooks, HookId hook, Read&& read) {
  const DeviceIndex last = lastDevice(hooks);
  inNewThread([&] {
    if (!makeCurrent(hooks, last)) return;
    EXPECT_EQ(read(kCurrentDevice), read(last))
        << "expected " << hookName(hook) << "(-1) after "
        << hookName(HookId::setCurrentDevice) << "(" << int(last) << ") to answer as "
        << hookName(hook) << "(" << int(last) << ")";
  });
}

}  // namespace accel::conformance::detail
