#include "layers/trace/trace_recorder.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "accel/error.h"
#include "hooks/fork_handlers.h"
#include "layers/layer_clock.h"

namespace accel::trace::detail {
namespace {

std::uint32_t currentThreadId() noexcept {
  thread_local const auto id = static_cast<std::uint32_t>(::syscall(SYS_gettid));
  return id;
}

// The generation of the trace the calling thread last named itself in.
thread_local std::uint32_t t_named_generation = 0;

std::string threadName(std::uint32_t thread) {
  if (thread == static_cast<std::uint32_t>(::getpid())) return "main thread";
  char name[32] = {};
  std::string text = "thread " + std::to_string(thread);
  if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && name[0] != '\0')
    text += std::string(" (") + name + ")";
  return text;
}

// Why `path` cannot be written, or empty when it can: not a directory, and
// an existing file or its directory writable. Creates nothing.
std::string unwritableReason(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path file(path);
  if (fs::is_directory(file, error)) return "it is a directory";
  if (fs::exists(file, error)) {
    if (::access(path.c_str(), W_OK) != 0)
      return std::string("it cannot be written (") + std::strerror(errno) + ")";
    return {};
  }
  fs::path directory = file.parent_path();
  if (directory.empty()) directory = ".";
  if (!fs::is_directory(directory, error))
    return "its directory '" + directory.string() + "' does not exist";
  if (::access(directory.c_str(), W_OK) != 0)
    return "its directory '" + directory.string() + "' cannot be written (" +
           std::strerror(errno) + ")";
  return {};
}

// Writes `text` to `path` whole: to a temporary file beside it, renamed.
void writeFile(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error("trace: cannot write '" + path + "': " + std::strerror(errno));
  }
  std::size_t written = 0;
  int failure = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failure = n < 0 ? errno : ENOSPC;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && failure == 0) failure = errno;
  if (failure == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) failure = errno;
  if (failure != 0) {
    ::unlink(temporary.c_str());
    throw Error("trace: writing '" + path + "' failed: " + std::strerror(failure) +
                " (the trace is kept; write it again elsewhere)");
  }
}

}  // namespace

TraceRecorder& TraceRecorder::instance() {
  // Never destroyed: hooks may record during static destruction.
  static TraceRecorder* const recorder = new TraceRecorder();
  return *recorder;
}

void TraceRecorder::start(const TraceOptions& options) {
  // Before the recorder's lock: fork() runs these callbacks while holding the
  // fork handlers' lock, which registering takes too (the reverse order
  // would deadlock a start racing a fork).
  static std::once_flag fork_callbacks;
  std::call_once(fork_callbacks, [] {
    accel::detail::registerCoreForkCallbacks(
        ForkCallbacks{[]() noexcept { instance().beforeFork(); },
                      []() noexcept { instance().afterForkInParent(); },
                      []() noexcept { instance().afterForkInChild(); }});
  });
  std::lock_guard lock(mutex_);
  ACCEL_CHECK(!recording(), InvalidArgument,
              "trace: a trace is already running; stop it first (accel::trace::stop)");
  if (!options.path.empty()) {
    const std::string reason = unwritableReason(options.path);
    ACCEL_CHECK(reason.empty(), InvalidArgument, "trace: cannot write the trace to '",
                options.path, "': ", reason);
  }
  TraceRing* ring = ring_.load(std::memory_order_acquire);
  // A ring of the capacity asked for (rings are kept, never freed: a hook
  // still pushing into an old one must find it).
  if (ring == nullptr ||
      ring->capacity() != TraceRing::roundedCapacity(options.capacity)) {
    rings_.push_back(std::make_unique<TraceRing>(options.capacity));
    ring = rings_.back().get();
    ring_.store(ring, std::memory_order_release);
  }
  ring->reset();
  {
    std::lock_guard names(threads_mutex_);
    threads_.clear();
  }
  generation_.fetch_add(1, std::memory_order_relaxed);
  options_ = options;
  origin_ns_ = traceNowNs();
  started_once_ = true;
  if (options.write_at_exit && !options.path.empty() && !exit_write_registered_) {
    exit_write_registered_ = true;
    std::atexit([] { instance().writeAtExit(); });
  }
  if (sources_ != nullptr) sources_->started();
  recording_.store(true, std::memory_order_release);
}

