#include "accel/hooks_table.h"

#include <unistd.h>

#include <array>
#include <bitset>
#include <mutex>
#include <thread>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "hooks/fork_handlers.h"
#include "hooks/host_type.h"
#include "hooks/refusing_hooks.h"
#include "layers/layer_registry.h"

namespace accel {

namespace {
constexpr int kSlots = detail::kHooksTableSize;
}  // namespace

// What a table hands out for a type without a backend: benign probes, and an
// explanation for everything else.
class detail::AbsentHooks final : public detail::RefusingHooks {
 public:
  AbsentHooks(const HooksTable& table, DeviceType type, AbsenceExplainer explain)
      : RefusingHooks(type, Capabilities{}, /*built=*/false, /*device_count=*/0),
        table_(table),
        explain_(explain) {}

  [[noreturn]] void failUnsupported(HookId hook) const override {
    std::string registered = joinDeviceTypeNames(table_.registeredTypes());
    if (table_.isRegistered(deviceType())) {
      // A factory is there but could not build the hooks: loading the backend
      // again would not help, fixing the cause would.
      std::string cause = table_.creationError(deviceType());
      throw NotAvailable(
          detail::concat(hookInfo(hook).name, "(): the backend for device type '", name(),
                         "' is registered (from ", table_.registeredOrigin(deviceType()),
                         ") but creating its hooks failed: ",
                         cause.empty() ? std::string("no reason was recorded") : cause,
                         ". Fix the cause; the factory runs again on the next lookup"));
    }
    std::string extra = explain_ != nullptr ? explain_(deviceType()) : std::string();
    throw NotAvailable(detail::concat(
        hookInfo(hook).name, "(): no backend is registered for device type '", name(),
        "' (registered backends: ", registered, "). Load one with accel::loadBackend(\"",
        "/path/to/libaccel_", name(),
        ".so\"), list it in ACCEL_PLUGINS, or link the backend into the program",
        extra.empty() ? std::string() : detail::concat(". ", extra)));
  }

 private:
  const HooksTable& table_;
  AbsenceExplainer explain_;
};

// Named (not in an anonymous namespace): HooksTable::State, a type with
// linkage, holds them.
namespace detail {

// What a backend that had been discovered or had started initialising
// before fork() turns into in the child: probes answer from values kept
// before the fork (isAvailable is false: the device cannot be used), every
// other hook throws DeviceError explaining why. Swapping the slot keeps
// getHooks' fast path free of any fork check. Built without asking the
// backend for its devices or groups: its discovery may be running on another
// thread (or hung) while the fork happens.
class ForkStandInHooks final : public RefusingHooks {
 public:
  ForkStandInHooks(DeviceType type, Capabilities capabilities, bool built,
                   int device_count)
      : RefusingHooks(type, capabilities, built, device_count) {}

  [[noreturn]] void failUnsupported(HookId hook) const override {
    throwForkRefusal(concat(hookInfo(hook).name, "()"), name());
  }
};

struct Factory {
  HooksFactory make;
  RegistryPriority priority = RegistryPriority::Default;
};

}  // namespace detail

struct HooksTable::State {
  // Guards the fields below and installs into the table. Never held while
  // user code (a factory) runs, so a factory may call anything in the core.
  std::mutex mutex;
  // One per slot: a factory runs under its slot's mutex only, so that a slow
  // driver factory for one type stalls nobody asking for another.
  std::array<std::mutex, kSlots> creation;
  std::array<std::string, kSlots> origins;
  std::array<std::string, kSlots> creation_errors;
  std::array<detail::Factory, kSlots> factories;
  // Hooks this table owns; released (never destroyed) by the process table.
  std::array<std::unique_ptr<AcceleratorHooks>, kSlots> owned;
  std::array<std::unique_ptr<detail::AbsentHooks>, kSlots> absent;
  std::array<std::unique_ptr<detail::ForkStandInHooks>, kSlots> stand_ins;
  std::array<std::atomic<bool>, kSlots> poisoned{};
  // Slots whose factory is running, with the thread running it: a factory
  // that asks for its own type would otherwise wait for itself.
  std::array<std::atomic<std::thread::id>, kSlots> creating{};

