#include "accel/context.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bitset>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks_table.h"
#include "accel/philox_generator.h"
#include "accel/plugin.h"
#include "hooks/fork_handlers.h"
#include "layers/layer_registry.h"

namespace accel {

// The ready pointers (context.h): constant-initialised and trivially
// destructible, so the fast paths read them with no guard of a
// function-local static, also during exit.
constinit std::atomic<AcceleratorHooks*>
    detail::g_context_ready[detail::kContextReadySlots] = {};

namespace {

constexpr int kSlots = detail::kHooksTableSize;
static_assert(kSlots == detail::kContextReadySlots);

// The registered types in the order currentAccelerator() tries them, for one
// generation of the hooks table. Immutable once published, so that the fast
// path reads it with no lock and allocates nothing.
struct AcceleratorOrder {
  std::uint64_t generation = 0;
  // ACCEL_ACCELERATOR's type when it is registered (current, available or
  // not, as after setCurrentAccelerator); -1 otherwise.
  int from_environment = -1;
  int count = 0;
  std::array<DeviceType, kSlots> types{};
};

struct ContextState {
  std::atomic<int> chosen_accelerator{-1};
  std::atomic<const AcceleratorOrder*> accelerator_order{nullptr};
  std::mutex order_mutex;  // serialises rebuilds; readers never take it
  // Every order ever published: a reader may still walk an old one, so none
  // is freed (one per registration, a few hundred bytes each).
  std::vector<std::unique_ptr<const AcceleratorOrder>> published_orders;
  std::once_flag cpu_generator_once;
  Generator cpu_generator;
};

ContextState& contextState() {
  static ContextState* s = new ContextState();  // never destroyed
  return *s;
}

// The fork handler poisons every backend that had been discovered (its
// driver may have started threads) or whose initialisation had begun (its
// state may be half-built in the child). Only loads: it runs in a fork child.
bool initializationStarted(const AcceleratorHooks& hooks) noexcept {
  // Behind a hook layers' decorator it is the backend that started or not.
  const AcceleratorHooks& own = detail::ownHooks(hooks);
  return own.discoveryStarted() || own.initializationStarted() ||
         hooks.discoveryStarted() || hooks.initializationStarted();
}

constexpr DeviceType kAcceleratorOrder[] = {DeviceType::CUDA, DeviceType::HIP,
                                            DeviceType::XPU,  DeviceType::MPS,
                                            DeviceType::MTIA, DeviceType::HPU};

// Simulated devices come after every real one, so that the reference backend
// a package bundles never hides a device a plugin brings.
constexpr std::string_view kSimulatedBackends[] = {"openreg"};

bool isSimulated(DeviceType type) noexcept {
  return std::find(std::begin(kSimulatedBackends), std::end(kSimulatedBackends),
                   deviceTypeName(type)) != std::end(kSimulatedBackends);
}

// ACCEL_ACCELERATOR, read once: the environment of a process does not change
// its choice half-way.
const std::string& acceleratorFromEnvironment() {
  static const std::string* value = [] {
    const char* v = std::getenv("ACCEL_ACCELERATOR");
    return new std::string(v != nullptr ? v : "");  // never destroyed
  }();
  return *value;
}

// Builds the order for the table's current generation: the built-in types in
// kAcceleratorOrder, then run-time types by name (not by registration order,
// which differs between hosts: the accel tool loads plugins by file name, the
// Python package registers openreg first), simulated ones last. Allocates.
std::unique_ptr<AcceleratorOrder> buildAcceleratorOrder(std::uint64_t generation) {
  auto order = std::make_unique<AcceleratorOrder>();
  order->generation = generation;
  const std::vector<DeviceType> registered = registeredHooksTypes();
  auto isRegistered = [&](DeviceType t) {
    return std::find(registered.begin(), registered.end(), t) != registered.end();
  };
  for (DeviceType t : kAcceleratorOrder) {
    if (isRegistered(t)) order->types[order->count++] = t;
  }
  std::vector<DeviceType> runtime;
  for (DeviceType t : registered) {
    if (toIndex(t) >= kNumBuiltinDeviceTypes) runtime.push_back(t);
  }
  std::stable_sort(runtime.begin(), runtime.end(), [](DeviceType a, DeviceType b) {
    const bool a_simulated = isSimulated(a);
    const bool b_simulated = isSimulated(b);
    if (a_simulated != b_simulated) return b_simulated;
    return deviceTypeName(a) < deviceTypeName(b);
  });
  for (DeviceType t : runtime) order->types[order->count++] = t;
  const std::string& wanted = acceleratorFromEnvironment();
  if (!wanted.empty()) {
    std::optional<DeviceType> t = findDeviceType(wanted);
    if (t && *t != DeviceType::CPU && isRegistered(*t))
      order->from_environment = toIndex(*t);
  }
  return order;
}

// The order for the hooks table's current generation; nullptr only if
// building one failed to allocate.
const AcceleratorOrder* currentAcceleratorOrder() noexcept {
  ContextState& s = contextState();
  const std::uint64_t generation = processHooksTable().generation();
  const AcceleratorOrder* order = s.accelerator_order.load(std::memory_order_acquire);
  if (order != nullptr && order->generation == generation) [[likely]]
    return order;
  try {
    std::lock_guard<std::mutex> lock(s.order_mutex);
    order = s.accelerator_order.load(std::memory_order_acquire);
    if (order != nullptr && order->generation == generation) return order;
    s.published_orders.push_back(buildAcceleratorOrder(generation));
    order = s.published_orders.back().get();
    s.accelerator_order.store(order, std::memory_order_release);
    return order;
  } catch (...) {
    return nullptr;  // out of memory: no accelerator
  }
}

}  // namespace

void detail::prepareBackendsForFork() noexcept {
  processHooksTable().prepareForkStandIns(&initializationStarted);
}

void detail::poisonBackendsInChild() noexcept {
  HooksTable& table = processHooksTable();
  table.poisonStartedBackends(&initializationStarted);
  for (int i = 0; i < kSlots; ++i) {
    if (!table.isPoisoned(static_cast<DeviceType>(i))) continue;
    // Not ready in the child: lazyInitDevice and defaultGenerator take their
    // slow path, where the stand-in's init() reports the poisoning.
    detail::g_context_ready[i].store(nullptr, std::memory_order_release);
  }
}

Context::Context() = default;

Context& globalContext() noexcept {
  static Context* context = new Context();  // never destroyed
  return *context;
}

bool isPoisonedByFork(DeviceType type) noexcept {
  return processHooksTable().isPoisoned(type);
}

void refuseIfPoisonedByFork(DeviceType type, std::string_view what) {
  if (isPoisonedByFork(type)) [[unlikely]]
    detail::throwForkRefusal(what, deviceTypeName(type));
}

void Context::lazyInitDevice(DeviceType type) {
  std::atomic<AcceleratorHooks*>& ready =
      detail::g_context_ready[static_cast<std::uint8_t>(type)];
  if (ready.load(std::memory_order_acquire) != nullptr) [[likely]]
    return;
  // Plugins named by the environment get their chance to register before the
  // first initialisation of any type (once per process; a no-op afterwards).
  // Only here: a backend's own hook calls never autoload.
  (void)autoloadPlugins();
  detail::installForkHandlers();
  AcceleratorHooks& hooks = getHooks(type);
  // Once per hooks object (the base class waits, retries after a throw,
  // refuses re-entry from initImpl). The absent hooks and a fork child's
  // stand-in throw here with their explanations.
  hooks.init();
  ready.store(&hooks, std::memory_order_release);
}

bool Context::isInitialized(DeviceType type) const noexcept {
  // Also true for a backend that initialised on its first hook call. Asks
  // installed hooks only: a query must not run a factory.
  const AcceleratorHooks* hooks = processHooksTable().installed(type);
  return hooks != nullptr && hooks->isInitialized();
}

const Generator& Context::defaultGeneratorSlow(Device device) {
  if (device.type() == DeviceType::CPU) {
    ACCEL_CHECK(device.index() <= 0, InvalidArgument,
                "defaultGenerator(): there is one CPU "
                "generator; use 'cpu' or 'cpu:0', not '",
                device, "'");
    ContextState& s = contextState();
    std::call_once(s.cpu_generator_once, [&] {
      s.cpu_generator =
          Generator::immortal(makePhiloxGenerator(Device(DeviceType::CPU, 0)));
    });
    return s.cpu_generator;
  }
  // Not ready when the inline fast path looked: initialise (a fork child's
  // stand-in for a poisoned type throws here with its explanation).
  lazyInitDevice(device.type());
  return getHooks(device.type()).getDefaultGenerator(device.index());
}

void Context::manualSeed(std::uint64_t seed) {
  std::exception_ptr first_error;
  try {
    defaultGenerator(Device(DeviceType::CPU, 0)).manualSeed(seed);
  } catch (...) {
    first_error = std::current_exception();
  }
  for (int i = 0; i < kSlots; ++i) {
    auto type = static_cast<DeviceType>(i);
    if (!isInitialized(type)) continue;
    AcceleratorHooks& hooks = getHooks(type);
    int count = hooks.deviceCount();
    for (int d = 0; d < count; ++d) {
      try {
        hooks.getDefaultGenerator(static_cast<DeviceIndex>(d)).manualSeed(seed);
      } catch (...) {
        if (!first_error) first_error = std::current_exception();
      }
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

Device Context::getDeviceFromPtr(const void* ptr, DeviceType type) {
  lazyInitDevice(type);
  return getHooks(type).getDeviceFromPtr(ptr);
}

bool Context::isPinnedPtr(const void* ptr,
                          std::optional<DeviceType> type) const noexcept {
  if (!type) type = currentAccelerator();
  if (!type || !isInitialized(*type)) return false;
  return getHooks(*type).isPinnedPtr(ptr);
}

namespace {

// "registered backends: a, b", and in a fork child which of them it cannot
// use because they were started before the fork (the likely reason that no
// accelerator is available there).
std::string registeredBackendsNote() {
  const std::vector<DeviceType> registered = registeredHooksTypes();
  std::vector<DeviceType> started_before_fork;
  for (DeviceType type : registered) {
    if (isPoisonedByFork(type)) started_before_fork.push_back(type);
  }
  std::string note = "registered backends: " + joinDeviceTypeNames(registered);
  if (!started_before_fork.empty()) {
    note += "; " + joinDeviceTypeNames(started_before_fork) +
            " were started before fork() and cannot be used in this child process";
  }
  return note;
}

}  // namespace

Allocator& Context::getPinnedMemoryAllocator(std::optional<DeviceType> type) {
  if (!type) type = currentAccelerator();
  if (!type) {
    throw NotAvailable(detail::concat(
        hookInfo(HookId::getPinnedMemoryAllocator).name,
        "(): no accelerator is available (", registeredBackendsNote(),
        "); pass a device type, or load a backend with devices: accel::loadBackend(path) "
        "or ACCEL_PLUGINS"));
  }
  lazyInitDevice(*type);
  return getHooks(*type).getPinnedMemoryAllocator();
}

std::optional<DeviceType> Context::currentAccelerator() const noexcept {
  int chosen = contextState().chosen_accelerator.load(std::memory_order_acquire);
  if (chosen >= 0) return static_cast<DeviceType>(chosen);
  // No allocation and no lock unless a registration happened since the last
  // call: the order is rebuilt per hooks-table generation, and availability,
  // which may change at any time (a device lost), is asked on every call.
  const AcceleratorOrder* order = currentAcceleratorOrder();
  if (order == nullptr) return std::nullopt;
  if (order->from_environment >= 0)
    return static_cast<DeviceType>(order->from_environment);
  for (int i = 0; i < order->count; ++i) {
    const DeviceType t = order->types[i];
    if (getHooks(t).isAvailable()) return t;
  }
  return std::nullopt;
}

void Context::setCurrentAccelerator(DeviceType type) {
  ACCEL_CHECK(type != DeviceType::CPU, InvalidArgument,
              "setCurrentAccelerator(): cpu is not an accelerator");
  ACCEL_CHECK(isHooksRegistered(type), InvalidArgument,
              "setCurrentAccelerator(): no backend "
              "is registered for '",
              deviceTypeName(type), "'; load its plugin first");
  contextState().chosen_accelerator.store(toIndex(type), std::memory_order_release);
}

void Context::clearCurrentAccelerator() noexcept {
  contextState().chosen_accelerator.store(-1, std::memory_order_release);
}

}  // namespace accel
