#include "layers/layer_settings.h"

#include <cstdio>
#include <cstdlib>

#include "accel/error.h"

namespace accel::detail {

LayerSettings parseLayerSettings(const char* validate, const char* trace,
                                 std::string& errors) {
  LayerSettings settings;
  if (validate != nullptr) {
    if (std::optional<ValidationMode> mode = parseValidationMode(validate)) {
      settings.validate = *mode;
    } else {
      errors += concat("accel: ACCEL_VALIDATE='", validate,
                       "' is not a validation mode; it accepts 0 (or empty: off), 1 or "
                       "log, throw, abort. The validation layer stays off\n");
    }
  }
  if (trace != nullptr) settings.trace_path = trace;
  return settings;
}

const LayerSettings& layerSettings() noexcept {
  static const LayerSettings* settings = [] {
    try {
      std::string errors;
      auto* parsed = new LayerSettings(parseLayerSettings(
          std::getenv("ACCEL_VALIDATE"), std::getenv("ACCEL_TRACE"), errors));
      if (!errors.empty()) std::fputs(errors.c_str(), stderr);
      return static_cast<const LayerSettings*>(parsed);  // never destroyed
    } catch (...) {
      return static_cast<const LayerSettings*>(nullptr);
    }
  }();
  static const LayerSettings off;
  return settings != nullptr ? *settings : off;
}

}  // namespace accel::detail