void TraceRecorder::stop() noexcept {
  std::lock_guard lock(mutex_);
  if (!recording()) return;
  // The sources finish first (device work in flight is read) while the
  // trace still counts as running.
  if (sources_ != nullptr) sources_->stopped();
  recording_.store(false, std::memory_order_release);
}

void TraceRecorder::record(TraceEvent event) noexcept {
  TraceRing* ring = ring_.load(std::memory_order_acquire);
  if (ring == nullptr || !recording()) return;
  event.thread = currentThreadId();
  const std::uint32_t generation = generation_.load(std::memory_order_relaxed);
  if (t_named_generation != generation) {
    t_named_generation = generation;
    try {
      noteThread(event.thread);
    } catch (...) {
      // A thread without a name is drawn under its id.
    }
  }
  ring->push(event);
}

void TraceRecorder::pushFinished(const TraceEvent& event) noexcept {
  if (TraceRing* ring = ring_.load(std::memory_order_acquire)) ring->push(event);
}

void TraceRecorder::noteThread(std::uint32_t thread) {
  std::string name = threadName(thread);
  std::lock_guard lock(threads_mutex_);
  // Bounded like the ring: a program that starts threads without end has
  // the later ones drawn under their id (trace_json.cpp names them so).
  if (threads_.size() < kMaxNamedThreads)
    threads_.push_back(ThreadName{thread, std::move(name)});
}

TraceContents TraceRecorder::collect() {
  TraceContents contents;
  TraceRing* ring = ring_.load(std::memory_order_acquire);
  ACCEL_CHECK(ring != nullptr, InvalidArgument,
              "trace: no trace was started (ACCEL_TRACE=FILE, accel::trace::start, or "
              "accel.profiler.profile())");
  TraceRing::Contents ring_contents = ring->collect();
  contents.events = std::move(ring_contents.events);
  contents.dropped = ring_contents.dropped;
  contents.capacity = ring->capacity();
  contents.origin_ns = origin_ns_;
  contents.process_id = static_cast<int>(::getpid());
  {
    std::lock_guard names(threads_mutex_);
    contents.threads = threads_;
  }
  if (sources_ != nullptr) sources_->complete(contents);
  // The ring's ticks to steady-clock ns, at the rate measured from the
  // library's load to now (trace_event.h).
  const memory::detail::TraceClock::Scale scale = accel::detail::g_layer_clock.scale();
  for (TraceEvent& event : contents.events) {
    event.begin = scale.toNs(event.begin);
    event.end = scale.toNs(event.end);
  }
  return contents;
}

TraceWriteResult TraceRecorder::write(const std::string& path) {
  std::lock_guard lock(mutex_);
  const std::string target = path.empty() ? options_.path : path;
  ACCEL_CHECK(!target.empty(), InvalidArgument,
              "trace: no path to write the trace to (the trace was started without one; "
              "pass one)");
  TraceContents contents = collect();
  const std::string text = traceToJson(contents);
  writeFile(target, text);
  TraceWriteResult result;
  result.path = target;
  result.dropped = contents.dropped;
  result.events = contents.events.size();
  return result;
}

std::string TraceRecorder::toJson() {
  std::lock_guard lock(mutex_);
  TraceContents contents = collect();
  return traceToJson(contents);
}

void TraceRecorder::writeAtExit() noexcept {
  std::string path;
  {
    std::lock_guard lock(mutex_);
    if (!options_.write_at_exit || options_.path.empty() || !started_once_) return;
    if (!recording()) return;  // stopped: the program wrote what it wanted
    path = options_.path;
  }
  try {
    write(path);
    std::lock_guard lock(mutex_);
    recording_.store(false, std::memory_order_release);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accel: ACCEL_TRACE: %s\n", e.what());
  }
}

void TraceRecorder::beforeFork() noexcept {
  mutex_.lock();
  threads_mutex_.lock();
}

void TraceRecorder::afterForkInParent() noexcept {
  threads_mutex_.unlock();
  mutex_.unlock();
}

void TraceRecorder::afterForkInChild() noexcept {
  // Single-threaded here: no pusher can be inside the ring.
  recording_.store(false, std::memory_order_release);
  options_ = TraceOptions{};
  options_.write_at_exit = false;
  if (TraceRing* ring = ring_.load(std::memory_order_relaxed)) ring->reset();
  threads_.clear();
  threads_mutex_.unlock();
  mutex_.unlock();
}

}  // namespace accel::trace::detail
