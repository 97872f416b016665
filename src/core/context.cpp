#include "accel/context.h"

#include <pthread.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <bitset>
#include <exception>
#include <mutex>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/philox_generator.h"
#include "accel/plugin.h"
#include "refusing_hooks.h"

namespace accel {
namespace {

constexpr int kSlots = detail::kHooksTableSize;

// What a backend initialised before fork() turns into in the child: probes
// answer from values cached at init time (isAvailable is false: the device
// cannot be used), every other hook throws DeviceError explaining why. The
// table slot is swapped to this object in the child, so the fast path of
// getHooks pays nothing for fork safety.
class PoisonedHooks final : public detail::RefusingHooks {
 public:
  explicit PoisonedHooks(const AcceleratorHooks& real)
      : RefusingHooks(real.deviceType(), real.capabilities(), real.isBuilt(),
                      real.deviceCount()) {}

  [[noreturn]] void failUnsupported(HookId hook) const override {
    throw DeviceError(detail::concat(
        hookInfo(hook).name, "(): '", name(),
        "' was initialised before fork(); the child process (pid ", ::getpid(),
        ") cannot use it because the device's threads and state do not survive "
        "fork. Initialise '",
        name(),
        "' only after forking, or start workers with "
        "fork+exec (spawn) instead of fork"));
  }
};

struct TypeState {
  std::mutex init_mutex;
  std::atomic<bool> initialized{false};
  std::atomic<bool> initializing{false};  // init() running: poisoned too if we fork now
  std::atomic<bool> poisoned{false};
  AcceleratorHooks* poisoned_hooks = nullptr;  // prepared at init, used in a fork child
};

struct ContextState {
  std::array<TypeState, kSlots> types;
  std::atomic<int> chosen_accelerator{-1};
  std::once_flag atfork_once;
  std::once_flag cpu_generator_once;
  Generator cpu_generator;
};

ContextState& contextState() {
  static ContextState* s = new ContextState();  // never destroyed
  return *s;
}

// Runs in the child right after fork(), single-threaded: only stores.
void poisonInitialisedBackendsInChild() {
  ContextState& s = contextState();
  for (int i = 0; i < kSlots; ++i) {
    TypeState& t = s.types[i];
    bool started = t.initialized.load(std::memory_order_acquire) ||
                   t.initializing.load(std::memory_order_acquire);
    if (started && t.poisoned_hooks != nullptr) {
      t.poisoned.store(true, std::memory_order_release);
      // Not initialised in the child: manualSeed skips the type (forked
      // workers reseed themselves) and lazyInitDevice takes its slow path,
      // which reports the poisoning.
      t.initialized.store(false, std::memory_order_release);
      detail::g_hooks_table[i].store(t.poisoned_hooks, std::memory_order_release);
    }
  }
}

constexpr DeviceType kAcceleratorOrder[] = {DeviceType::CUDA, DeviceType::HIP,
                                            DeviceType::XPU,  DeviceType::MPS,
                                            DeviceType::MTIA, DeviceType::HPU};

}  // namespace

Context::Context() = default;

Context& globalContext() noexcept {
  static Context* context = new Context();  // never destroyed
  return *context;
}

bool isPoisonedByFork(DeviceType type) noexcept {
  return contextState().types[static_cast<std::uint8_t>(type)].poisoned.load(
      std::memory_order_acquire);
}

void Context::lazyInitDevice(DeviceType type) {
  TypeState& t = contextState().types[static_cast<std::uint8_t>(type)];
  if (t.initialized.load(std::memory_order_acquire)) [[likely]]
    return;
  if (t.poisoned.load(std::memory_order_acquire)) [[unlikely]] {
    // Before the lock: the parent may have held it when it forked. The
    // poisoned hooks refuse init() with the explanation.
    getHooks(type).init();
  }
  // Plugins named by the environment get their chance to register before the
  // first initialisation of any type (once per process; a no-op afterwards).
  (void)autoloadPlugins();
  auto slot = static_cast<std::uint8_t>(type);
  // init() that reaches lazyInitDevice for its own type would wait for itself.
  thread_local std::bitset<kSlots> t_initialising;
  ACCEL_CHECK(!t_initialising.test(slot), InvalidArgument, "lazyInitDevice('",
              deviceTypeName(type),
              "') was called from inside that backend's own init(); "
              "init() must not use the Context for its own device type");
  std::lock_guard<std::mutex> lock(t.init_mutex);
  if (t.initialized.load(std::memory_order_relaxed)) return;
  AcceleratorHooks& hooks = getHooks(type);
  // Prepared before init() runs, so that a fork during init() poisons the
  // child too instead of leaving it to wait on a lock held by a dead thread.
  if (t.poisoned_hooks == nullptr) t.poisoned_hooks = new PoisonedHooks(hooks);
  std::call_once(contextState().atfork_once, [] {
    ::pthread_atfork(nullptr, nullptr, &poisonInitialisedBackendsInChild);
  });
  t.initializing.store(true, std::memory_order_release);
  t_initialising.set(slot);
  try {
    hooks.init();
  } catch (...) {
    // `initialized` stays false: the next call retries.
    t_initialising.reset(slot);
    t.initializing.store(false, std::memory_order_release);
    throw;
  }
  t_initialising.reset(slot);
  t.initialized.store(true, std::memory_order_release);
  t.initializing.store(false, std::memory_order_release);
}

bool Context::isInitialized(DeviceType type) const noexcept {
  return contextState().types[static_cast<std::uint8_t>(type)].initialized.load(
      std::memory_order_acquire);
}

Generator Context::defaultGenerator(Device device) {
  if (device.type() == DeviceType::CPU) {
    ACCEL_CHECK(device.index() <= 0, InvalidArgument,
                "defaultGenerator(): there is one CPU "
                "generator; use 'cpu' or 'cpu:0', not '",
                device, "'");
    ContextState& s = contextState();
    std::call_once(s.cpu_generator_once, [&] {
      s.cpu_generator = makePhiloxGenerator(Device(DeviceType::CPU, 0));
    });
    return s.cpu_generator;
  }
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

Allocator& Context::getPinnedMemoryAllocator(std::optional<DeviceType> type) {
  if (!type) type = currentAccelerator();
  if (!type) {
    throw NotAvailable(detail::concat(
        "getPinnedMemoryAllocator(): no accelerator is available (registered backends: ",
        joinDeviceTypeNames(registeredHooksTypes()),
        "); pass a device type, or load a backend with devices: accel::loadBackend(path) "
        "or ACCEL_PLUGINS"));
  }
  lazyInitDevice(*type);
  return getHooks(*type).getPinnedMemoryAllocator();
}

std::optional<DeviceType> Context::currentAccelerator() const noexcept {
  int chosen = contextState().chosen_accelerator.load(std::memory_order_acquire);
  if (chosen >= 0) return static_cast<DeviceType>(chosen);
  for (DeviceType t : kAcceleratorOrder) {
    if (isHooksRegistered(t) && getHooks(t).isAvailable()) return t;
  }
  try {
    for (DeviceType t : allDeviceTypes()) {
      if (toIndex(t) < kNumBuiltinDeviceTypes) continue;
      if (isHooksRegistered(t) && getHooks(t).isAvailable()) return t;
    }
  } catch (...) {
    // allDeviceTypes() can only fail to allocate; no accelerator then.
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
