// Internal: the validation layer (include/accel/validation.h): the rules
// each hook call, allocation and free is checked against before the
// backend sees it, and the state they need (what was made while the layer
// was on: blocks, events, graphs, streams, captures).
//
// What the core's wrappers refuse on their own (hooks.h: index ranges,
// stream types, copy ranges against the core's caches) never reaches this
// layer; its rules are the ones the core cannot check without remembering
// the history of the process (docs/validation.md lists both).
//
// Thread-safety: every member is thread-safe (the memory books' locks and
// the rest's; reports are made and stacks resolved outside them).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "accel/validation.h"
#include "layers/hook_layer.h"
#include "layers/validation/tracked_memory.h"
#include "layers/validation/validation_report.h"
#include "memory/biased_mutex.h"

namespace accel::detail {

class ValidationLayer final : public HookLayer {
 public:
  void setMode(ValidationMode mode) noexcept {
    mode_.store(mode, std::memory_order_relaxed);
  }
  [[nodiscard]] ValidationMode mode() const noexcept {
    return mode_.load(std::memory_order_relaxed);
  }
  void setQuarantineLimits(QuarantineLimits limits) noexcept;
  // Whether the memory books' lock may be biased to the thread that takes
  // it alone (true at first; ACCEL_ALLOC_CONF=biased_lock:false says no, as
  // for the caching allocator's device locks). Never throws.
  void allowBiasedBooks(bool allowed) noexcept { memory_.allowBias(allowed); }

  void before(const HookCall& call) override;
  void after(const HookCall& call, bool failed) noexcept override;
  // The memory callbacks are defined below, inline: the decorator's
  // allocator calls them directly, without a virtual call, when this layer
  // is the only one added (layers/layered_allocator.cpp). It has no freed():
  // holdsFree, asked at every free, does that work.
  void allocating(DeviceType type, Device device, std::size_t bytes,
                  bool pinned) override;
  // Its live blocks' records are kept in the decorator's blocks
  // (tracked_memory.h): it keeps the blocks' notes. A block made while
  // another layer keeps them (none does) is not tracked.
  [[nodiscard]] bool keepsBlockNotes() const noexcept override { return true; }
  void allocatedNoted(DeviceType type, Device device, const void* ptr, std::size_t bytes,
                      bool pinned, BlockNote& note) noexcept override;
  bool holdsFree(const void* ptr, const void* token, BlockNote* note) noexcept override;
  // Its rules read no times.
  [[nodiscard]] bool wantsTimes() const noexcept override { return false; }

  // Before the layer is added: frees may be held from now on. Never throws.
  void activate() noexcept;
  // Forgets everything tracked (the layer is being turned off) and returns
  // the frees the quarantine held, for the caller to give back (giveBack)
  // once it holds no lock: a backend's free takes its device's lock. None
  // is held until activate(), also by a thread still inside holdsFree. Call
  // it before the layer is removed (removeHookLayer): the records of live
  // blocks lie in the blocks, and a block freed once the layer is removed
  // goes back without the layer, so the books must have let go of its
  // record by then. Never throws.
  [[nodiscard]] std::vector<const void*> forgetAll() noexcept;
  // Gives held frees back to their allocators (no lock of the layer held).
  static void giveBack(const std::vector<const void*>& tokens) noexcept;
  // Replaces the host part of every tracked stack by its frames, resolved
  // now (validation.h: resolveValidationHostStacks). Never throws.
  void resolveHostStacks() noexcept;
  // The leak table (validation.h); empty when nothing leaked.
  [[nodiscard]] std::string leakReport();

  // Around fork(): takes every lock of the layer (its own, then the
  // books'), so that a child forked while another thread held one (a hook
  // call's rule, an allocation, a free) can free what it inherited and
  // print its leak report at exit; unlockAfterFork releases them. Same
  // thread, in that order. Never throw.
  void lockForFork() noexcept;
  void unlockAfterFork(bool in_child) noexcept;

 private:
  // A broken rule found under the lock, reported after it.
  struct Violation {
    std::string rule;
    CapturedStack made;   // where the object involved was made, if known
    CapturedStack freed;  // where it was freed / destroyed, if it was
  };
  struct EventState {
    int device = -1;
    bool recorded = false;
    int stream_device = -1;
    StreamId stream = -1;
    CapturedStack made;
  };
  struct Capture {
    GraphId graph = 0;
    int device = -1;
    StreamId stream = -1;
    std::thread::id thread;
    CaptureMode mode = CaptureMode::Global;
  };
  using Key = std::pair<DeviceType, std::uint64_t>;

  // The rules; each appends what it finds. Require mutex_ (checkMemory
  // takes the books' lock itself).
  void checkMemory(const HookCall& call, const void* ptr, std::size_t bytes,
                   std::string_view which, std::vector<Violation>& found);
  void checkStream(const HookCall& call, std::vector<Violation>& found) const;
  void checkEvent(const HookCall& call, std::uint64_t event, bool must_be_recorded,
                  std::vector<Violation>& found) const;
  void checkCapture(const HookCall& call, std::vector<Violation>& found) const;
  // The capture the call of `type` on this thread is subject to, if any.
  [[nodiscard]] const Capture* captureFor(DeviceType type, int device) const noexcept;
  // Reports each of `found` (no lock held), the first per the mode.
  void report(const std::string& call, std::vector<Violation>& found,
              bool may_throw) const;
  // Ends the record a note holds (BlockNote::dispose).
  static void disposeRecord(BlockNote& note) noexcept;

