// Tracing: every hook call, the device work on each stream, graph captures
// and replays and the caching allocator's events, recorded into a bounded
// ring and written as Chrome trace-event JSON (docs/tracing.md), which
// Perfetto, chrome://tracing and `accel trace view` open.
//
//   accel::trace::start({.path = "trace.json"});   // or ACCEL_TRACE=trace.json
//   ... the program ...
//   accel::trace::write();                          // on demand; also at exit
//   accel::trace::stop();
//
// One trace per process at a time. The ring holds the newest
// TraceOptions::capacity events; older ones are dropped and the number
// dropped is written into the file (metadata "dropped_events"). A fork
// child stops tracing and forgets the parent's events: it never writes the
// parent's file (docs/tracing.md, "Fork").
//
// Thread-safety: every function is thread-safe. Hooks called on other
// threads while start() or stop() runs are either traced or not, whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "accel/export.h"

namespace accel::trace {

struct TraceOptions {
  // Where write() and the exit write go; may be empty for a trace that is
  // only written to paths given to write() (Python's profiler).
  std::string path;
  // Events the ring holds (rounded up to a power of two, at least 1024).
  std::size_t capacity = std::size_t{1} << 17;
  // Write to `path` when the process exits normally (and the trace is on).
  bool write_at_exit = true;
};

// What a write produced.
struct TraceWriteResult {
  std::string path;
  std::size_t events = 0;     // trace events in the file, metadata included
  std::uint64_t dropped = 0;  // events the ring lost (overwritten or torn)
};

// Starts tracing every registered backend and each one registered later,
// discarding the events of a trace that ran before. Checks that `path`, when
// given, can be written (creating it, empty, as a user would see it).
// Throws InvalidArgument naming the path and why it cannot be written, and
// InvalidArgument when a trace is already running.
ACCEL_API void start(const TraceOptions& options);

// Stops recording (the events stay until the next start). Hooks running on
// other threads may still finish their spans. No-op when not tracing.
ACCEL_API void stop() noexcept;

// True while a trace records. noexcept.
[[nodiscard]] ACCEL_API bool isTracing() noexcept;

// Writes the events so far (of the running trace, or of the last one after
// stop) to `path`, or to the path start() was given when `path` is empty.
// The file is written whole to a temporary name and renamed, so a reader
// never sees half a trace. Throws InvalidArgument when there is no path or
// no trace, and Error naming the file and the system's reason when writing
// fails (a full disk)
// — the trace itself is unaffected and may be written again.
ACCEL_API TraceWriteResult write(const std::string& path = {});

// The trace as the JSON text write() would put in a file (for tests and
// Python). Throws InvalidArgument when no trace was started.
[[nodiscard]] ACCEL_API std::string toJson();

}  // namespace accel::trace
