// Internal: how the validation layer words what it finds — one line per
// violation, naming the hook and its arguments, the backend, the device,
// the rule broken and where the call came from; and the leak table at exit.
//
//   accel validation: copyDeviceToHost(dst=0x7f.., src=0x7f.., bytes=64,
//   stream=openreg:0 #3) on 'openreg' device 0: use after free: src lies in a
//   block of 256 bytes freed at free_twice (test.cpp:12); called at main (test.cpp:20)
//
// (one line in the output). Stacks are host frames (Python) first, then the
// C++ frames outside libaccel.so.
//
// Thread-safety: the functions are thread-safe; none takes the layer's lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "accel/memory_stats.h"
#include "accel/validation.h"
#include "layers/hook_layer.h"
#include "layers/validation/tracked_memory.h"

namespace accel::detail {

// "0x7f3a14000100". Throws std::bad_alloc only.
[[nodiscard]] std::string hexAddress(std::uintptr_t address);

// The hook, its arguments, the backend and the device of `call`:
// "copyDeviceToHost(dst=0x.., src=0x.., bytes=64, stream=openreg:0 #3) on
// 'openreg' device 0".
[[nodiscard]] std::string describeCall(const HookCall& call);
// The same for an allocation or free through the hooks' allocators
// ("allocate(bytes=256) on 'openreg' device 0").
[[nodiscard]] std::string describeMemoryCall(std::string_view what, DeviceType type,
                                             Device device, const void* ptr,
                                             std::size_t bytes);

// Captures the caller's stack for a report (the host stack too, when a
// provider is set: setValidationHostStack). Never throws (null then).
[[nodiscard]] CapturedStack captureHere() noexcept;
void setHostStackProvider(HostStackCapture capture);
// Around fork() (the layer's fork callbacks): the host stack provider's
// lock, so that a child can record stacks. Same thread, in that order.
void lockHostStackProviderForFork() noexcept;
void unlockHostStackProviderAfterFork() noexcept;
// captureHere() for what the layer records (where a block, an event or a
// graph was made or freed), or null while stacks are off
// (setRecordedStacks). Never throws.
[[nodiscard]] CapturedStack recordedStack() noexcept;
void setRecordedStacks(bool on) noexcept;
// Whether recordedStack() records (one load: the allocation callback asks
// before calling it).
extern constinit std::atomic<bool> g_recorded_stacks;
[[nodiscard]] inline bool recordingStacks() noexcept {
  return g_recorded_stacks.load(std::memory_order_relaxed);
}

// The first frame of `stack` that is the caller's (a host frame, else the
// first C++ frame outside libaccel.so): "main (/path/prog)" or "test.py:12 in
// f"; "an unknown place" when there is none. Resolves host frames: call
// without the layer's lock (resolving may take the host's lock).
[[nodiscard]] std::string callerFrame(const CapturedStack& stack);
// Every frame of the caller's part of `stack`, one per line, each indented
// by `indent`. Same locking rule.
[[nodiscard]] std::string callerFrames(const CapturedStack& stack,
                                       std::string_view indent);

// "accel validation: <call>: <rule>; called at <frame>", then what `mode`
// says: printed on stderr (Log, Abort), thrown as InvalidArgument (Throw),
// std::abort() (Abort). `may_throw` false (a free, a noexcept hook): Throw
// prints instead. Counts the violation.
// Violations reported since the count was last reset. Never throw.
[[nodiscard]] std::uint64_t countedViolations() noexcept;
void resetViolationCount() noexcept;

void reportViolation(ValidationMode mode, const std::string& call,
                     const std::string& rule, const CapturedStack& where, bool may_throw);

}  // namespace accel::detail