 public:
  // BlockNote::clear() for a note this layer keeps a record in, inline:
  // ends the record and empties the note, and true; false (nothing done)
  // when the note holds no record of this layer's. The caller owns the note
  // (the block is going back to the decorator's cache, its record out of
  // the books); never throws.
  static bool endRecord(BlockNote& note) noexcept {
    if (note.dispose != &disposeRecord) return false;
    recordIn(note).~LiveRecord();
    note.dispose = nullptr;
    note.keeper = nullptr;
    return true;
  }

 private:
  static LiveRecord& recordIn(BlockNote& note) noexcept {
    return *std::launder(reinterpret_cast<LiveRecord*>(note.storage));
  }
  // allocating() while a graph captures: the capture's pool rule.
  [[gnu::noinline]] void allocatingWhileCapturing(DeviceType type, Device device,
                                                  std::size_t bytes);
  // holdsFree() but for a live block forgotten at once: the quarantine, a
  // second free, a record the books no longer have. Out of line: its
  // reports and stacks need a frame the common free does not.
  [[gnu::noinline]] bool holdsFreeSlow(const void* ptr, const void* token,
                                       LiveRecord& record, bool quarantine) noexcept;

  std::atomic<ValidationMode> mode_{ValidationMode::Log};
  // Guards the events, graphs, captures and streams. Taken before the
  // books' locks where a function takes both.
  mutable std::mutex mutex_;
  // The memory books, with their own locks (tracked_memory.h): an
  // allocation and its free take the lane's lock of the thread that made
  // the block, biased to it (memory/biased_mutex.h: the thread that takes
  // it most takes it without a locked instruction); the rules' lookups and
  // the quarantine take the books' lock. Switched on between activate()
  // and forgetAll().
  TrackedMemory memory_;
  std::map<Key, EventState> events_;
  struct DestroyedEvent {
    int device = -1;
    CapturedStack where;  // where it was destroyed
  };
  std::map<Key, DestroyedEvent> destroyed_events_;
  std::map<Key, CapturedStack> graphs_;  // live graphs, where made
  std::map<DeviceType, std::vector<Capture>> captures_;
  // captures_' size, read without the lock by allocations.
  std::atomic<int> captures_running_{0};
  // Whether the quarantine's limits let it hold anything (read unlocked).
  std::atomic<bool> quarantine_holds_{true};
  // Streams getNewStream made: (type, id) -> the devices it was made on.
  std::map<Key, std::set<int>> streams_;
};

static_assert(sizeof(LiveRecord) <= BlockNote::kBytes &&
                  alignof(LiveRecord) <= alignof(std::max_align_t),
              "a live block's record fits in the decorator's note");

[[gnu::always_inline]] inline void ValidationLayer::allocating(DeviceType type,
                                                               Device device,
                                                               std::size_t bytes,
                                                               bool pinned) {
  // Only while a graph captures can an allocation break a rule.
  if (pinned || captures_running_.load(std::memory_order_acquire) == 0) [[likely]]
    return;
  allocatingWhileCapturing(type, device, bytes);
}

[[gnu::always_inline]] inline void ValidationLayer::allocatedNoted(
    DeviceType type, Device device, const void* ptr, std::size_t bytes, bool pinned,
    BlockNote& note) noexcept {
  // Made in the block's note, which no other thread reaches yet, before the
  // lock: only linking it in the books needs the lock. (The stack is
  // assigned in place, not moved in from a local: the moved-from local's
  // destructor reloaded what the move had just zeroed, past the lock's
  // fences, half of this function's samples in a profile.)
  auto* record = ::new (static_cast<void*>(note.storage))
      LiveRecord(reinterpret_cast<std::uintptr_t>(ptr), bytes, type, device, pinned);
  if (recordingStacks()) record->block.made = recordedStack();
  // Filed on this thread's lane of the books, under the lane's lock alone.
  if (memory_.allocated(*record)) [[likely]] {
    note.dispose = &disposeRecord;
    return;
  }
  record->~LiveRecord();  // turned off meanwhile: not tracked
}

[[gnu::always_inline]] inline bool ValidationLayer::holdsFree(const void* ptr,
                                                              const void* token,
                                                              BlockNote* note) noexcept {
  // A block this layer did not note (made while it was off) is not tracked.
  if (note == nullptr || note->dispose != &disposeRecord) return false;
  LiveRecord& record = recordIn(*note);
  const bool quarantine = quarantine_holds_.load(std::memory_order_relaxed);
  // The common case, a live block freed while the quarantine holds nothing,
  // apart: it needs no stack and no report. Under the lane's lock of the
  // thread that made the block (the books' lock only when a lookup filed
  // the record in the index).
  if (!quarantine && memory_.forgetLive(record)) [[likely]]
    return false;
  return holdsFreeSlow(ptr, token, record, quarantine);
}

}  // namespace accel::detail
