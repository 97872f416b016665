#include "check_reporter.h"

#include <sstream>

#include "accel/conformance.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks_table.h"
#include "accel/plugin.h"
#include "plugin_abi_text.h"

namespace accel::tool {
namespace {

// "low.CurrentDeviceIsPerThread" from "prefix/type/low" and the test name.
std::string caseLabel(const ::testing::TestInfo& info) {
  std::string suite = info.test_suite_name();
  std::size_t slash = suite.find_last_of('/');
  return (slash == std::string::npos ? suite : suite.substr(slash + 1)) + "." +
         info.name();
}

void printIndentedLines(std::ostream& out, const std::string& text, const char* indent) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) out << indent << line << '\n';
}

// " from openreg 0.1.0, plugin API 1.1 (speaks 1.0–1.1)": the plugin that
// registered `type` and the API it speaks; empty for a backend of no plugin.
std::string pluginSuffix(DeviceType type) {
  std::optional<PluginRecord> record = pluginForDeviceType(type);
  if (!record) return {};
  std::string name = record->plugin_name.empty()
                         ? record->path
                         : record->plugin_name + " " + record->plugin_version;
  std::string api = pluginApiPhrase(pluginAbiJson(*record));
  return " from " + name + (api.empty() ? "" : ", " + api);
}

}  // namespace

CheckReporter::Tally& CheckReporter::tallyFor(const std::string& backend) {
  for (auto& [name, tally] : tallies_) {
    if (name == backend) return tally;
  }
  tallies_.emplace_back(backend, Tally{});
  return tallies_.back().second;
}

void CheckReporter::OnTestStart(const ::testing::TestInfo& info) {
  std::lock_guard<std::mutex> lock(mutex_);
  failures_.clear();
  skipReason_.clear();
  std::optional<conformance::TestDescription> description =
      conformance::describeTest(info);
  std::string backend =
      description ? std::string(deviceTypeName(description->type)) : std::string("other");
  if (backend != currentBackend_) {
    currentBackend_ = backend;
    out_ << backend;
    if (description) {
      out_ << " (declares: " << getHooks(description->type).capabilities().str() << ")"
           << pluginSuffix(description->type);
    }
    out_ << '\n';
  }
}

void CheckReporter::OnTestPartResult(const ::testing::TestPartResult& result) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (result.skipped()) {
    // The reason is the first line; the rest is GoogleTest's trace of the case.
    std::string message = result.message();
    skipReason_ = message.substr(0, message.find('\n'));
    return;
  }
  if (!result.failed()) return;
  // The case's file as installed (share/doc/accelhooks/conformance/src/...,
  // see conformance/CMakeLists.txt), which the reader can open.
  std::string where = result.file_name() == nullptr
                          ? std::string()
                          : std::string(result.file_name()) + ":" +
                                std::to_string(result.line_number()) + ": ";
  failures_.push_back(where + result.message());
}

void CheckReporter::OnTestEnd(const ::testing::TestInfo& info) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<conformance::TestDescription> description =
      conformance::describeTest(info);
  Tally& tally = tallyFor(currentBackend_);
  std::string label = caseLabel(info);
  const ::testing::TestResult& result = *info.result();
  if (result.Failed()) {
    ++tally.failed;
    std::string hooks;
    std::string broken = "(unknown hook)";
    if (description) {
      for (HookId hook : description->testCase.hooks) {
        hooks += (hooks.empty() ? "" : ", ") + std::string(hookInfo(hook).name);
      }
      if (!description->testCase.hooks.empty())
        broken = hookInfo(description->testCase.hooks.front()).name;
    }
    // A case blames another hook when one it relies on failed (conformance_case.h).
    for (int i = 0; i < result.test_property_count(); ++i) {
      const ::testing::TestProperty& property = result.GetTestProperty(i);
      if (std::string(property.key()) == "broken_hook") broken = property.value();
    }
    out_ << "  FAIL  " << label << "  [hooks: " << hooks << "]\n";
    for (const std::string& failure : failures_)
      printIndentedLines(out_, failure, "        ");
    auto it = tally.brokenHooks.begin();
    while (it != tally.brokenHooks.end() && it->first != broken) ++it;
    if (it == tally.brokenHooks.end()) {
      tally.brokenHooks.emplace_back(broken, std::vector<std::string>{});
      it = tally.brokenHooks.end() - 1;
    }
    it->second.push_back(label);
  } else if (result.Skipped()) {
    ++tally.skipped;
    out_ << "  skip  " << label << ": " << skipReason_ << '\n';
  } else {
    ++tally.passed;
    out_ << "  pass  " << label;
    if (description &&
        !getHooks(description->type).supports(description->testCase.group)) {
      out_ << "  (group not declared: refused with NotSupported)";
    }
    out_ << '\n';
  }
  out_.flush();
}

void CheckReporter::OnTestProgramEnd(const ::testing::UnitTest&) {
  std::lock_guard<std::mutex> lock(mutex_);
  out_ << '\n';
  for (const auto& [backend, tally] : tallies_) {
    out_ << backend << ": " << tally.passed << " passed, " << tally.skipped
         << " skipped, " << tally.failed << " failed\n";
    for (const auto& [hook, cases] : tally.brokenHooks) {
      out_ << "  broken hook " << hook;
      if (std::optional<HookId> id = findHook(hook)) {
        out_ << ": fix or override " << hookInfo(*id).impl;
      }
      out_ << " (";
      for (std::size_t i = 0; i < cases.size(); ++i) out_ << (i ? ", " : "") << cases[i];
      out_ << ")\n";
    }
  }
  out_.flush();
}

std::vector<std::string> CheckReporter::failedBackends() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [backend, tally] : tallies_) {
    if (tally.failed > 0) out.push_back(backend);
  }
  return out;
}

}  // namespace accel::tool
