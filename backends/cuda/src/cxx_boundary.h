// The C++ hooks boundary of the plugin's present entry (plugin_entry.cpp):
// the core calls CudaHooks, its segment sources and its allocators' detour
// expecting the library's errors (accel/error.h), while the backend's code
// throws the adapter's failures (accel/adapter/failure.h), what the C plugin
// boundary takes. asLibraryErrors translates at that boundary; it goes with
// the C++ entry.
//
// Thread-safety: as thread-safe as `fn`.
#pragma once

#include <utility>

#include "accel/adapter/core.h"
#include "accel/adapter/failure.h"
#include "accel/plugin_status.h"
#include "accel/stream.h"

namespace accel::cuda::detail {

// Runs `fn`, throwing an adapter::Failure it throws as the library's error
// of its kind (accel::throwPluginFailure) with its message; anything else
// passes unchanged.
template <typename Fn>
decltype(auto) asLibraryErrors(Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const adapter::Failure& e) {
    throwPluginFailure(e.status(), "cuda", "", e.what());
  }
}

// The backend's stream of the library's, and back. Never throw.
[[nodiscard]] inline adapter::Stream toAdapter(const Stream& stream) noexcept {
  return {stream.id, stream.device.index()};
}
[[nodiscard]] inline Stream toLibrary(adapter::Stream stream) noexcept {
  return Stream(Device::unchecked(DeviceType::CUDA, stream.device), stream.id);
}

}  // namespace accel::cuda::detail
