// openreg's registration and configuration, as programs see them
// (accel/openreg/backend.h, accel/openreg/config.h).
#include <cstdlib>
#include <memory>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/linked_plugin.h"
#include "accel/openreg/backend.h"
#include "accel/openreg/config.h"
#include "plugin_calls.h"

// The plugin's entry under openreg's own name (plugin_entry.cpp), so that a
// program linking several plugins reaches openreg's.
extern "C" accel_status accel_openreg_negotiate(const accel_core_offer* offer,
                                                accel_plugin_answer* answer);

namespace accel::openreg {
DeviceType deviceType() {
  static const DeviceType type = registerDeviceType(kDeviceTypeName);
  return type;
}

// The plugin this program links, registered once (accel/linked_plugin.h).
LinkedPlugin& linkedPlugin() {
  static LinkedPlugin plugin{kDeviceTypeName, &accel_openreg_negotiate,
                             "accel::openreg::registerBackend"};
  return plugin;
}

AcceleratorHooks& registerBackend() { return linkedPlugin().hooks(); }

const Config& activeConfig() {
  api::ensureInitialized();
  // openreg's configuration is fixed once initialised: kept here.
  static const Config* active = [] {
    auto config = std::make_unique<Config>();
    api::check(extension::activeConfig(*config), "activeConfig");
    return config.release();  // never destroyed: see lifecycle
  }();
  return *active;
}

std::string pluginPath() { return linkedPlugin().path(); }

Config parseConfig(const EnvironmentLookup& lookup) {
  Config config;
  api::check(extension::parseConfig(lookup, config), "parseConfig");
  return config;
}

Config configFromEnvironment() {
  return parseConfig([](const char* name) { return std::getenv(name); });
}

namespace api {

AcceleratorHooks& ensureInitialized() {
  AcceleratorHooks& hooks = registerBackend();
  hooks.init();
  return hooks;
}

accel_stream pluginStream(Stream stream, std::string_view what) {
  return pluginStreamOf(stream, deviceType(), what);
}

DeviceIndex resolveDevice(DeviceIndex index) {
  return index == kCurrentDevice ? getHooks(deviceType()).getCurrentDevice() : index;
}

}  // namespace api
}  // namespace accel::openreg
