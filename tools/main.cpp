// accel: inspect accelhooks backends and check them against the hooks
// contract, and look at memory and traces. Commands: info, check, version,
// memviz, memreplay, trace (docs/accel-tool.md, docs/memory.md,
// docs/tracing.md).
//
// Exit status 2 is every usage error, whatever CLI11's own code for it
// (106, 109, ...): scripts test one number, and the message names the
// command and what was wrong.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>

#include "accel/error.h"
#include "check_command.h"
#include "info_command.h"
#include "isolated_discovery.h"
#include "memreplay_command.h"
#include "memviz_command.h"
#include "trace_command.h"
#include "version_command.h"

namespace {

constexpr int kUsageError = 2;

constexpr const char* kPluginSources =
    "Backends come from ACCEL_PLUGINS, ACCEL_PLUGIN_PATH (or, when it is unset, the "
    "directory holding libaccel.so) and --plugin PATH.";

// The names of app's commands, "info, check, ...".
std::string commandNames(CLI::App& app) {
  std::string names;
  for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + command->get_name();
  }
  return names;
}

// Reports a failed parse and returns the exit status: 0 for --help and
// --version (CLI11 reports those as errors too), kUsageError for the rest.
int reportParseError(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (e.get_exit_code() == 0) return app.exit(e);
  // A first word that is no command: CLI11 would only say "A subcommand is
  // required", not which word it did not know.
  if (argc > 1 && argv[1][0] != '-') {
    std::string word = argv[1];
    bool known = false;
    for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || command->check_name(word);
    }
    if (!known) {
      std::cerr << "accel: unknown command '" << word << "'; the commands are "
                << commandNames(app) << " (accel --help)\n";
      return kUsageError;
    }
  }
  // An option before any command: CLI11 would only say that a command is required.
  if (argc > 1 && argv[1][0] == '-' && app.get_subcommands().empty()) {
    std::cerr << "accel: unknown option '" << argv[1] << "' before the command; the "
              << "commands are " << commandNames(app) << " (accel --help)\n";
    return kUsageError;
  }
  std::string who = "accel";
  for (const CLI::App* command : app.get_subcommands()) who += " " + command->get_name();
  std::cerr << who << ": " << e.what() << "\nRun `" << who << " --help` for the usage.\n";
  return kUsageError;
}

