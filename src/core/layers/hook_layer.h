// Hook layers: code that sees every hook call of every backend before the
// backend does (validation, tracing), interposed only while one is added.
//
// A layer implements HookLayer and is added with addHookLayer(). From then on
// every backend of the process hooks table, and each one registered later,
// is served through a LayeredHooks decorator (layered_hooks.h) that calls
// each added layer's before() and after() around the backend's hook, and
// allocated() / freed() around the allocations of its device and pinned
// allocators. When the last layer is removed the decorators leave the call
// path (getHooks and the context's ready slots point at the backends again):
// with no layer added, nothing of this costs anything.
//
//   class CountingLayer final : public accel::detail::HookLayer {
//     void before(const HookCall& call) override { ++counts_[size_t(call.hook)]; }
//     void after(const HookCall&, bool) noexcept override {}
//   };
//   static CountingLayer layer;   // must outlive its registration
//   accel::detail::addHookLayer(layer);
//
// What a layer sees of a call is what the public hook was given, after the
// core's own checks (hooks.h) passed: a call the core refuses never reaches
// the layers. The C plugin tables are the second point where layers sit
// (plugins/c_table_layer.h): what a C plugin itself is asked, and answers.
//
// Thread-safety: addHookLayer and removeHookLayer are thread-safe and may
// race with hook calls on other threads: a call that began before a layer
// was added or removed may or may not reach it. Layers' callbacks run on the
// calling thread, concurrently from many threads: a layer guards its state.
// Lifetime: a layer must outlive its registration and every call in flight
// when it is removed; decorators are never destroyed (docs/lifecycle.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "accel/device.h"
#include "accel/device_type.h"
#include "accel/export.h"
#include "accel/graph.h"
#include "accel/hook_catalogue.h"
#include "accel/stream.h"
#include "layers/block_note.h"

namespace accel {
class AcceleratorHooks;
}  // namespace accel

namespace accel::detail {

// One hook call as the layers see it. Fields the hook has no argument for
// keep their defaults.
struct HookCall {
  HookId hook;                 // hookInfo(hook).name for its name
  DeviceType type;             // the backend's device type
  AcceleratorHooks* inner;     // the backend's own hooks (for a layer that must
                               // enqueue work of its own, e.g. timing events)
  int device = -1;             // the device index the call names; -1: none / current
  StreamId stream = -1;        // the stream the call names (on `device`), -1 none
  std::uint64_t object = 0;    // event / graph id the call names, 0 none
  std::uint64_t object2 = 0;   // a second one (elapsedTime's end event), 0 none
  const void* ptr = nullptr;   // pointer argument (copy destination, queried pointer)
  const void* ptr2 = nullptr;  // second pointer (copy source)
  std::size_t bytes = 0;       // size argument (bytes of a copy, elements of a fill)
  int device2 = -1;            // a second device (fillRandom's generator), -1 none
  CaptureMode capture_mode = CaptureMode::Global;  // graphCaptureBegin's mode
  std::int64_t begin_ticks = 0;  // when the call began (layer_clock.h's ticks)
  // Set before after(): the id the call returned (createEvent's event,
  // graphCreate's graph, getNewStream's / getCurrentStream's stream id); 0
  // when it returns none or failed.
  std::uint64_t result = 0;
};

class HookLayer {
 public:
  virtual ~HookLayer() = default;
  // Before the backend sees the call; may throw (validation's throw mode):
  // the backend is then not called, and the layers whose before() ran get
  // after(call, true).
  virtual void before(const HookCall& call) = 0;
  // After it returned (failed: it threw). Never throws.
  virtual void after(const HookCall& call, bool failed) noexcept = 0;
  // An allocation of `bytes` (> 0) about to be made through the hooks'
  // allocators (device and pinned); may throw (the allocator is then not
  // asked, and the caller gets the exception).
  virtual void allocating(DeviceType type, Device device, std::size_t bytes,
                          bool pinned) {}
  // Allocations and frees made through the hooks' allocators (device and
  // pinned), after the allocator returned and before the memory goes back.
  // `device` is the allocator's device (CPU for pinned memory).
  virtual void allocated(DeviceType type, Device device, const void* ptr,
                         std::size_t bytes, bool pinned) noexcept {}
  virtual void freed(DeviceType type, Device device, const void* ptr, std::size_t bytes,
                     bool pinned) noexcept {}
  // Whether this layer holds back the free of `ptr` that freed() was just
  // told of (the validation layer's quarantine): asked once per free, after
  // every layer's freed(), until one says yes. A layer that returns true
  // calls releaseHeldFree(token) exactly once, later, to let the memory go
  // back to its allocator. `note`: this layer's note on the block when it
  // noted it (allocatedNoted), else null. Default: no.
  virtual bool holdsFree(const void* /*ptr*/, const void* /*token*/,
                         BlockNote* /*note*/) noexcept {
    return false;
  }
  // Whether this layer keeps a note with each allocation (block_note.h):
  // the first layer added that says yes is handed the note of every block
  // through allocatedNoted() instead of allocated(). Asked when the layer is
  // added. Default: no.
  [[nodiscard]] virtual bool keepsBlockNotes() const noexcept { return false; }
  // allocated() for the layer that keeps notes, with the block's note (empty:
  // its dispose is null). Default: allocated().
  virtual void allocatedNoted(DeviceType type, Device device, const void* ptr,
                              std::size_t bytes, bool pinned,
                              BlockNote& /*note*/) noexcept {
    allocated(type, device, ptr, bytes, pinned);
  }
  // Whether this layer reads HookCall::begin_ticks. The clock is read for a
  // call only when an added layer wants it (about half the cost of a hook
  // call through the decorator). Asked when the layer is added. Default: yes.
  [[nodiscard]] virtual bool wantsTimes() const noexcept { return true; }
};

// Adds / removes a layer for every registered backend and each one registered
// later (see above). Adding a layer twice adds it once; removing one not
// added does nothing. Thread-safe; addHookLayer throws std::bad_alloc only.
ACCEL_API void addHookLayer(HookLayer& layer);
ACCEL_API void removeHookLayer(HookLayer& layer) noexcept;

// The backend's own hooks of `type` when a decorator serves it, else what
// the process table holds (null: nothing installed). Never throws.
ACCEL_API AcceleratorHooks* unlayeredHooks(DeviceType type) noexcept;

// Gives the memory of a free that a layer held back (HookLayer::holdsFree)
// to its allocator now. Never throws.
ACCEL_API void releaseHeldFree(const void* token) noexcept;

}  // namespace accel::detail
