// The layers' environment variables (src/core/layers/layer_settings.h): what
// each accepts, and a malformed value named with what it accepts while the
// layer stays off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "accel/validation.h"
#include "layers/layer_settings.h"

namespace accel {
namespace {

using ::testing::HasSubstr;

detail::LayerSettings parse(const std::map<std::string, std::string>& environment,
                            std::string& errors) {
  return detail::parseLayerSettings(
      [&](const char* name) -> const char* {
        auto found = environment.find(name);
        return found != environment.end() ? found->second.c_str() : nullptr;
      },
      errors);
}

TEST(LayerSettings, ValidationModesAsTheVariableSpellsThem) {
  const std::map<std::string, ValidationMode> modes = {
      {"", ValidationMode::Off},        {"0", ValidationMode::Off},
      {"1", ValidationMode::Log},       {"log", ValidationMode::Log},
      {"throw", ValidationMode::Throw}, {"abort", ValidationMode::Abort}};
  for (const auto& [text, mode] : modes) {
    std::string errors;
    EXPECT_EQ(parse({{"ACCEL_VALIDATE", text}}, errors).validate, mode) << text;
    EXPECT_EQ(errors, "") << text;
  }
  std::string errors;
  EXPECT_EQ(parse({}, errors).validate, ValidationMode::Off);
}

TEST(LayerSettings, AMalformedModeIsNamedAndLeavesTheLayerOff) {
  std::string errors;
  const detail::LayerSettings settings = parse({{"ACCEL_VALIDATE", "verbose"}}, errors);
  EXPECT_EQ(settings.validate, ValidationMode::Off);
  EXPECT_THAT(errors, HasSubstr("ACCEL_VALIDATE='verbose' is not a validation mode"));
  EXPECT_THAT(errors, HasSubstr("1 or log, throw, abort"));
  EXPECT_THAT(errors, HasSubstr("stays off"));
}

TEST(LayerSettings, QuarantineBoundsAndTheirMistakes) {
  std::string errors;
  detail::LayerSettings settings = parse({{"ACCEL_VALIDATE_QUARANTINE_BLOCKS", "16"},
                                          {"ACCEL_VALIDATE_QUARANTINE_BYTES", "2MiB"}},
                                         errors);
  EXPECT_EQ(errors, "");
  EXPECT_EQ(settings.quarantine_blocks, 16u);
  EXPECT_EQ(settings.quarantine_bytes, std::size_t{2} << 20);
  settings = parse({{"ACCEL_VALIDATE_QUARANTINE_BLOCKS", "many"},
                    {"ACCEL_VALIDATE_QUARANTINE_BYTES", "lots"}},
                   errors);
  EXPECT_THAT(errors, HasSubstr("ACCEL_VALIDATE_QUARANTINE_BLOCKS='many'"));
  EXPECT_THAT(errors, HasSubstr("ACCEL_VALIDATE_QUARANTINE_BYTES"));
  EXPECT_EQ(settings.quarantine_blocks, 1024u);
  EXPECT_EQ(settings.quarantine_bytes, std::size_t{256} << 20);
}

TEST(LayerSettings, TheTracePathIsReadAsGiven) {
  std::string errors;
  EXPECT_EQ(parse({{"ACCEL_TRACE", "/tmp/t.json"}}, errors).trace_path, "/tmp/t.json");
  EXPECT_EQ(parse({}, errors).trace_path, "");
}

}  // namespace
}  // namespace accel
