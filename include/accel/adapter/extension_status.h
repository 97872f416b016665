// The status of a plugin's own exported function (its extension interface:
// what the backend's program-side API calls beyond the hooks the core calls),
// and the guard that turns what a body throws into one. Part of the plugin
// adapter (accel/plugin_adapter.h): header-only, C++17.
//
// Nothing is thrown across a plugin's exported functions: each returns an
// ExtensionStatus, and the API throws it as the library's error of that
// kind with accel::throwPluginFailure (accel/plugin_status.h):
//
//   // plugin:
//   MYDEV_API adapter::ExtensionStatus fill(...) noexcept {
//     return adapter::extensionGuard("mydev", [&] { ... });
//   }
//   // program-side API:
//   const adapter::ExtensionStatus s = fill(...);
//   if (!s.ok()) accel::throwPluginFailure(s.code, "mydev", "fill", s.message);
//
// Thread-safety: plain values; the guard is as thread-safe as its body.
#ifndef ACCEL_ADAPTER_EXTENSION_STATUS_H
#define ACCEL_ADAPTER_EXTENSION_STATUS_H

#include <exception>
#include <new>
#include <string>

#include "accel/adapter/core.h"
#include "accel/adapter/failure.h"
#include "accel/plugin_abi.h"

#pragma GCC visibility push(hidden)

namespace accel::adapter {

// ACCEL_OK, or a failure's status and message. An empty message on a
// failure: a refusal of the core's, whose message the core keeps for the
// calling thread (throwPluginFailure takes it from there).
struct ExtensionStatus {
  accel_status code = ACCEL_OK;
  std::string message;
  [[nodiscard]] bool ok() const noexcept { return code == ACCEL_OK; }
};

// Runs `body`, turning what it throws into an ExtensionStatus; `backend`
// names the plugin in the messages of exceptions that carry none of their
// own kind.
template <typename Body>
ExtensionStatus extensionGuard(const char* backend, Body&& body) noexcept {
  try {
    body();
    return {};
  } catch (const detail::CoreRefusal& e) {
    return {e.status(), {}};
  } catch (const Failure& e) {
    return {e.status(), e.what()};
  } catch (const std::bad_alloc&) {
    return {ACCEL_ERROR_OUT_OF_MEMORY, std::string("out of host memory in ") + backend};
  } catch (const std::exception& e) {
    return {ACCEL_ERROR_INTERNAL, e.what()};
  } catch (...) {
    return {ACCEL_ERROR_INTERNAL, std::string(backend) + " threw an unknown exception"};
  }
}

}  // namespace accel::adapter

#pragma GCC visibility pop

#endif  // ACCEL_ADAPTER_EXTENSION_STATUS_H
