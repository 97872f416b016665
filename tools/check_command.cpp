#include "check_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "accel/conformance.h"
#include "accel/context.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks_table.h"
#include "accel/validation.h"
#include "check_reporter.h"
#include "isolated_discovery.h"
#include "plugin_setup.h"

namespace accel::tool {
namespace {

constexpr const char* kTestPrefix = "conformance";

// "'a', 'b'".
std::string quotedList(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "'" : ", '") + name + "'";
  return out;
}

std::string registeredNames() {
  std::string out;
  for (DeviceType t : registeredHooksTypes()) {
    out += (out.empty() ? "" : ", ") + std::string(deviceTypeName(t));
  }
  return out.empty() ? std::string("none") : out;
}

// The backends to check, or an error message.
std::vector<DeviceType> selectBackends(const CheckOptions& options,
                                       const PluginSetup& setup, std::string& error) {
  if (!options.backend.empty()) {
    std::optional<DeviceType> type = findDeviceType(options.backend);
    if (!type || !isHooksRegistered(*type)) {
      error = "no backend '" + options.backend +
              "' is registered (registered: " + registeredNames() +
              "). Load it with --plugin PATH, ACCEL_PLUGINS or ACCEL_PLUGIN_PATH; `accel "
              "info` "
              "shows which plugins were tried and why they did not load";
      return {};
    }
    return {*type};
  }
  std::vector<DeviceType> types;
  if (!options.plugins.empty()) {
    for (const PluginRecord& record : setup.explicitPlugins) {
      for (DeviceType t : record.registered) types.push_back(t);
    }
    if (types.empty()) error = "the --plugin paths registered no backend";
    return types;
  }
  types = registeredHooksTypes();
  if (types.empty()) {
    error =
        "no backend is registered. Load one with --plugin PATH, ACCEL_PLUGINS or "
        "ACCEL_PLUGIN_PATH, or name one with --backend";
  }
  return types;
}

// Why the JUnit report cannot be written to `path`, or empty when it can.
// GoogleTest creates the file's directories and then opens it only after
// every case ran, and aborts the process (SIGABRT) if that fails; asking
// first turns the mistake into a usage error before anything runs.
std::string junitFileProblem(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) {
    return "cannot create its directory " + parent.string() + ": " + error.message();
  }
  // "a" creates a missing file and keeps an existing one (GoogleTest
  // rewrites it at the end).
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr)
    return std::string("cannot open it for writing: ") + std::strerror(errno);
  std::fclose(file);
  return {};
}

}  // namespace

void printCaseList(std::ostream& out) {
  std::vector<conformance::CaseInfo> cases = conformance::conformanceCases();
  for (int g = 0; g < kNumHookGroups; ++g) {
    auto group = static_cast<HookGroup>(g);
    out << hookGroupName(group) << "\n  hooks:";
    for (const HookInfo& hook : kHookCatalogue) {
      if (hook.group == group) out << ' ' << hook.name;
    }
    out << '\n';
    for (const conformance::CaseInfo& c : cases) {
      if (c.group != group) continue;
      out << "  " << hookGroupName(group) << '.' << c.name << "  [hooks:";
      for (std::size_t i = 0; i < c.hooks.size(); ++i)
        out << (i ? ", " : " ") << hookInfo(c.hooks[i]).name;
      out << ']' << (c.needsDevice ? "" : "  (runs without a device)") << '\n';
    }
  }
  out << cases.size() << " cases in " << kNumHookGroups
      << " groups; a backend is checked against the groups it declares, and must refuse "
         "the others with NotSupported\n";
}

