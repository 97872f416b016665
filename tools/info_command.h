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
  // --in-process: discover the backends in this process only, without first
  // trying each in a separate process (isolated_discovery.h).
  bool in_process = false;
  // The internal --discover-backend NAME: this process is the separate
  // process of another's discovery; it reports NAME as JSON and exits.
  std::string discover_backend;
  // The internal --load-plugin PATH: the separate process of a --plugin
  // path's load; it loads PATH, prints what it registered and exits.
  std::string load_plugin;
};

// The report as JSON. Queries each backend (initialising available ones),
// each first discovered in a separate process unless options.in_process: a
// backend whose discovery crashed, hung or failed there is reported as not
// available with the reason, and not asked in this process. Errors of a
// backend are recorded in the report, never thrown.
[[nodiscard]] nlohmann::ordered_json collectInfo(const PluginSetup& setup,
                                                 const InfoOptions& options);

// The report as indented text.
void printInfoText(const nlohmann::ordered_json& info, std::ostream& out);

// Runs the command: prints the report on stdout. Returns 0, or 1 when a
// --plugin path did not load (the report says why). With discover_backend
// set it is the separate process instead: it prints that one backend's
// report and ends the process (never returns).
int runInfo(const InfoOptions& options);

}  // namespace accel::tool
