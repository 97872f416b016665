#include "accel/hooks_table.h"

#include <array>
#include <bitset>
#include <cstdio>
#include <mutex>

#include "accel/error.h"
#include "accel/plugin.h"
#include "refusing_hooks.h"
#include "registration_capture.h"

namespace accel {
namespace detail {
// Zero-initialised before any code runs, so lookups during static
// initialisation or destruction are safe.
std::atomic<AcceleratorHooks*> g_hooks_table[kHooksTableSize] = {};
}  // namespace detail

namespace {

std::atomic<AbsentBackendHint> g_absent_hint{nullptr};

struct TableState {
  // Guards the fields below and installs into the table. Never held while
  // user code (a factory) runs, so a factory may call anything in the core.
  std::mutex mutex;
  // One per slot: a factory runs under its slot's mutex only, so that a slow
  // driver factory for one type stalls nobody asking for another.
  std::array<std::mutex, detail::kHooksTableSize> creation;
  std::array<std::string, detail::kHooksTableSize> origins;
  std::array<std::string, detail::kHooksTableSize> factory_errors;
  std::vector<std::string> static_errors;
};

// Leaked on purpose: reached from static destructors and late plugins.
TableState& state() {
  static TableState* s = new TableState();
  return *s;
}

std::string registeredList() { return joinDeviceTypeNames(registeredHooksTypes()); }

// What getHooks returns for a type without a backend: benign probes, and an
// explanation for everything else.
class AbsentHooks final : public detail::RefusingHooks {
 public:
  explicit AbsentHooks(DeviceType type)
      : RefusingHooks(type, Capabilities{}, /*built=*/false, /*device_count=*/0) {}