int runCheck(const CheckOptions& options) {
  if (options.list) {
    printCaseList(std::cout);
    return 0;
  }
  // Every case runs, whatever shard of its own cases a test runner gave the
  // process that started this one: GoogleTest reads sharding from the
  // environment only, and a sharded runner sets it for every process it
  // starts (its other GTEST_* variables still apply, docs/accel-tool.md).
  // Here, before any plugin loads: no other thread reads the environment yet.
  ::unsetenv("GTEST_TOTAL_SHARDS");
  ::unsetenv("GTEST_SHARD_INDEX");
  if (!options.junit.empty()) {
    if (std::string problem = junitFileProblem(options.junit); !problem.empty()) {
      std::cerr << "accel check: --junit " << options.junit << ": " << problem
                << "; give a writable file path\n";
      return 2;
    }
  }
  if (options.validate) {
    // Before any plugin loads, so that every backend is checked from its
    // first call. A check that asked for the layer must not pass without it.
    std::string problem;
    try {
      // The suite checks the caches' figures right after frees: the
      // quarantine holds none back (freed blocks are still remembered until
      // their address is reused, docs/validation.md).
      setValidationQuarantine(0, 0);
      setValidationMode(ValidationMode::Throw);
      if (validationMode() != ValidationMode::Throw) problem = "it did not turn on";
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) {
      std::cout
          << "accel check: FAILED: --validate: the validation layer failed to start ("
          << problem << "), so nothing was checked; exit status 1\n";
      return 1;
    }
  }
  PluginSetup setup = setUpPlugins(options.plugins, !options.in_process);
  // A --plugin path whose load crashed or hung in the separate process failed
  // to start, like a backend that cannot initialise (below), not a usage
  // error; the other paths are still checked.
  std::vector<std::string> init_failures;
  for (const auto& [path, problem] : setup.failedInSeparateProcess) {
    std::cerr << "accel check: " << path << " failed to start: " << problem << '\n';
    init_failures.push_back(path);
  }
  if (setup.errors.size() > setup.failedInSeparateProcess.size()) {
    for (const std::string& e : setup.errors) std::cerr << "accel check: " << e << '\n';
    return 2;
  }
  std::string error;
  std::vector<DeviceType> types = selectBackends(options, setup, error);
  if (types.empty() && init_failures.empty()) {
    std::cerr << "accel check: " << error << '\n';
    return 2;
  }

  // Every registered backend is discovered in a separate process first, the
  // ones not checked too: the suite's cases ask the other registered
  // backends (copies between backends), so one whose discovery crashes or
  // hangs would take the check of the others down with it.
  // name -> why its discovery failed there.
  std::map<std::string, std::string> unsafe;
  if (!options.in_process) {
    for (DeviceType t : registeredHooksTypes()) {
      std::string name(deviceTypeName(t));
      IsolatedDiscovery probe = discoverInChild(name, setup.pluginsForSeparateProcesses);
      if (!probe.safe && !probe.not_run) unsafe.emplace(name, probe.problem);
    }
  }

  // A backend that is registered but cannot initialise (a broken
  // configuration, a missing driver) fails the check: a CI gating on `accel
  // check` must not pass with it. The others are still checked. A backend
  // whose discovery failed in the separate process failed to start just the
  // same, and is not asked in this process.
  std::vector<DeviceType> ready;
  for (DeviceType t : types) {
    std::string name(deviceTypeName(t));
    if (auto it = unsafe.find(name); it != unsafe.end()) {
      std::cerr << "accel check: '" << name << "' failed to start: " << it->second
                << '\n';
      init_failures.push_back(name);
      continue;
    }
    try {
      globalContext().lazyInitDevice(t);
      ready.push_back(t);
    } catch (const std::exception& e) {
      const auto* error = dynamic_cast<const Error*>(&e);
      std::cerr << "accel check: '" << name
                << "' is registered but failed to initialise: "
                << (error != nullptr ? error->message() : std::string(e.what())) << '\n';
      init_failures.push_back(name);
    }
  }
  if (!unsafe.empty() && !ready.empty()) {
    std::vector<std::string> not_checked;
    for (DeviceType t : ready) not_checked.emplace_back(deviceTypeName(t));
    std::vector<std::string> broken;
    for (const auto& [name, problem] : unsafe) broken.push_back(name);
    std::cout
        << "accel check: " << quotedList(not_checked)
        << " not checked: the suite's cases also ask the other registered backends, "
           "and the discovery of "
        << quotedList(broken)
        << " failed in a separate process (see above), so asking it here could take "
           "the check down. Leave its plugin out (ACCEL_PLUGINS, ACCEL_PLUGIN_PATH) to "
           "check the others\n";
    std::cout << "accel check: "
              << (init_failures.empty() ? ""
                                        : "FAILED: " + quotedList(init_failures) + "; ")
              << "NOT CHECKED: " << quotedList(not_checked) << "; exit status 1\n";
    return 1;
  }
  if (ready.empty()) {
    std::cout << "accel check: FAILED: " << quotedList(init_failures)
              << " failed to start or to initialise (see above), so nothing was checked; "
                 "exit status 1\n";
    return 1;
  }
  types = ready;
  // A backend without a device (no driver, no GPU) can only be checked in
  // part: the cases that need a device are skipped. That is not "passed".
  // name -> why (the backend's showConfig(), which says why it is unavailable).
  std::vector<std::pair<std::string, std::string>> unavailable;
  for (DeviceType t : types) {
    AcceleratorHooks& hooks = getHooks(t);
    if (hooks.deviceCount() > 0) continue;
    std::string reason = "it reports no devices";
    if (hooks.supports(HookGroup::Device)) {
      try {
        reason = hooks.showConfig();
        while (!reason.empty() && reason.back() == '\n') reason.pop_back();
      } catch (const std::exception&) {
      }
    }
    unavailable.emplace_back(deviceTypeName(t), std::move(reason));
  }

  conformance::SuiteOptions suite;
  suite.prefix = kTestPrefix;
  conformance::registerConformanceTests(types, suite);
  std::string filter = "--gtest_filter=";
  for (std::size_t i = 0; i < types.size(); ++i) {
    filter += (i ? ":" : "") + conformance::testFilterFor(types[i], kTestPrefix);
  }
  std::vector<std::string> args = {"accel check", filter};
  if (!options.junit.empty()) args.push_back("--gtest_output=xml:" + options.junit);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  ::testing::InitGoogleTest(&argc, argv.data());

  auto* reporter = new CheckReporter(std::cout);  // owned by GoogleTest once appended
  ::testing::TestEventListeners& listeners =
      ::testing::UnitTest::GetInstance()->listeners();
  if (!options.verbose) delete listeners.Release(listeners.default_result_printer());
  listeners.Append(reporter);

  int status = RUN_ALL_TESTS();
  std::vector<std::string> failed = reporter->failedBackends();
  if (!failed.empty()) {
    std::cout << "accel check: FAILED: " << quotedList(failed)
              << " broke the hooks contract; see the broken hooks above and "
                 "docs/conformance.md\n";
  }
  if (!init_failures.empty()) {
    std::cout << "accel check: FAILED: " << quotedList(init_failures)
              << " failed to start or to initialise (see the error above)\n";
  }
  // Why each backend without a device has none, before the last line.
  for (const auto& [name, reason] : unavailable) {
    std::cout << "  " << name << " has no device: ";
    for (char c : reason) std::cout << c << (c == '\n' ? "    " : "");
    std::cout << '\n';
  }
  if (!options.junit.empty()) std::cout << "JUnit report: " << options.junit << '\n';
  if (options.validate) {
    const std::uint64_t violations = validationViolations();
    std::cout << "accel check: validation layer on (throw mode): " << violations
              << " violation(s) reported"
              << (violations != 0 ? "; each failed its case (see above)" : "") << '\n';
  }

  // The last line names every backend asked for, by outcome, and the exit
  // status, so that a log's tail says what a CI gate saw.
  std::vector<std::string> passed;
  std::vector<std::string> not_checked;
  for (DeviceType t : types) {
    std::string name(deviceTypeName(t));
    if (std::find(failed.begin(), failed.end(), name) != failed.end()) continue;
    bool without_device =
        std::any_of(unavailable.begin(), unavailable.end(),
                    [&](const auto& entry) { return entry.first == name; });
    (without_device ? not_checked : passed).push_back(name);
  }
  int exit_status = 0;
  if (status != 0 || !failed.empty() || !init_failures.empty()) {
    exit_status = 1;
  } else if (!not_checked.empty()) {
    exit_status = 3;
  }
  std::vector<std::string> failed_all = failed;
  failed_all.insert(failed_all.end(), init_failures.begin(), init_failures.end());
  std::vector<std::string> parts;
  if (!failed_all.empty()) parts.push_back("FAILED: " + quotedList(failed_all));
  if (exit_status == 1 && failed_all.empty()) parts.push_back("FAILED (see above)");
  if (!passed.empty()) parts.push_back("passed: " + quotedList(passed));
  if (!not_checked.empty()) {
    parts.push_back("NOT CHECKED on a device: " + quotedList(not_checked) +
                    " (no device here: only the cases that need none ran" +
                    (exit_status == 3 ? ", and passed" : "") + ")");
  }
  std::cout << "accel check: ";
  for (std::size_t i = 0; i < parts.size(); ++i) std::cout << (i ? "; " : "") << parts[i];
  std::cout << "; exit status " << exit_status << '\n';
  return exit_status;
}

}  // namespace accel::tool
