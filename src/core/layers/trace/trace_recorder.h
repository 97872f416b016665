// TraceRecorder: the process's one trace (include/accel/trace.h): its ring,
// its file, the exit write and what a fork child does with it.
//
// The recorder outlives everything (it is created on first use and never
// destroyed) because hooks may run, and record, during static destruction.
// Recording is one acquire load when off; when on, one push into the ring.
// Times are steady-clock nanoseconds: the hook layers' clock, and the one
// the memory history's entries are converted to (memory/trace_clock.h).
//
// Fork: the core's fork callbacks hold the recorder's mutex across fork(),
// so that no write is half done in the child; the child stops recording,
// forgets the parent's events and never writes the parent's file (at exit
// or otherwise); it may start a trace of its own.
//
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accel/trace.h"
#include "layers/trace/trace_json.h"
#include "layers/trace/trace_ring.h"

namespace accel::trace::detail {

// What the hooks' side of a trace adds at write time (the tracing layer:
// device timing, allocator history), so the recorder stays independent of
// where events come from.
class TraceSources {
 public:
  virtual ~TraceSources() = default;
  // Called by start and stop, under the recorder's mutex.
  virtual void started() = 0;
  virtual void stopped() noexcept = 0;
  // Completes `contents` (events in steady ns) before it is written: device
  // work timed by events, the allocator histories. Never throws.
  virtual void complete(TraceContents& contents) noexcept = 0;
};

class TraceRecorder {
 public:
  static TraceRecorder& instance();

  void start(const TraceOptions& options);
  void stop() noexcept;
  [[nodiscard]] bool recording() const noexcept {
    return recording_.load(std::memory_order_acquire);
  }
  // Records `event` (times in steady-clock ns) when tracing, with the
  // calling thread's id. noexcept.
  void record(TraceEvent event) noexcept;
  // Stores an event finished later than its call (device work read from
  // its timing events), while tracing or after: it belongs to the trace
  // that began it. noexcept.
  void pushFinished(const TraceEvent& event) noexcept;

  TraceWriteResult write(const std::string& path);
  std::string toJson();

  // Sets what start/stop/write consult; once, before the first start.
  void setSources(TraceSources* sources) noexcept { sources_ = sources; }

  // The fork callbacks (registered with the core's on first start).
  void beforeFork() noexcept;
  void afterForkInParent() noexcept;
  void afterForkInChild() noexcept;

 private:
  TraceRecorder() = default;
  TraceContents collect();
  void writeAtExit() noexcept;
  void noteThread(std::uint32_t thread);

  mutable std::mutex mutex_;  // start, stop, write; held across fork()
  std::atomic<bool> recording_{false};
  std::atomic<TraceRing*> ring_{nullptr};
  std::vector<std::unique_ptr<TraceRing>>
      rings_;  // every ring made: pushes may still reach one
  TraceOptions options_;
  bool started_once_ = false;
  bool exit_write_registered_ = false;
  std::int64_t origin_ns_ = 0;
  TraceSources* sources_ = nullptr;
  std::mutex threads_mutex_;
  std::vector<ThreadName> threads_;  // at most kMaxNamedThreads
  static constexpr std::size_t kMaxNamedThreads = 4096;
  std::atomic<std::uint32_t> generation_{1};  // threads name themselves once per trace
};

}  // namespace accel::trace::detail
