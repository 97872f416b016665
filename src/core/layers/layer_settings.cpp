#include "layers/layer_settings.h"

#include <cstdio>
#include <cstdlib>

#include "accel/error.h"
#include "accel/kit/config.h"

namespace accel::detail {

LayerSettings parseLayerSettings(const EnvironmentLookup& get, std::string& errors) {
  LayerSettings settings;
  if (const char* validate = get("ACCEL_VALIDATE")) {
    if (std::optional<ValidationMode> mode = parseValidationMode(validate)) {
      settings.validate = *mode;
    } else {
      errors += concat("accel: ACCEL_VALIDATE='", validate,
                       "' is not a validation mode; it accepts 0 (or empty: off), 1 or "
                       "log, throw, abort. The validation layer stays off\n");
    }
  }
  if (const char* blocks = get("ACCEL_VALIDATE_QUARANTINE_BLOCKS")) {
    if (std::optional<std::uint64_t> count = kit::parseUnsigned(blocks)) {
      settings.quarantine_blocks = static_cast<std::size_t>(*count);
    } else {
      errors += concat("accel: ACCEL_VALIDATE_QUARANTINE_BLOCKS='", blocks,
                       "' is not a count of blocks (digits, 0 to hold none back); the "
                       "quarantine keeps its default of ",
                       settings.quarantine_blocks, " blocks\n");
    }
  }
  if (const char* bytes = get("ACCEL_VALIDATE_QUARANTINE_BYTES")) {
    try {
      settings.quarantine_bytes = static_cast<std::size_t>(
          kit::parseByteSize(bytes, "ACCEL_VALIDATE_QUARANTINE_BYTES"));
    } catch (const Error& e) {
      errors += concat("accel: ", e.message(), "; the quarantine keeps its default of ",
                       kit::formatByteSize(settings.quarantine_bytes), "\n");
    }
  }
  if (const char* stacks = get("ACCEL_VALIDATE_STACKS")) {
    const std::string_view text(stacks);
    if (text == "0" || text == "1") {
      settings.validate_stacks = text == "1";
    } else {
      errors += concat("accel: ACCEL_VALIDATE_STACKS='", stacks,
                       "' is neither 0 nor 1; the validation layer records stacks\n");
    }
  }
  if (const char* trace = get("ACCEL_TRACE")) settings.trace_path = trace;
  return settings;
}

const LayerSettings& layerSettings() noexcept {
  static const LayerSettings* settings = [] {
    try {
      std::string errors;
      auto* parsed = new LayerSettings(
          parseLayerSettings([](const char* name) { return std::getenv(name); }, errors));
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
