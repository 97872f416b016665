#include "accel/registrar.h"

#include <algorithm>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "hooks/host_type.h"

namespace accel {

Registrar::Registrar(std::string origin) : origin_(std::move(origin)) {}

Registrar::~Registrar() = default;

void Registrar::requireOpen(std::string_view what) const {
  ACCEL_CHECK(!closed_, InvalidArgument, what, ": the registrar of ", origin_,
              " was used after ", closed_why_,
              "; register everything before the registrar is committed or closed");
}

void Registrar::requireNew(DeviceType type, std::string_view what) const {
  bool held = std::any_of(entries_.begin(), entries_.end(),
                          [&](const Entry& e) { return e.type == type; });
  ACCEL_CHECK(!held, DuplicateRegistration, what, ": ", origin_, " registers '",
              deviceTypeName(type),
              "' twice; a device type has one backend: register it once");
}

void Registrar::requireBackendType(DeviceType type, std::string_view what) const {
  // The other built-in names are accelerator kinds, each for the one backend
  // of that kind (the CUDA backend registers "cuda"; DuplicateRegistration
  // keeps it one).
  detail::refuseHostType(type, what, origin_);
}

DeviceType Registrar::registerDeviceType(std::string_view name) {
  const std::string what = detail::concat("registerDeviceType('", name, "')");
  requireOpen(what);
  const DeviceType type = accel::registerDeviceType(name);
  requireBackendType(type, what);
  return type;
}

AcceleratorHooks& Registrar::registerHooks(std::unique_ptr<AcceleratorHooks> hooks) {
  requireOpen("registerHooks()");
  ACCEL_CHECK(hooks != nullptr, InvalidArgument, "registerHooks(): null hooks object (",
              origin_, ")");
  DeviceType type = hooks->deviceType();
  ACCEL_CHECK(isValidDeviceType(type), InvalidArgument,
              "registerHooks(): device type id ", toIndex(type),
              " was never registered; call registerDeviceType(name) first (", origin_,
              ")");
  requireBackendType(type, "registerHooks()");
  requireNew(type, "registerHooks()");
  AcceleratorHooks& raw = *hooks;
  entries_.push_back(Entry{type, std::move(hooks), {}, RegistryPriority::Default});
  return raw;
}

void Registrar::registerHooksFactory(std::string_view type_name, HooksFactory factory,
                                     RegistryPriority priority) {
  std::string what = detail::concat("registerHooksFactory('", type_name, "')");
  requireOpen(what);
  ACCEL_CHECK(factory != nullptr, InvalidArgument, what, ": empty factory (", origin_,
              ")");
  DeviceType type = accel::registerDeviceType(type_name);
  requireBackendType(type, what);
  requireNew(type, what);
  entries_.push_back(Entry{type, nullptr, std::move(factory), priority});
}

std::vector<DeviceType> Registrar::types() const {
  std::vector<DeviceType> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(e.type);
  return out;
}

void Registrar::close(std::string why) noexcept {
  if (closed_) return;  // the first reason is the one a late user needs
  closed_ = true;
  closed_why_ = std::move(why);
}

std::vector<DeviceType> Registrar::commitTo(HooksTable& table) {
  std::vector<DeviceType> types = table.commit(*this);
  close("it was committed");
  return types;
}

void Registrar::drop() noexcept { entries_.clear(); }

}  // namespace accel
