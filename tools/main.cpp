// accel: inspect accelhooks backends and check them against the hooks
// contract, and look at memory. Commands: info, check, version, memviz,
// memreplay (docs/accel-tool.md, docs/memory.md).
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "accel/error.h"
#include "check_command.h"
#include "info_command.h"
#include "memreplay_command.h"
#include "memviz_command.h"
#include "version_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Inspect accelhooks backends and check them against the hooks contract.",
               "accel"};
  app.require_subcommand(1);
  app.footer(
      "Backends come from ACCEL_PLUGINS, ACCEL_PLUGIN_PATH (or, when it is unset, the "
      "directories next to this executable) and --plugin PATH. See docs/accel-tool.md.");

  accel::tool::InfoOptions info;
  CLI::App* infoCommand = app.add_subcommand(
      "info", "Show backends, devices, memory statistics and plugin diagnostics");
  infoCommand->add_flag("--json", info.json, "Print the report as JSON");
  infoCommand->add_option("--plugin", info.plugins, "Load this backend plugin first")
      ->type_name("PATH")
      ->allow_extra_args(false);

  accel::tool::CheckOptions check;
  CLI::App* checkCommand = app.add_subcommand(
      "check",
      "Run the conformance suite against backends; non-zero exit on any failure");
  checkCommand
      ->add_option("--backend", check.backend, "Check only this backend (device type)")
      ->type_name("NAME");
  checkCommand
      ->add_option("--plugin", check.plugins, "Load this backend plugin and check it")
      ->type_name("PATH")
      ->allow_extra_args(false);
  checkCommand->add_option("--junit", check.junit, "Write a JUnit XML report to FILE")
      ->type_name("FILE");
  checkCommand->add_flag("-v,--verbose", check.verbose, "Print GoogleTest's own output");
  checkCommand->add_flag("--list", check.list,
                         "List the hook groups and conformance cases; check nothing");

  accel::tool::MemvizOptions memviz;
  CLI::App* memvizCommand = app.add_subcommand(
      "memviz", "Draw a memory snapshot (JSON) as a self-contained HTML page");
  memvizCommand->add_option("snapshot", memviz.snapshot, "Snapshot JSON file")
      ->required()
      ->type_name("SNAPSHOT.json");
  memvizCommand->add_option("-o,--output", memviz.output, "HTML file to write")
      ->type_name("FILE");
  memvizCommand->add_option("--device", memviz.device, "Device whose memory to draw");

  accel::tool::MemreplayOptions memreplay;
  CLI::App* memreplayCommand = app.add_subcommand(
      "memreplay", "Replay an allocation trace through the caching allocator");
  memreplayCommand->add_option("trace", memreplay.trace, "Trace file or snapshot JSON")
      ->required()
      ->type_name("TRACE");
  memreplayCommand
      ->add_option("--settings", memreplay.settings,
                   "Allocator settings, as ACCEL_ALLOC_CONF (key:value,...)")
      ->type_name("CONF");
  memreplayCommand->add_option("--capacity", memreplay.capacity,
                               "Simulated device memory (default 80GiB)");
  memreplayCommand->add_option("--device", memreplay.device,
                               "Which device trace of a snapshot to replay");
  memreplayCommand->add_flag("--json", memreplay.json, "Print the results as JSON");

  CLI::App* versionCommand =
      app.add_subcommand("version", "Show the library and plugin API versions");

  CLI11_PARSE(app, argc, argv);

  try {
    if (*infoCommand) return accel::tool::runInfo(info);
    if (*checkCommand) return accel::tool::runCheck(check);
    if (*versionCommand) return accel::tool::runVersion();
    if (*memvizCommand) return accel::tool::runMemviz(memviz);
    if (*memreplayCommand) return accel::tool::runMemreplay(memreplay);
  } catch (const accel::Error& e) {
    std::cerr << "accel: " << e.message() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "accel: " << e.what() << '\n';
    return 2;
  }
  return 2;
}
