// Internal: what the hooks table and the context ask of the hook layers'
// registry (layer_registry.cpp), which puts a LayeredHooks in front of each
// backend while any layer is added (hook_layer.h).
//
// Thread-safety: thread-safe. Never throw.
#pragma once

#include "accel/device_type.h"
#include "accel/hooks.h"

namespace accel::detail {

// Called by the process hooks table right after it installed hooks for
// `type` (a registration, a commit, a factory run): while a layer is added,
// interposes the type's decorator. Takes the registry's lock, never the
// table's: the table may hold its own lock while calling.
void layerInstalledHooks(DeviceType type) noexcept;

// The backend's own hooks behind `hooks` when `hooks` is a decorator, else
// `hooks` (for the fork handler, which asks whether the backend started).
[[nodiscard]] const AcceleratorHooks& ownHooks(const AcceleratorHooks& hooks) noexcept;

}  // namespace accel::detail
