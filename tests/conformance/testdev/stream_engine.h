// The testdev device's asynchrony: each stream is a queue of work run in
// order by a worker thread of its own, so that a call that enqueues work
// returns before the work is done, as on a real device. What the streams,
// events, copies and graphs of the testdev plugin (testdev_plugin.cpp) are
// built on; compiled into the plugin, C++17, nothing of libaccel.so.
//
// A Mark is a point in a stream's work: it is passed once the worker has
// run everything enqueued before it. Events, stream queries and
// synchronisation, and the stream events of the core's caching allocator
// are marks. A stream can be held (its worker runs nothing until released)
// so that a test can keep work pending for as long as it checks what
// depends on it, without timing.
//
// Streams: per device, the default stream (id 0) and a pool of
// kPoolStreams more per priority, handed out round-robin as a CUDA
// stream pool does (streams are never destroyed); workers start with a
// stream's first work.
//
// Thread-safety: every member is thread-safe. Lifetime: the plugin's engine
// lives for the process; its workers are never joined (they wait for work
// until the process exits). A destroyed engine (a test's own) stops and
// joins them.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "accel/plugin_adapter.h"

namespace testdev {

using accel::adapter::Stream;
using Clock = std::chrono::steady_clock;

// A point in one stream's work (see the header comment).
struct Mark {
  std::atomic<bool> passed{false};
  Clock::time_point at{};  // when the worker passed it; set before `passed`
};

class StreamEngine {
 public:
  static constexpr int kMaxDevices = 8;
  static constexpr int kPriorities = 2;  // 0 (default) and 1 (greater runs first)
  static constexpr int kPoolStreams = 4;
  static constexpr int kStreamsPerDevice = 1 + kPriorities * kPoolStreams;

  // Throws InvalidArgument for a device count outside [0, kMaxDevices].
  explicit StreamEngine(int devices);
  ~StreamEngine();
  StreamEngine(const StreamEngine&) = delete;
  StreamEngine& operator=(const StreamEngine&) = delete;

  [[nodiscard]] int devices() const noexcept { return devices_; }

  // The next stream of `device`'s pool for `priority` (0 or 1).
  [[nodiscard]] std::int64_t newStream(std::int8_t device, int priority);
  // Throws InvalidArgument for a stream this engine never handed out (its
  // device is checked by the core).
  void requireKnown(Stream stream) const;

  // Runs `work` on `stream`'s worker after what was enqueued before.
  void enqueue(Stream stream, std::function<void()> work);
  // A mark at the end of `stream`'s work so far.
  [[nodiscard]] std::shared_ptr<Mark> mark(Stream stream);
  // `stream` runs nothing enqueued after this call until `mark` is passed.
  void waitOn(Stream stream, std::shared_ptr<Mark> mark);
  // Blocks the caller until `mark` is passed.
  void waitFor(const Mark& mark);
  // Whether everything enqueued on `stream` has run.
  [[nodiscard]] bool idle(Stream stream);
  void synchronize(Stream stream);
  // Every stream of `device` that ever ran work.
  void synchronizeDevice(std::int8_t device);
  // While held, `stream`'s worker starts no work.
  void hold(Stream stream, bool held);

 private:
  // Work, or a mark (passed by the worker once it counts as idle up to
  // there, so that a stream synchronised is a stream that queries idle).
  struct Item {
    std::function<void()> work;
    std::shared_ptr<Mark> mark;
  };
  struct Queue {
    std::mutex mutex;  // guards the fields below
    std::condition_variable wake;
    std::deque<Item> work;
    bool running = false;  // the worker is running one item
    bool held = false;
    bool stop = false;
    std::thread worker;
  };

  [[nodiscard]] Queue& queue(Stream stream);
  void push(Stream stream, Item item);
  void run(Queue& q);
  void pass(Mark& mark);

  const int devices_;
  std::vector<std::unique_ptr<Queue>> queues_;  // [device * kStreamsPerDevice + id]
  std::array<std::array<std::atomic<unsigned>, kPriorities>, kMaxDevices> next_{};
  std::mutex passed_mutex_;  // with passed_, for waits on marks
  std::condition_variable passed_;
};

}  // namespace testdev
