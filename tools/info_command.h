// `accel info`: what accelhooks sees in this process: the library version,
// every registered backend (built, available, devices, capabilities, where it
// came from, device properties, memory statistics) and every plugin the
// process tried to load, with the reason when it did not load.
//
// The report is assembled once as JSON (the --json output, whose schema
// docs/accel-tool.md documents) and the text output is rendered from it, so
// the two never disagree.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin_setup.h"

namespace accel::tool {

struct InfoOptions {
  bool json = false;
  std::vector<std::string> plugins;  // --plugin paths
};

// The report as JSON. Queries each backend (initialising available ones);
// errors of a backend are recorded in the report, never thrown.
[[nodiscard]] nlohmann::ordered_json collectInfo(const PluginSetup& setup);

// The report as indented text.
void printInfoText(const nlohmann::ordered_json& info, std::ostream& out);

// Runs the command: prints the report on stdout. Returns 0, or 1 when a
// --plugin path did not load (the report says why).
int runInfo(const InfoOptions& options);

}  // namespace accel::tool
