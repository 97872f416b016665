// The validation layer: checks every hook call of every backend against the
// hooks contract before the backend sees it, and reports at exit what was
// never released (docs/validation.md).
//
// Turn it on with ACCEL_VALIDATE=1 (or log, throw, abort) before the first
// backend registers, or at run time with setValidationMode(). Off (the
// default), it is absent from every call path.
//
//   accel::setValidationMode(accel::ValidationMode::Throw);
//   ... a violation now throws accel::InvalidArgument ...
//   accel::setValidationMode(accel::ValidationMode::Off);
//
// Thread-safety: every function here is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "accel/export.h"
#include "accel/memory_stats.h"

namespace accel {

// What follows a violation. Off: the layer is not in the path.
enum class ValidationMode : std::uint8_t {
  Off,
  Log,    // one line on stderr, the call goes on
  Throw,  // the line, then InvalidArgument from the call (the backend is not called)
  Abort,  // the line on stderr, then std::abort()
};

// "off", "log", "throw", "abort".
[[nodiscard]] ACCEL_API std::string_view validationModeName(ValidationMode mode) noexcept;

// The mode `text` names, as ACCEL_VALIDATE takes it: empty or "0" off; "1"
// or "log"; "throw"; "abort" (lower case). nullopt for anything else.
[[nodiscard]] ACCEL_API std::optional<ValidationMode> parseValidationMode(
    std::string_view text) noexcept;

// Turns the layer on in `mode`, changes its mode, or (Off) turns it off:
// held-back frees are released, and objects it tracked are forgotten.
// Turned on at run time, the layer knows only what is made from then on
// (older objects are not reported as foreign or leaked); the C plugin
// tables are checked only when ACCEL_VALIDATE turned it on before they
// were registered. Throws std::bad_alloc only.
ACCEL_API void setValidationMode(ValidationMode mode);
// Bounds the quarantine of freed blocks (docs/validation.md), which each
// thread that frees keeps of its own: at most `blocks` blocks and `bytes`
// bytes are held back per thread; past either that thread's oldest goes
// back to its allocator. 0 holds nothing back. Defaults: 1024 blocks,
// 256 MiB, or ACCEL_VALIDATE_QUARANTINE_BLOCKS / _BYTES. Applies at each
// thread's next free. Thread-safe; never throws.
ACCEL_API void setValidationQuarantine(std::size_t blocks, std::size_t bytes) noexcept;

// Whether the layer records where each block, event and graph was made and
// freed (a C++ stack, and the host's): on by default, off with
// ACCEL_VALIDATE_STACKS=0. Off, reports and the leak table say "(no stack)"
// for them, and an allocation or free costs a fraction (docs/validation.md,
// "Cost"); the call site of a violation is still named. Never throws.
ACCEL_API void setValidationStacks(bool on) noexcept;

// The mode now. Never throws.
[[nodiscard]] ACCEL_API ValidationMode validationMode() noexcept;

// Violations reported since the layer was last turned on. Never throws.
[[nodiscard]] ACCEL_API std::uint64_t validationViolations() noexcept;

// The leak report now: one line per object made while the layer was on and
// not released (blocks, events, graphs), each with where it was made.
// Empty when nothing leaked. Printed on stderr at exit when not empty.
// Throws std::bad_alloc only.
[[nodiscard]] ACCEL_API std::string validationLeakReport();

// Lets the host language add its stack to what the layer records (where a
// violating call, an allocation, an event came from): the Python binding
// registers the traceback of the calling Python frame. Null: none.
ACCEL_API void setValidationHostStack(HostStackCapture capture);

// Resolves now the host stacks of everything tracked, so that the leak
// report at exit can still name them once the host language has shut down
// (the Python package calls it from its own atexit). Never throws.
ACCEL_API void resolveValidationHostStacks() noexcept;

}  // namespace accel
