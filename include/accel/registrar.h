// Registrar: what one registering party (a plugin being loaded, a static
// registration, a program) registers, held until its owner commits it to a
// HooksTable as a whole or drops it as a whole.
//
// The plugin loader gives one to each plugin it loads (the C plugin ABI's
// register_backend service records into it, plugin.h); a program registering
// a backend itself uses one too:
//
//   accel::Registrar registrar("my program");
//   accel::DeviceType type = registrar.registerDeviceType("mydev");
//   registrar.registerHooks(std::make_unique<MyHooks>(type));   // may throw
//   registrar.commitTo(accel::processHooksTable());
//
// Nothing a registrar holds is visible to getHooks() until its owner commits
// it (the plugin loader does, after the version negotiation and after the
// plugin's register_backends succeeded). A registration that fails half-way
// leaves nothing registered. The registrar records its origin ("plugin
// /path/libaccel_mydev.so") and the device types it registers, so the loader
// knows exactly what a load registered and `accel info` can say where each
// backend came from.
//
// Device type *names* are the exception: registerDeviceType reserves the name
// process-wide at once (the hooks' constructor needs the id). A reserved name
// without hooks is an absent backend, as before the registration.
//
// Thread-safety: a registrar is used by one thread at a time (the registering
// party's); commit and drop belong to its owner. Lifetime: the registrar of a
// plugin's load is closed when its register_backends returns and kept
// (closed) by the loader, so that late use gets a clear error instead of
// touching freed memory.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accel/device_type.h"
#include "accel/export.h"
#include "accel/hooks.h"
#include "accel/registry.h"

namespace accel {

class HooksTable;

// Builds a backend's hooks on the first lookup of its type (see HooksTable).
using HooksFactory = std::function<std::unique_ptr<AcceleratorHooks>()>;

class ACCEL_API Registrar {
 public:
  // `origin` says where the registrations come from; it is shown in `accel
  // info` and in duplicate-registration errors.
  explicit Registrar(std::string origin);
  ~Registrar();
  Registrar(const Registrar&) = delete;
  Registrar& operator=(const Registrar&) = delete;

  // ---- for the registering party ----

  // Registers (or finds) the device type `name` and returns its id; see the
  // header comment for why names are reserved at once. Throws what
  // accel::registerDeviceType throws, and InvalidArgument once closed or for
  // "cpu": the host belongs to the core, and no registrar registers a backend
  // for it (docs/plugins.md). The other built-in names (cuda, hip, ...) are
  // for the backend of that kind of device.
  DeviceType registerDeviceType(std::string_view name);
  // Records `hooks` for hooks->deviceType() and returns it (valid for as long
  // as the hooks live: forever once committed to the process table).
  // Throws InvalidArgument for null hooks, an unregistered type id, the
  // CPU type, or a closed registrar; DuplicateRegistration when this registrar already
  // holds a backend for the type.
  AcceleratorHooks& registerHooks(std::unique_ptr<AcceleratorHooks> hooks);
  // Registers the type name and records a factory for it (run by the table
  // on the first lookup of the type). Same errors as registerHooks.
  void registerHooksFactory(std::string_view type_name, HooksFactory factory,
                            RegistryPriority priority = RegistryPriority::Default);

  // ---- for the owner ----

  [[nodiscard]] const std::string& origin() const noexcept { return origin_; }
  // The device types registered so far (hooks or factories), in order.
  [[nodiscard]] std::vector<DeviceType> types() const;
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  // Refuses every later registration with InvalidArgument naming the origin.
  // `why` ends "... after <why>", e.g. "its register_backends returned"; a
  // second close keeps the first reason.
  void close(std::string why) noexcept;
  // Installs everything into `table`, all or nothing, and closes. Throws
  // DuplicateRegistration (naming the type and the first origin) if the
  // table already serves one of the types; then nothing is installed.
  // Returns the committed types.
  std::vector<DeviceType> commitTo(HooksTable& table);
  // Forgets (destroys) everything held. Never throws.
  void drop() noexcept;

  // One recorded registration; read by HooksTable::commit.
  struct Entry {
    DeviceType type;
    std::unique_ptr<AcceleratorHooks> hooks;  // or:
    HooksFactory factory;
    RegistryPriority priority = RegistryPriority::Default;
  };

 private:
  friend class HooksTable;
  void requireOpen(std::string_view what) const;
  void requireNew(DeviceType type, std::string_view what) const;
  void requireBackendType(DeviceType type, std::string_view what) const;

  std::string origin_;
  std::vector<Entry> entries_;
  bool closed_ = false;
  std::string closed_why_;
};

}  // namespace accel
