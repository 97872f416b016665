// The layers the environment turns on (layer_settings.h), started once,
// before the first backend's hooks are installed.
#include <cstdio>
#include <mutex>

#include "layers/layer_settings.h"
#include "layers/trace/trace_layer.h"

namespace accel::detail {

void startEnvironmentLayers() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    const LayerSettings& settings = layerSettings();
    if (settings.validate != ValidationMode::Off) {
      try {
        setValidationMode(settings.validate);
      } catch (...) {
        std::fputs(
            "accel: ACCEL_VALIDATE: the validation layer could not start (out of "
            "memory); "
            "it stays off\n",
            stderr);
      }
    }
    trace::detail::startTraceFromEnvironment(settings.trace_path);
  });
}

}  // namespace accel::detail
