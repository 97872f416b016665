// Internal: runs one hook call through the added layers (hook_layer.h):
// every layer's before(), the backend's hook, every layer's after().
//
// Thread-safety: reads the published layer snapshot once; thread-safe.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "layers/hook_layer.h"
#include "layers/layer_clock.h"
#include "layers/layered_hooks.h"

namespace accel::detail {

// Calls `forward` (the backend's hook) between the layers' before() and
// after(). A before() that throws stops the call: the layers whose before()
// ran get after(call, true), and the exception reaches the caller. `forward`
// may set call.result. With no layer added (the decorator was taken out of
// the path while this thread was on its way in), just forwards.
template <typename Forward>
std::invoke_result_t<Forward&> runLayered(HookCall& call, Forward&& forward) {
  const LayerList* list = currentLayers();
  if (list == nullptr || list->layers.empty()) return forward();
  if (list->wants_times) call.begin_ticks = layerNowTicks();
  const std::vector<HookLayer*>& layers = list->layers;
  std::size_t began = 0;
  auto finish = [&](bool failed) noexcept {
    for (std::size_t i = 0; i < began; ++i) layers[i]->after(call, failed);
  };
  try {
    for (HookLayer* layer : layers) {
      layer->before(call);
      ++began;
    }
  } catch (...) {
    finish(true);
    throw;
  }
  using Result = std::invoke_result_t<Forward&>;
  try {
    if constexpr (std::is_void_v<Result>) {
      forward();
      finish(false);
    } else {
      Result result = forward();
      finish(false);
      return std::forward<Result>(result);
    }
  } catch (...) {
    finish(true);
    throw;
  }
}

}  // namespace accel::detail