  State(const HooksTable& table, AbsenceExplainer explain) {
    for (int i = 0; i < kSlots; ++i) {
      absent[i] = std::make_unique<detail::AbsentHooks>(table, static_cast<DeviceType>(i),
                                                        explain);
    }
  }
};

HooksTable::~HooksTable() {
  // The process table never gets here. A caller's table owns its hooks
  // (State::owned) and its stand-ins; deleting State destroys them.
  delete state_.load(std::memory_order_acquire);
}

HooksTable::State& HooksTable::state() const noexcept {
  State* s = state_.load(std::memory_order_acquire);
  if (s != nullptr) [[likely]]
    return *s;
  // Allocation failure here is fatal (noexcept): there is no table without it.
  auto* fresh = new State(*this, explain_absence_);
  if (state_.compare_exchange_strong(s, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread won; `s` holds its state
  return *s;
}

AcceleratorHooks& HooksTable::absent(DeviceType type) noexcept {
  return *state().absent[static_cast<std::uint8_t>(type)];
}

namespace {

// Builds the hooks of `type` with `make`. Returns null and sets `error` when
// the factory fails or misbehaves.
std::unique_ptr<AcceleratorHooks> runFactory(const HooksFactory& make, DeviceType type,
                                             std::string& error) noexcept {
  std::unique_ptr<AcceleratorHooks> hooks;
  try {
    hooks = make();
    if (hooks == nullptr) {
      error = "the factory returned null";
    } else if (hooks->deviceType() != type) {
      error = detail::concat("the factory built hooks for '", hooks->name(), "' instead");
      hooks.reset();
    }
  } catch (const Error& e) {
    error = e.message();
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "an exception not derived from std::exception";
  }
  return hooks;
}

}  // namespace

AcceleratorHooks& HooksTable::getSlow(DeviceType type) noexcept {
  State& s = state();
  auto slot = static_cast<std::uint8_t>(type);
  HooksFactory make;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    // Another thread's factory run may have installed the hooks (and cleared
    // the factory) between the caller's load of the slot and this lock: the
    // hooks, not the absent ones, are the answer then.
    if (AcceleratorHooks* hooks = slots_[slot].load(std::memory_order_acquire)) {
      return *hooks;
    }
    if (!s.factories[slot].make) return *s.absent[slot];
    if (s.creating[slot].load(std::memory_order_relaxed) == std::this_thread::get_id()) {
      s.creation_errors[slot] =
          "its factory looked up its own device type while building the hooks; a hooks "
          "constructor must not look up its own type";
      return *s.absent[slot];
    }
  }
  std::lock_guard<std::mutex> creation(s.creation[slot]);
  if (AcceleratorHooks* hooks = slots_[slot].load(std::memory_order_acquire)) {
    return *hooks;  // another thread's factory run finished first
  }
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    make = s.factories[slot].make;  // a copy: a replacement may arrive meanwhile
  }
  if (!make) return *s.absent[slot];
  s.creating[slot].store(std::this_thread::get_id(), std::memory_order_relaxed);
  std::string error;
  std::unique_ptr<AcceleratorHooks> hooks = runFactory(make, type, error);
  s.creating[slot].store(std::thread::id(), std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (hooks == nullptr) {
    s.creation_errors[slot] = std::move(error);
    return *s.absent[slot];
  }
  s.creation_errors[slot].clear();
  s.factories[slot] = detail::Factory{};
  AcceleratorHooks* raw = hooks.get();
  s.owned[slot] = std::move(hooks);
  slots_[slot].store(raw, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  if (this == &processHooksTable()) detail::layerInstalledHooks(type);
  return *slots_[slot].load(std::memory_order_acquire);
}

namespace {

std::string describeOrigin(const std::string& origin) {
  return origin.empty() ? std::string("an unknown origin") : origin;
}

}  // namespace

// Requires the state mutex. Throws unless `type` may take a new backend.
static void requireFree(const std::atomic<AcceleratorHooks*>& slot_hooks,
                        const std::string& origin, const detail::Factory& factory,
                        DeviceType type, std::string_view who) {
  ACCEL_CHECK(isValidDeviceType(type), InvalidArgument, who, ": device type id ",
              toIndex(type),
              " was never registered; call registerDeviceType(name) first");
  ACCEL_CHECK(slot_hooks.load(std::memory_order_acquire) == nullptr,
              DuplicateRegistration, who, ": hooks for '", deviceTypeName(type),
              "' are already registered (from ", describeOrigin(origin),
              "); a device type has one backend: remove the duplicate registration or "
              "register the new backend under another device type name");
  ACCEL_CHECK(!factory.make, DuplicateRegistration, who, ": '", deviceTypeName(type),
              "' already has a hooks factory (from ", describeOrigin(origin),
              "); a device type has one backend: keep one of the two registrations");
}

void HooksTable::install(DeviceType type, std::unique_ptr<AcceleratorHooks> hooks,
                         std::string origin) {
  State& s = state();
  auto slot = static_cast<std::uint8_t>(type);
  s.origins[slot] = std::move(origin);
  s.creation_errors[slot].clear();
  AcceleratorHooks* raw = hooks.get();
  s.owned[slot] = std::move(hooks);
  slots_[slot].store(raw, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  // While a hook layer is added, its decorator goes in front at once.
  if (this == &processHooksTable()) detail::layerInstalledHooks(type);
}

AcceleratorHooks& HooksTable::registerHooks(std::unique_ptr<AcceleratorHooks> hooks,
                                            std::string origin) {
  ACCEL_CHECK(hooks != nullptr, InvalidArgument, "registerHooks(): null hooks object");
  DeviceType type = hooks->deviceType();
  detail::refuseHostType(type, "registerHooks()", origin);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto slot = static_cast<std::uint8_t>(type);
  requireFree(slots_[slot], s.origins[slot], s.factories[slot], type, "registerHooks()");
  AcceleratorHooks& raw = *hooks;
  install(type, std::move(hooks), std::move(origin));
  return raw;
}

void HooksTable::registerHooksFactory(std::string_view type_name, HooksFactory factory,
                                      std::string origin, RegistryPriority priority) {
  ACCEL_CHECK(factory != nullptr, InvalidArgument, "registerHooksFactory('", type_name,
              "'): empty factory");
  DeviceType type = registerDeviceType(type_name);
  detail::refuseHostType(type, detail::concat("registerHooksFactory('", type_name, "')"),
                         origin);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto slot = static_cast<std::uint8_t>(type);
  detail::Factory& existing = s.factories[slot];
  if (existing.make && existing.priority != priority) {
    if (existing.priority > priority) return;  // the stronger one stays
    existing = detail::Factory{};              // replaced below
  }
  requireFree(slots_[slot], s.origins[slot], existing, type, "registerHooksFactory()");
  s.factories[slot] = detail::Factory{std::move(factory), priority};
  s.origins[slot] = std::move(origin);
  s.creation_errors[slot].clear();
  generation_.fetch_add(1, std::memory_order_release);
}

std::vector<DeviceType> HooksTable::commit(Registrar& registrar) {
  State& s = state();
  std::vector<DeviceType> types;
  std::lock_guard<std::mutex> lock(s.mutex);
  // Everything is checked before anything is installed: all or nothing. A
  // factory meets a factory not run yet as registerHooksFactory says: the
  // higher priority wins, a weaker newcomer is left out, equal is a duplicate.
  std::vector<bool> weaker(registrar.entries_.size(), false);
  for (std::size_t i = 0; i < registrar.entries_.size(); ++i) {
    const Registrar::Entry& e = registrar.entries_[i];
    auto slot = static_cast<std::uint8_t>(e.type);
    const detail::Factory& existing = s.factories[slot];
    if (e.factory && existing.make && existing.priority != e.priority &&
        slots_[slot].load(std::memory_order_acquire) == nullptr) {
      weaker[i] = existing.priority > e.priority;
      continue;
    }
    requireFree(slots_[slot], s.origins[slot], existing, e.type,
                detail::concat("registering '", deviceTypeName(e.type), "' from ",
                               registrar.origin()));
  }
  for (std::size_t i = 0; i < registrar.entries_.size(); ++i) {
    Registrar::Entry& e = registrar.entries_[i];
    if (weaker[i]) continue;
    auto slot = static_cast<std::uint8_t>(e.type);
    if (e.hooks) {
      install(e.type, std::move(e.hooks), registrar.origin());
    } else {
      s.factories[slot] = detail::Factory{std::move(e.factory), e.priority};
      s.origins[slot] = registrar.origin();
      s.creation_errors[slot].clear();
      generation_.fetch_add(1, std::memory_order_release);
    }
    types.push_back(e.type);
  }
  registrar.entries_.clear();
  return types;
}

bool HooksTable::isRegistered(DeviceType type) const noexcept {
  auto slot = static_cast<std::uint8_t>(type);
  if (slots_[slot].load(std::memory_order_acquire) != nullptr) return true;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return static_cast<bool>(s.factories[slot].make);
}

std::vector<DeviceType> HooksTable::registeredTypes() const {
  std::vector<DeviceType> out;
  for (int i = 0; i < kSlots; ++i) {
    auto type = static_cast<DeviceType>(i);
    if (isRegistered(type)) out.push_back(type);
  }
  return out;
}

std::string HooksTable::origin(DeviceType type) const {
  State& s = state();
  auto slot = static_cast<std::uint8_t>(type);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (slots_[slot].load(std::memory_order_acquire) != nullptr) return s.origins[slot];
  if (s.factories[slot].make) return s.origins[slot] + " (not created yet)";
  return {};
}

std::string HooksTable::registeredOrigin(DeviceType type) const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.origins[static_cast<std::uint8_t>(type)];
}

std::string HooksTable::creationError(DeviceType type) const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.creation_errors[static_cast<std::uint8_t>(type)];
}

void HooksTable::prepareForkStandIns(InitStartedProbe started) noexcept {
  State& s = state();
  for (int i = 0; i < kSlots; ++i) {
    AcceleratorHooks* hooks = slots_[i].load(std::memory_order_acquire);
    // A stand-in already in the slot: this process is itself a fork child
    // that installed it, and hands it out; it stays.
    if (hooks == nullptr || hooks == s.stand_ins[i].get() || !started(*hooks)) continue;
    // Built anew at every fork, from what the backend says now: an earlier
    // fork may have come while its discovery was still running (no devices
    // counted, provisional groups unsettled). The previous stand-in was
    // never handed out in this process.
    // Behind a hook layers' decorator, the backend's own figures.
    const AcceleratorHooks& own = detail::ownHooks(*hooks);
    try {
      s.stand_ins[i] = std::make_unique<detail::ForkStandInHooks>(
          own.deviceType(), own.capabilitiesForFork(detail::ForkKey{}), own.isBuilt(),
          own.lastDeviceCount(detail::ForkKey{}));
    } catch (...) {
      // No memory: the stand-in of an earlier fork, if any, serves (its values
      // may be stale); without one this backend stays unpoisoned in the
      // child. Nothing better can be done before a fork.
    }
  }
}

void HooksTable::poisonStartedBackends(InitStartedProbe started) noexcept {
  State* s = state_.load(std::memory_order_acquire);
  if (s == nullptr) return;  // nothing was ever registered
  for (int i = 0; i < kSlots; ++i) {
    AcceleratorHooks* hooks = slots_[i].load(std::memory_order_acquire);
    detail::ForkStandInHooks* stand_in = s->stand_ins[i].get();
    if (hooks == nullptr || hooks == stand_in) continue;
    if (!started(*hooks)) continue;
    s->poisoned[i].store(true, std::memory_order_release);
    // The real object refuses too: a reference to it kept from before the
    // fork bypasses the table (and without a stand-in, for want of memory
    // before the fork, the table keeps handing it out).
    hooks->refuseAfterFork(detail::ForkKey{});
    // Behind a hook layers' decorator, the backend refuses too: its own
    // objects (allocators kept across the fork) ask it.
    auto& own = const_cast<AcceleratorHooks&>(detail::ownHooks(*hooks));
    if (&own != hooks) own.refuseAfterFork(detail::ForkKey{});
    if (stand_in != nullptr) slots_[i].store(stand_in, std::memory_order_release);
  }
}

bool HooksTable::isPoisoned(DeviceType type) const noexcept {
  State* s = state_.load(std::memory_order_acquire);
  return s != nullptr &&
         s->poisoned[static_cast<std::uint8_t>(type)].load(std::memory_order_acquire);
}

// ---- the process table ----

AcceleratorHooks& registerHooks(std::unique_ptr<AcceleratorHooks> hooks,
                                std::string origin) {
  return processHooksTable().registerHooks(
      std::move(hooks), origin.empty() ? std::string("registerHooks()") : origin);
}

void registerHooksFactory(std::string_view type_name, HooksFactory factory,
                          RegistryPriority priority, std::string origin) {
  processHooksTable().registerHooksFactory(
      type_name, std::move(factory),
      origin.empty() ? std::string("registerHooksFactory()") : origin, priority);
}

bool isHooksRegistered(DeviceType type) noexcept {
  return processHooksTable().isRegistered(type);
}

std::vector<DeviceType> registeredHooksTypes() {
  return processHooksTable().registeredTypes();
}

std::string hooksOrigin(DeviceType type) { return processHooksTable().origin(type); }

AcceleratorHooks& absentHooks(DeviceType type) noexcept {
  return processHooksTable().absent(type);
}

namespace detail {

void refuseHostType(DeviceType type, std::string_view what, std::string_view origin) {
  ACCEL_CHECK(type != DeviceType::CPU, InvalidArgument, what, ": ", origin,
              " registers the device type 'cpu', which is the host and belongs to the "
              "core; no backend registers it. Register a name of your own (e.g. "
              "'mycpu') for a backend that computes on the host");
}

}  // namespace detail

}  // namespace accel