// A command's error on stderr as "accel COMMAND: what was wrong", like the
// parse errors (the memory commands' messages begin with their name already).
void reportCommandError(CLI::App& app, const std::string& message) {
  // The chosen command and its chosen subcommands: "trace summary: ".
  std::string prefix;
  for (const CLI::App* command = &app; !command->get_subcommands().empty();) {
    command = command->get_subcommands().front();
    prefix += (prefix.empty() ? "" : " ") + command->get_name();
  }
  prefix += ": ";
  std::cerr << "accel " << (message.rfind(prefix, 0) == 0 ? "" : prefix) << message
            << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Inspect accelhooks backends and check them against the hooks contract.",
               "accel"};
  app.require_subcommand(1);
  app.set_version_flag(
      "-V,--version", [] { return accel::tool::versionText(); },
      "Print the library and plugin API versions and exit");
  app.footer(
      "Run `accel COMMAND --help` for a command's options. Exit status 2: a usage "
      "error. See docs/accel-tool.md.");

  accel::tool::InfoOptions info;
  CLI::App* infoCommand = app.add_subcommand(
      "info", "Show backends, devices, memory statistics and plugin diagnostics");
  infoCommand->add_flag("--json", info.json, "Print the report as JSON");
  infoCommand->add_option("--plugin", info.plugins, "Load this backend plugin first")
      ->type_name("PATH")
      ->allow_extra_args(false);
  infoCommand->add_flag("--in-process", info.in_process,
                        "Discover the backends in this process only, not first each in "
                        "a separate process (a driver that crashes takes accel down)");
  // Internal: the separate process of the discovery (tools/isolated_discovery.h).
  infoCommand->add_option(accel::tool::kDiscoverBackendOption, info.discover_backend)
      ->group("");
  infoCommand->add_option(accel::tool::kLoadPluginOption, info.load_plugin)->group("");
  infoCommand->footer(std::string(kPluginSources) +
                      " Exit status: 0; 1 when a --plugin did not load; 2 a usage error. "
                      "See docs/accel-tool.md.");

  accel::tool::CheckOptions check;
  CLI::App* checkCommand = app.add_subcommand(
      "check",
      "Run the conformance suite against backends; non-zero exit on any failure");
  CLI::Option* backendOption = checkCommand
                                   ->add_option("--backend", check.backend,
                                                "Check only this backend (device type)")
                                   ->type_name("NAME");
  CLI::Option* pluginOption =
      checkCommand
          ->add_option("--plugin", check.plugins, "Load this backend plugin and check it")
          ->type_name("PATH")
          ->allow_extra_args(false);
  CLI::Option* junitOption =
      checkCommand->add_option("--junit", check.junit, "Write a JUnit XML report to FILE")
          ->type_name("FILE");
  checkCommand->add_flag("-v,--verbose", check.verbose, "Print GoogleTest's own output");
  CLI::Option* inProcessOption = checkCommand->add_flag(
      "--in-process", check.in_process,
      "Discover the backends in this process only, not first each in a separate "
      "process (a driver that crashes takes accel down)");
  CLI::Option* validateOption = checkCommand->add_flag(
      "--validate", check.validate,
      "Run the suite with the validation layer on in throw mode (docs/validation.md): "
      "a call that breaks the contract fails its case before the backend sees it");
  // --list loads and runs nothing: an option that chooses what to load or
  // where to report would be ignored, so together they are a usage error.
  checkCommand
      ->add_flag("--list", check.list,
                 "List the hook groups and conformance cases; load and check nothing")
      ->excludes(backendOption)
      ->excludes(pluginOption)
      ->excludes(junitOption)
      ->excludes(inProcessOption)
      ->excludes(validateOption);
  checkCommand->footer(
      std::string(kPluginSources) +
      " Exit status: 0 every backend passed; 1 a case failed or a backend did not start "
      "or "
      "initialise; 2 nothing to check or a usage error; 3 nothing failed but a backend "
      "has no device, so its device cases did not run (the last line names it). See "
      "docs/accel-tool.md and docs/conformance.md.");

  accel::tool::MemvizOptions memviz;
  CLI::App* memvizCommand = app.add_subcommand(
      "memviz", "Draw a memory snapshot (JSON or pickle) as a self-contained HTML page");
  memvizCommand->add_option("snapshot", memviz.snapshot, "Snapshot file (JSON or pickle)")
      ->required()
      ->type_name("SNAPSHOT");
  memvizCommand
      ->add_option("-o,--output", memviz.output,
                   "HTML file to write (default memory.html)")
      ->type_name("FILE");
  memvizCommand->add_option("--device", memviz.device,
                            "Device whose memory to draw (one the snapshot describes)");
  memvizCommand
      ->add_option("--max-input-size", memviz.max_input_size,
                   "Refuse larger input files (default 1GiB)")
      ->type_name("SIZE");
  memvizCommand->footer(
      "Loads no plugin. How to read the page: docs/memory.md. Exit status: 0 the page "
      "was written; 2 a usage error, a snapshot it cannot read or a FILE it cannot "
      "write.");

  accel::tool::MemreplayOptions memreplay;
  CLI::App* memreplayCommand = app.add_subcommand(
      "memreplay", "Replay an allocation trace through the caching allocator");
  memreplayCommand
      ->add_option("trace", memreplay.trace, "Trace file or snapshot (JSON or pickle)")
      ->required()
      ->type_name("TRACE");
  memreplayCommand
      ->add_option("--settings", memreplay.settings,
                   "Allocator settings, as ACCEL_ALLOC_CONF (key:value,...)")
      ->type_name("CONF");
  memreplayCommand
      ->add_option("--capacity", memreplay.capacity,
                   "Simulated device memory (default 80GiB)")
      ->type_name("SIZE");
  memreplayCommand->add_option("--device", memreplay.device,
                               "Which device trace of a snapshot to replay");
  memreplayCommand->add_flag("--json", memreplay.json, "Print the results as JSON");
  memreplayCommand
      ->add_option("--max-input-size", memreplay.max_input_size,
                   "Refuse larger input files (default 1GiB)")
      ->type_name("SIZE");
  memreplayCommand->footer(
      "Loads no plugin. The trace format and the figures printed: docs/memory.md. Exit "
      "status: 0 the trace was replayed (out-of-memory events in the replay are "
      "counted, not errors); 2 a usage error or a trace it cannot read.");

  accel::tool::TraceCommandOptions traceOptions;
  CLI::App* traceCommand = app.add_subcommand(
      "trace",
      "Summarise or draw a trace (ACCEL_TRACE, accel.profiler; Chrome trace JSON)");
  traceCommand->require_subcommand(1);
  CLI::App* traceSummaryCommand = traceCommand->add_subcommand(
      "summary", "Print the hooks by total time, the streams by busy time, memory peaks");
  CLI::App* traceViewCommand = traceCommand->add_subcommand(
      "view",
      "Draw the timeline (threads, streams, memory) as a self-contained HTML page");
  for (CLI::App* command : {traceSummaryCommand, traceViewCommand}) {
    command
        ->add_option("trace", traceOptions.trace, "Trace file (Chrome trace-event JSON)")
        ->required()
        ->type_name("TRACE");
    command
        ->add_option("--max-input-size", traceOptions.max_input_size,
                     "Refuse larger input files (default 1GiB)")
        ->type_name("SIZE");
  }
  traceViewCommand
      ->add_option("-o,--output", traceOptions.output,
                   "HTML file to write (default trace.html)")
      ->type_name("FILE");
  traceCommand->footer(
      "Loads no plugin. The format and how to read the page: docs/tracing.md. Exit "
      "status: "
      "0 done; 2 a usage error, a file that is not a trace or a FILE it cannot write.");

  CLI::App* versionCommand =
      app.add_subcommand("version", "Show the library and plugin API versions");
  versionCommand->footer(
      "Loads no plugin; the same as accel --version. Exit status: 0; 2 a usage error.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return reportParseError(app, e, argc, argv);
  }

  try {
    if (*infoCommand) return accel::tool::runInfo(info);
    if (*checkCommand) return accel::tool::runCheck(check);
    if (*versionCommand) return accel::tool::runVersion();
    if (*memvizCommand) return accel::tool::runMemviz(memviz);
    if (*memreplayCommand) return accel::tool::runMemreplay(memreplay);
    if (*traceSummaryCommand) return accel::tool::runTraceSummary(traceOptions);
    if (*traceViewCommand) return accel::tool::runTraceView(traceOptions);
  } catch (const accel::Error& e) {
    reportCommandError(app, e.message());
    return kUsageError;
  } catch (const std::exception& e) {
    reportCommandError(app, e.what());
    return kUsageError;
  }
  return kUsageError;
}