  [[noreturn]] void failUnsupported(HookId hook) const override {
    std::string extra;
    if (AbsentBackendHint hint = g_absent_hint.load(std::memory_order_acquire)) {
      extra = hint(deviceType());
    }
    std::string factory_error;
    {
      std::lock_guard<std::mutex> lock(state().mutex);
      factory_error = state().factory_errors[static_cast<std::uint8_t>(deviceType())];
    }
    throw NotAvailable(detail::concat(
        hookInfo(hook).name, "(): no backend is registered for device type '", name(),
        "' (registered backends: ", registeredList(), ")",
        factory_error.empty()
            ? std::string()
            : detail::concat("; creating its hooks failed: ", factory_error),
        ". Load one with accel::loadBackend(\"/path/to/libaccel_", name(),
        ".so\"), list it in ACCEL_PLUGINS, or link the backend into the program",
        extra.empty() ? std::string() : detail::concat(". ", extra)));
  }
};

}  // namespace

AcceleratorHooks& absentHooks(DeviceType type) noexcept {
  // One per slot, built on first use and never destroyed (lifecycle rule).
  static AbsentHooks* absent = [] {
    void* memory = ::operator new(sizeof(AbsentHooks) * detail::kHooksTableSize);
    auto* table = static_cast<AbsentHooks*>(memory);
    for (int i = 0; i < detail::kHooksTableSize; ++i) {
      new (&table[i]) AbsentHooks(static_cast<DeviceType>(i));
    }
    return table;
  }();
  return absent[static_cast<std::uint8_t>(type)];
}

namespace {

// Slots whose factory is running on this thread: a factory that asks for its
// own type would otherwise wait for itself.
thread_local std::bitset<detail::kHooksTableSize> t_creating;

// Builds the hooks of `type` with its factory. Returns null and sets `error`
// when the factory fails or misbehaves.
std::unique_ptr<AcceleratorHooks> runFactory(DeviceType type, std::string_view name,
                                             std::string& error) noexcept {
  auto slot = static_cast<std::uint8_t>(type);
  t_creating.set(slot);
  std::unique_ptr<AcceleratorHooks> hooks;
  try {
    hooks = hooksRegistry().create(name);
    if (hooks == nullptr) {
      error = "the factory returned null";
    } else if (hooks->deviceType() != type) {
      error = detail::concat("the factory built hooks for '", hooks->name(), "' instead");
      hooks.reset();
    }
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "unknown exception";
  }
  t_creating.reset(slot);
  return hooks;
}

}  // namespace

AcceleratorHooks& detail::getHooksSlow(DeviceType type) noexcept {
  if (!isValidDeviceType(type)) return absentHooks(type);
  std::string_view name = deviceTypeName(type);
  if (!hooksRegistry().has(name)) return absentHooks(type);
  auto slot = static_cast<std::uint8_t>(type);
  TableState& s = state();
  if (t_creating.test(slot)) {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.factory_errors[slot] =
        "its factory looked up its own device type while building the hooks; a hooks "
        "constructor must not call getHooks() for its own type";
    return absentHooks(type);
  }
  std::lock_guard<std::mutex> creation(s.creation[slot]);
  if (AcceleratorHooks* hooks = g_hooks_table[slot].load(std::memory_order_acquire)) {
    return *hooks;  // another thread's factory run finished first
  }
  std::string error;
  std::unique_ptr<AcceleratorHooks> hooks = runFactory(type, name, error);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (hooks == nullptr) {
    s.factory_errors[slot] = std::move(error);
    return absentHooks(type);
  }
  s.origins[slot] = "factory registered for '" + std::string(name) + "'";
  s.factory_errors[slot].clear();
  AcceleratorHooks* raw = hooks.release();  // never destroyed
  g_hooks_table[slot].store(raw, std::memory_order_release);
  return *raw;
}

AcceleratorHooks& registerHooks(std::unique_ptr<AcceleratorHooks> hooks,
                                std::string origin) {
  ACCEL_CHECK(hooks != nullptr, InvalidArgument, "registerHooks(): null hooks object");
  DeviceType type = hooks->deviceType();
  ACCEL_CHECK(isValidDeviceType(type), InvalidArgument,
              "registerHooks(): device type id ", toIndex(type),
              " was never registered; call registerDeviceType(name) first");
  TableState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto slot = static_cast<std::uint8_t>(type);
  AcceleratorHooks* existing =
      detail::g_hooks_table[slot].load(std::memory_order_acquire);
  ACCEL_CHECK(
      existing == nullptr, DuplicateRegistration, "registerHooks(): hooks for '",
      deviceTypeName(type), "' are already registered (from ",
      s.origins[slot].empty() ? std::string("an unknown origin") : s.origins[slot],
      "); a device type has one backend: remove the duplicate registration or "
      "register the new backend under another device type name");
  if (origin.empty()) {
    std::string plugin = loadingPluginPath();
    origin = plugin.empty() ? std::string("registerHooks()") : "plugin " + plugin;
  }
  ACCEL_CHECK(
      !hooksRegistry().has(deviceTypeName(type)), DuplicateRegistration,
      "registerHooks(): '", deviceTypeName(type),
      "' already has a hooks factory "
      "(registered with ACCEL_REGISTER_HOOKS or registerHooksFactory); a device type "
      "has one backend: keep one of the two registrations");
  s.origins[slot] = std::move(origin);
  s.factory_errors[slot].clear();
  AcceleratorHooks* raw = hooks.release();  // never destroyed
  detail::g_hooks_table[slot].store(raw, std::memory_order_release);
  return *raw;
}

bool isHooksRegistered(DeviceType type) noexcept {
  if (detail::g_hooks_table[static_cast<std::uint8_t>(type)].load(
          std::memory_order_acquire)) {
    return true;
  }
  return isValidDeviceType(type) && hooksRegistry().has(deviceTypeName(type));
}

std::vector<DeviceType> registeredHooksTypes() {
  std::vector<DeviceType> out;
  for (DeviceType t : allDeviceTypes()) {
    if (isHooksRegistered(t)) out.push_back(t);
  }
  return out;
}

std::string hooksOrigin(DeviceType type) {
  TableState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const std::string& origin = s.origins[static_cast<std::uint8_t>(type)];
  if (!origin.empty()) return origin;
  if (isValidDeviceType(type) && hooksRegistry().has(deviceTypeName(type))) {
    return "factory registered for '" + std::string(deviceTypeName(type)) +
           "' (not created yet)";
  }
  return {};
}

void setAbsentBackendHint(AbsentBackendHint hint) noexcept {
  g_absent_hint.store(hint, std::memory_order_release);
}

HooksRegistry& hooksRegistry() {
  static HooksRegistry* registry = new HooksRegistry("hooks factory");
  return *registry;
}

void registerHooksFactory(std::string_view type_name,
                          std::function<std::unique_ptr<AcceleratorHooks>()> factory,
                          RegistryPriority priority, std::string help) {
  DeviceType type = registerDeviceType(type_name);
  TableState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto slot = static_cast<std::uint8_t>(type);
  // Once hooks exist a new factory would never run: say so instead.
  ACCEL_CHECK(
      detail::g_hooks_table[slot].load(std::memory_order_acquire) == nullptr,
      DuplicateRegistration, "registerHooksFactory(): hooks for '", type_name,
      "' already exist (from ", s.origins[slot],
      "); a factory registered now would never run. Register factories before the "
      "type is first used, and only one backend per device type");
  hooksRegistry().registerCreator(std::string(type_name), std::move(factory), priority,
                                  std::move(help));
}

namespace {
thread_local bool t_capturing = false;
thread_local std::vector<detail::PendingHooksRegistration>* t_captured = nullptr;
}  // namespace

void detail::beginHooksRegistrationCapture() noexcept {
  if (t_capturing) return;
  t_capturing = true;
  t_captured = nullptr;
}

std::vector<detail::PendingHooksRegistration>
detail::endHooksRegistrationCapture() noexcept {
  std::vector<PendingHooksRegistration> out;
  if (t_captured != nullptr) {
    out.swap(*t_captured);
    delete t_captured;
    t_captured = nullptr;
  }
  t_capturing = false;
  return out;
}

HooksRegistration::HooksRegistration(
    std::string_view type_name,
    std::function<std::unique_ptr<AcceleratorHooks>()> factory,
    RegistryPriority priority) noexcept {
  try {
    if (t_capturing) {
      if (t_captured == nullptr)
        t_captured = new std::vector<detail::PendingHooksRegistration>();
      t_captured->push_back({std::string(type_name), std::move(factory), priority});
      return;
    }
    registerHooksFactory(type_name, std::move(factory), priority);
  } catch (const std::exception& e) {
    std::string message = detail::concat("accelhooks: static registration of '",
                                         type_name, "' failed: ", e.what());
    std::fprintf(stderr, "%s\n", message.c_str());
    try {
      std::lock_guard<std::mutex> lock(state().mutex);
      state().static_errors.push_back(std::move(message));
    } catch (...) {
    }
  }
}

std::vector<std::string> staticRegistrationErrors() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().static_errors;
}

}  // namespace accel
