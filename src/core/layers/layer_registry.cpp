// The hook layers' registry: the added layers, and one decorator per device
// type interposed in the process hooks table and the context's ready slots
// while any layer is added (hook_layer.h, docs/design-notes.md "Layers").
#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "accel/context.h"
#include "accel/hooks_table.h"
#include "layers/hook_layer.h"
#include "layers/layer_clock.h"
#include "layers/layer_registry.h"
#include "layers/layer_settings.h"
#include "layers/layered_hooks.h"
#include "layers/validation/validation_layer.h"

namespace accel::detail {

constinit std::atomic<const LayerList*> g_current_layers{nullptr};

const memory::detail::TraceClock g_layer_clock;

namespace {

constexpr int kSlots = kHooksTableSize;

struct Registry {
  std::mutex mutex;  // guards everything but g_current_layers
  std::vector<HookLayer*> layers;
  // Every snapshot published: a caller may still walk an old one.
  std::vector<std::unique_ptr<const LayerList>> published;
  // The decorators (g_decorators), owned: never destroyed.
  std::vector<std::unique_ptr<LayeredHooks>> owned;
};

// One decorator per type, made when first needed, reused after, never
// destroyed (a thread may still be inside one taken out of the path).
// Constant-initialised, apart from the registry: ownHooks reads it in a
// fork child, where nothing may be allocated.
constinit std::atomic<LayeredHooks*> g_decorators[kSlots] = {};

Registry& registry() noexcept {
  static Registry* r = new Registry();  // never destroyed: hooks run during exit
  return *r;
}

// Publishes r.layers as the snapshot the decorators read. Requires r.mutex.
void publish(Registry& r) {
  const bool wants_times =
      std::any_of(r.layers.begin(), r.layers.end(),
                  [](const HookLayer* l) { return l->wantsTimes(); });
  auto keeper = std::find_if(r.layers.begin(), r.layers.end(),
                             [](const HookLayer* l) { return l->keepsBlockNotes(); });
  auto* validation_alone =
      r.layers.size() == 1 ? dynamic_cast<ValidationLayer*>(r.layers.front()) : nullptr;
  r.published.push_back(std::make_unique<const LayerList>(
      LayerList{r.layers, wants_times, keeper != r.layers.end() ? *keeper : nullptr,
                validation_alone}));
  g_current_layers.store(r.published.back().get(), std::memory_order_release);
}

// The decorator of `backend`'s type, made on first need. Requires r.mutex.
LayeredHooks& decoratorFor(Registry& r, AcceleratorHooks& backend) {
  const auto slot = static_cast<std::uint8_t>(backend.deviceType());
  if (LayeredHooks* made = g_decorators[slot].load(std::memory_order_acquire))
    return *made;
  r.owned.push_back(std::make_unique<LayeredHooks>(backend));
  g_decorators[slot].store(r.owned.back().get(), std::memory_order_release);
  return *r.owned.back();
}

// Puts the decorator in front of the installed hooks of `type`, in the table
// and (when the context made the type ready) in its ready slot. Requires
// r.mutex. Returns the decorator when it was put in front now.
LayeredHooks* interpose(Registry& r, DeviceType type) {
  HooksTable& table = processHooksTable();
  AcceleratorHooks* installed = table.installed(type);
  if (installed == nullptr || table.isPoisoned(type)) return nullptr;
  const auto slot = static_cast<std::uint8_t>(type);
  if (installed == g_decorators[slot].load(std::memory_order_acquire)) return nullptr;
  LayeredHooks& decorator = decoratorFor(r, *installed);
  if (&decorator.inner() != installed) return nullptr;  // never: one backend per type
  // The decorator starts as far as its backend got, so that isInitialized
  // and the fork handler see it alike (init() forwards to the backend's,
  // which returns at once).
  if (installed->isInitialized()) {
    try {
      decorator.init();
    } catch (...) {
      // A layer refused the init call: the decorator initialises later.
    }
  }
  if (!table.swapInstalled(type, installed, &decorator)) return nullptr;
  AcceleratorHooks* expected = installed;
  g_context_ready[slot].compare_exchange_strong(expected, &decorator,
                                                std::memory_order_acq_rel);
  return &decorator;
}

// Takes the decorator of `type` out of the path. Requires r.mutex.
void withdraw(Registry& r, int slot) noexcept {
  LayeredHooks* decorator = g_decorators[slot].load(std::memory_order_acquire);
  if (decorator == nullptr) return;
  const auto type = static_cast<DeviceType>(slot);
  (void)processHooksTable().swapInstalled(type, decorator, &decorator->inner());
  AcceleratorHooks* expected = decorator;
  g_context_ready[slot].compare_exchange_strong(expected, &decorator->inner(),
                                                std::memory_order_acq_rel);
}

}  // namespace

void addHookLayer(HookLayer& layer) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (std::find(r.layers.begin(), r.layers.end(), &layer) != r.layers.end()) return;
  r.layers.push_back(&layer);
  try {
    publish(r);
  } catch (...) {
    r.layers.pop_back();
    throw;
  }
  if (r.layers.size() > 1) return;  // the decorators are in front already
  for (int slot = 0; slot < kSlots; ++slot)
    (void)interpose(r, static_cast<DeviceType>(slot));
}

void removeHookLayer(HookLayer& layer) noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto found = std::find(r.layers.begin(), r.layers.end(), &layer);
  if (found == r.layers.end()) return;
  r.layers.erase(found);
  try {
    publish(r);
  } catch (...) {
    // No memory for a new snapshot: publish none. The decorators below leave
    // the path when none is left; otherwise the old snapshot, which still
    // names the layer, stays current until the next change.
    if (!r.layers.empty()) return;
    g_current_layers.store(nullptr, std::memory_order_release);
  }
  if (!r.layers.empty()) return;
  for (int slot = 0; slot < kSlots; ++slot) withdraw(r, slot);
}

AcceleratorHooks* unlayeredHooks(DeviceType type) noexcept {
  AcceleratorHooks* installed = processHooksTable().installed(type);
  if (installed == nullptr) return nullptr;
  return const_cast<AcceleratorHooks*>(&ownHooks(*installed));
}

void layerInstalledHooks(DeviceType type) noexcept {
  startEnvironmentLayers();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.layers.empty()) return;
  try {
    (void)interpose(r, type);
  } catch (...) {
    // No memory for the decorator: the backend serves unlayered.
  }
}

const AcceleratorHooks& ownHooks(const AcceleratorHooks& hooks) noexcept {
  const auto slot = static_cast<std::uint8_t>(hooks.deviceType());
  const LayeredHooks* decorator = g_decorators[slot].load(std::memory_order_acquire);
  if (decorator != nullptr && decorator == &hooks) return decorator->inner();
  return hooks;
}

}  // namespace accel::detail
