// The plugin report: what every load attempt did, in words.
#include "plugins/plugin_report.h"

#include <cstdio>
#include <mutex>
#include <set>

#include "accel/error.h"
#include "hooks/enum_names.h"

namespace accel {
namespace {

struct PluginAttempts {
  std::mutex mutex;
  std::vector<PluginRecord> records;
  std::set<std::string> warned;
};

// Leaked on purpose: absent-backend errors may be raised during static
// destruction.
PluginAttempts& pluginAttempts() {
  static auto* r = new PluginAttempts();
  return *r;
}

std::string baseName(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

namespace detail {

void recordPluginAttempt(const PluginRecord& record) {
  std::lock_guard<std::mutex> lock(pluginAttempts().mutex);
  pluginAttempts().records.push_back(record);
}

void warnOnce(const std::string& key, const std::string& message) noexcept {
  try {
    {
      std::lock_guard<std::mutex> lock(pluginAttempts().mutex);
      if (!pluginAttempts().warned.insert(key).second) return;
    }
    std::fprintf(stderr, "accelhooks: %s\n", message.c_str());
  } catch (...) {
  }
}

std::string typeList(const std::vector<DeviceType>& types) {
  return joinDeviceTypeNames(types, "");
}

std::string explainAbsentBackend(DeviceType type) noexcept {
  try {
    std::string name(deviceTypeName(type));
    std::string expected_file = concat(kPluginFilePrefix, name, kPluginFileSuffix);
    std::vector<PluginRecord> records = pluginReport();
    std::string out;
    std::size_t other_failures = 0;
    // A file tried twice is explained once, by its latest try.
    std::set<std::string> seen;
    for (auto it = records.rbegin(); it != records.rend(); ++it) {
      const PluginRecord& r = *it;
      if (!seen.insert(r.path).second || pluginStatusIsSuccess(r.status)) continue;
      if (r.plugin_name == name || baseName(r.path) == expected_file) {
        out += concat(
            out.empty() ? "" : " ",
            "A plugin that may provide it did not load: ", describePluginRecord(r), ".");
      } else {
        ++other_failures;
      }
    }
    if (other_failures > 0) {
      out += concat(out.empty() ? "" : " ", other_failures,
                    " other plugin load(s) failed; see accel::pluginReport() or "
                    "`accel info`.");
    }
    AutoloadState state = autoloadState();
    if (state == AutoloadState::Disabled || state == AutoloadState::IgnoredSecure) {
      out += concat(out.empty() ? "" : " ", "Plugin autoload: ", autoloadStateName(state),
                    ".");
    }
    if (!out.empty() && out.back() == '.')
      out.pop_back();  // the caller ends the sentence
    return out;
  } catch (...) {
    return {};
  }
}

}  // namespace detail

namespace {

constexpr detail::EnumNames<PluginStatus::AlreadyLoaded> kPluginStatusNames{
    "loaded",           "not found",   "refused",   "open failed", "not a plugin",
    "version mismatch", "init failed", "duplicate", "no devices",  "already loaded"};

}  // namespace

std::string_view pluginStatusName(PluginStatus status) noexcept {
  return kPluginStatusNames[status];
}

bool pluginStatusIsSuccess(PluginStatus status) noexcept {
  return status == PluginStatus::Loaded || status == PluginStatus::NoDevices ||
         status == PluginStatus::AlreadyLoaded;
}

std::string describePluginRecord(const PluginRecord& record) {
  std::string out = record.path;
  if (!record.plugin_name.empty()) {
    out +=
        detail::concat(" (", record.plugin_name, record.plugin_version.empty() ? "" : " ",
                       record.plugin_version, ")");
  }
  out += detail::concat(": ", pluginStatusName(record.status));
  if (!record.detail.empty()) out += detail::concat(": ", record.detail);
  if (!record.registered.empty())
    out += detail::concat(" [registers ", detail::typeList(record.registered), "]");
  return out;
}

PluginLoadError::PluginLoadError(PluginRecord record, std::string message,
                                 std::source_location where)
    : NotAvailable(std::move(message), where), record_(std::move(record)) {}

PluginLoadError::~PluginLoadError() = default;

std::vector<PluginRecord> pluginReport() {
  std::lock_guard<std::mutex> lock(pluginAttempts().mutex);
  return pluginAttempts().records;
}

std::optional<PluginRecord> pluginForDeviceType(DeviceType type) {
  std::lock_guard<std::mutex> lock(pluginAttempts().mutex);
  for (const PluginRecord& r : pluginAttempts().records) {
    if (r.status != PluginStatus::Loaded && r.status != PluginStatus::NoDevices) continue;
    for (DeviceType t : r.registered) {
      if (t == type) return r;
    }
  }
  return std::nullopt;
}

}  // namespace accel
