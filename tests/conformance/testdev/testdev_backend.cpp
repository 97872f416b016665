#include "testdev_backend.h"

#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "testdev_memory.h"

namespace testdev {

using accel::adapter::DeviceError;
using accel::adapter::InvalidArgument;

namespace {

// Blocks for good: reads a pipe whose write end stays open and unwritten.
void blockForever() {
  int never_written[2];
  if (::pipe(never_written) != 0) std::abort();
  char byte;
  while (::read(never_written[0], &byte, 1) != 0) {
  }
}

// The calling thread's current device and streams, for a backend that keeps
// them (one backend per plugin: these belong to it).
thread_local std::int8_t t_device = 0;
thread_local std::array<std::int64_t, StreamEngine::kMaxDevices> t_stream{};

}  // namespace

TestdevBackend::TestdevBackend(Options options)
    : options_(options),
      engine_(std::make_unique<StreamEngine>(options.devices)),
      stream_events_(std::make_unique<EngineEvents>(*engine_)),
      device_memory_(std::make_unique<DeviceMemory>(kMemoryBytes, *stream_events_)),
      pinned_memory_(std::make_unique<PinnedMemory>(*stream_events_)) {}

TestdevBackend::~TestdevBackend() = default;

std::int8_t TestdevBackend::keptDevice() const noexcept { return t_device; }
std::int64_t TestdevBackend::keptStream(std::int8_t device) const noexcept {
  return t_stream[static_cast<std::size_t>(device)];
}

// ---- probes and description ----

bool TestdevBackend::isAvailable() const { return deviceCount() > 0; }

int TestdevBackend::deviceCount() const {
  // What a broken driver does while listing devices.
  if (options_.defect == Defect::DiscoveryCrashes) std::raise(SIGSEGV);
  if (options_.defect == Defect::DiscoveryHangs) blockForever();
  return options_.devices;
}

void TestdevBackend::init() {
  if (options_.defect == Defect::InitHangs) blockForever();
}

accel::adapter::Memory& TestdevBackend::deviceMemory() { return *device_memory_; }
accel::adapter::Memory& TestdevBackend::pinnedMemory() { return *pinned_memory_; }

std::string TestdevBackend::showConfig() const {
  return "testdev: " + std::to_string(options_.devices) +
         " simulated asynchronous devices of " + std::to_string(kMemoryBytes >> 20) +
         " MiB (host memory; a worker thread per stream, " +
         std::to_string(StreamEngine::kPoolStreams) + " pooled streams per priority)\n";
}

accel::adapter::Properties TestdevBackend::properties(std::int8_t device) const {
  accel::adapter::Properties p;
  p.name = "testdev simulated asynchronous device";
  p.total_memory_bytes = kMemoryBytes;
  p.multiprocessor_count = StreamEngine::kStreamsPerDevice;
  p.is_integrated = true;
  p.uuid = "testdev-" + std::to_string(device);
  return p;
}

// ---- current device and streams (the core checked the indices) ----

std::int8_t TestdevBackend::currentDevice() const { return t_device; }

void TestdevBackend::setCurrentDevice(std::int8_t device) {
  if (options_.defect == Defect::SetCurrentDeviceIgnored) return;
  t_device = device;
}

std::int64_t TestdevBackend::currentStream(std::int8_t device) const {
  return t_stream[static_cast<std::size_t>(device)];
}

void TestdevBackend::setCurrentStream(Stream stream) {
  engine_->requireKnown(stream);
  t_stream[static_cast<std::size_t>(stream.device)] = stream.id;
}

// ---- device and streams ----

void TestdevBackend::failNextSynchronize(std::function<void()> raise) {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  failure_ = std::move(raise);
}

void TestdevBackend::synchronizeDevice(std::int8_t device) {
  std::function<void()> raise;
  {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    raise = std::exchange(failure_, nullptr);
  }
  if (raise) raise();
  engine_->synchronizeDevice(device);
}

std::int64_t TestdevBackend::defaultStream(std::int8_t device) {
  if (options_.defect == Defect::StreamsWithoutDefaultOrNewStream)
    notWritten("defaultStream");
  return Backend::defaultStream(device);
}

std::int64_t TestdevBackend::createStream(std::int8_t device, int priority) {
  if (options_.defect == Defect::StreamsWithoutDefaultOrNewStream)
    notWritten("createStream");
  return engine_->newStream(device, priority);
}

bool TestdevBackend::queryStream(Stream stream) {
  engine_->requireKnown(stream);
  return engine_->idle(stream);
}

void TestdevBackend::synchronizeStream(Stream stream) {
  engine_->requireKnown(stream);
  engine_->synchronize(stream);
}

std::pair<int, int> TestdevBackend::priorityRange(std::int8_t /*device*/) {
  return {0, StreamEngine::kPriorities - 1};
}

// ---- events ----

std::uint64_t TestdevBackend::createEvent(std::int8_t device, std::uint32_t flags) {
  std::lock_guard<std::mutex> lock(event_mutex_);
  const std::uint64_t id = next_event_++;
  events_[id] = Event{device, flags, nullptr};
  return id;
}

void TestdevBackend::destroyEvent(std::uint64_t event) noexcept {
  std::lock_guard<std::mutex> lock(event_mutex_);
  events_.erase(event);  // an unknown id is ignored
}

std::shared_ptr<Mark> TestdevBackend::markOf(std::uint64_t event) {
  std::lock_guard<std::mutex> lock(event_mutex_);
  auto it = events_.find(event);
  ACCEL_ADAPTER_CHECK(it != events_.end(), InvalidArgument, "testdev: ", event,
                      " is not a live testdev event");
  return it->second.mark;
}

void TestdevBackend::recordEvent(std::uint64_t event, Stream stream) {
  engine_->requireKnown(stream);
  std::lock_guard<std::mutex> lock(event_mutex_);
  auto it = events_.find(event);
  ACCEL_ADAPTER_CHECK(it != events_.end(), InvalidArgument, "testdev: ", event,
                      " is not a live testdev event");
  ACCEL_ADAPTER_CHECK(it->second.device == stream.device, InvalidArgument,
                      "testdev: event ", event, " is on device ", int(it->second.device),
                      ", the stream on device ", int(stream.device),
                      "; record on a stream of the event's device");
  it->second.mark = engine_->mark(stream);
}

void TestdevBackend::blockStream(std::uint64_t event, Stream stream) {
  engine_->requireKnown(stream);
  // An event never recorded is complete: nothing to wait for.
  if (std::shared_ptr<Mark> mark = markOf(event))
    engine_->waitOn(stream, std::move(mark));
}

bool TestdevBackend::queryEvent(std::uint64_t event) {
  const std::shared_ptr<Mark> mark = markOf(event);
  return mark == nullptr || mark->passed.load(std::memory_order_acquire);
}

void TestdevBackend::synchronizeEvent(std::uint64_t event) {
  if (const std::shared_ptr<Mark> mark = markOf(event)) engine_->waitFor(*mark);
}

double TestdevBackend::elapsedMs(std::uint64_t start, std::uint64_t end) {
  std::shared_ptr<Mark> marks[2];
  {
    std::lock_guard<std::mutex> lock(event_mutex_);
    const std::uint64_t ids[2] = {start, end};
    for (int i = 0; i < 2; ++i) {
      auto it = events_.find(ids[i]);
      ACCEL_ADAPTER_CHECK(it != events_.end(), InvalidArgument, "elapsedMs: ", ids[i],
                          " is not a live testdev event");
      ACCEL_ADAPTER_CHECK((it->second.flags & ACCEL_EVENT_ENABLE_TIMING) != 0,
                          InvalidArgument, "elapsedMs: event ", ids[i],
                          " was created without ACCEL_EVENT_ENABLE_TIMING");
      marks[i] = it->second.mark;
    }
  }
  for (const std::shared_ptr<Mark>& mark : marks) {
    ACCEL_ADAPTER_CHECK(mark != nullptr && mark->passed.load(std::memory_order_acquire),
                        DeviceError,
                        "elapsedMs: both events must be recorded and completed; "
                        "synchronize the later one first");
  }
  return std::chrono::duration<double, std::milli>(marks[1]->at - marks[0]->at).count();
}

// ---- graphs ----

std::uint64_t TestdevBackend::createGraph(bool keep_graph) {
  std::lock_guard<std::mutex> lock(graph_mutex_);
  const std::uint64_t id = next_graph_++;
  graphs_[id].keep_graph = keep_graph;
  return id;
}

TestdevBackend::Graph& TestdevBackend::graph(std::uint64_t id, const char* what,
                                             std::initializer_list<Phase> phases) {
  auto it = graphs_.find(id);
  ACCEL_ADAPTER_CHECK(it != graphs_.end(), InvalidArgument, what, ": ", id,
                      " is not a live testdev graph");
  bool allowed = phases.size() == 0;
  for (Phase phase : phases) allowed = allowed || it->second.phase == phase;
  ACCEL_ADAPTER_CHECK(allowed, DeviceError, what, ": graph ", id,
                      " is not in a phase that allows it (capture it, end the capture, "
                      "instantiate a kept graph, in that order; reset to start again)");
  return it->second;
}

void TestdevBackend::destroyGraph(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(graph_mutex_);
  Graph& g = graph(id, "destroyGraph", {});
  if (g.phase == Phase::Capturing) capturing_.erase({g.stream.device, g.stream.id});
  graphs_.erase(id);
}

void TestdevBackend::captureBegin(std::uint64_t id, Stream stream, int /*mode*/) {
  engine_->requireKnown(stream);
  std::lock_guard<std::mutex> lock(graph_mutex_);
  Graph& g = graph(id, "captureBegin", {Phase::Empty});
  ACCEL_ADAPTER_CHECK(
      capturing_.emplace(std::make_pair(stream.device, stream.id), id).second,
      DeviceError, "captureBegin: stream ", stream.id, " of device ", int(stream.device),
      " is being captured already");
  g.phase = Phase::Capturing;
  g.stream = stream;
  g.copies.clear();
}

void TestdevBackend::captureEnd(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(graph_mutex_);
  Graph& g = graph(id, "captureEnd", {Phase::Capturing});
  capturing_.erase({g.stream.device, g.stream.id});
  g.phase = g.keep_graph ? Phase::Captured : Phase::Ended;
}

void TestdevBackend::instantiateGraph(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(graph_mutex_);
  graph(id, "instantiateGraph", {Phase::Captured}).phase = Phase::Instantiated;
}

void TestdevBackend::replayGraph(std::uint64_t id) {
  std::vector<Copy> copies;
  Stream stream{};
  {
    std::lock_guard<std::mutex> lock(graph_mutex_);
    const Graph& g = graph(id, "replayGraph", {Phase::Instantiated, Phase::Ended});
    copies = g.copies;
    stream = g.stream;
  }
  for (const Copy& copy : copies) enqueueCopy(stream, copy);
}

void TestdevBackend::resetGraph(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(graph_mutex_);
  Graph& g = graph(id, "resetGraph", {});
  if (g.phase == Phase::Capturing) capturing_.erase({g.stream.device, g.stream.id});
  g.phase = Phase::Empty;
  g.copies.clear();
}

// ---- copies (the core checked the ranges against its caches) ----

bool TestdevBackend::captured(Stream stream, const Copy& copy, bool host_side_pageable) {
  std::lock_guard<std::mutex> lock(graph_mutex_);
  auto it = capturing_.find({stream.device, stream.id});
  if (it == capturing_.end()) return false;
  ACCEL_ADAPTER_CHECK(!host_side_pageable, DeviceError,
                      "testdev cannot capture a copy with pageable host memory (stream ",
                      stream.id, " of device ", int(stream.device),
                      " is being captured); use pinned memory");
  graphs_.at(it->second).copies.push_back(copy);
  return true;
}

void TestdevBackend::enqueueCopy(Stream stream, const Copy& copy) {
  engine_->enqueue(stream, [copy] { std::memcpy(copy.dst, copy.src, copy.bytes); });
}

void TestdevBackend::copyHostToDevice(void* dst, const void* src, std::size_t bytes,
                                      Stream stream) {
  engine_->requireKnown(stream);
  const bool pinned = pinned_memory_->holds(src, bytes);
  if (captured(stream, Copy{dst, src, bytes}, !pinned)) return;
  if (pinned) return enqueueCopy(stream, Copy{dst, src, bytes});
  // Pageable: the source may change once the call returns, so it is staged.
  auto staged = std::make_shared<std::vector<unsigned char>>(
      static_cast<const unsigned char*>(src),
      static_cast<const unsigned char*>(src) + bytes);
  engine_->enqueue(stream,
                   [dst, staged] { std::memcpy(dst, staged->data(), staged->size()); });
}

void TestdevBackend::copyDeviceToHost(void* dst, const void* src, std::size_t bytes,
                                      Stream stream) {
  engine_->requireKnown(stream);
  const bool pinned = pinned_memory_->holds(dst, bytes);
  if (captured(stream, Copy{dst, src, bytes}, !pinned)) return;
  enqueueCopy(stream, Copy{dst, src, bytes});
  // Pageable: done when the call returns.
  if (!pinned) engine_->synchronize(stream);
}

void TestdevBackend::copyDeviceToDevice(void* dst, const void* src, std::size_t bytes,
                                        Stream stream) {
  engine_->requireKnown(stream);
  const Copy copy{dst, src, bytes};
  if (captured(stream, copy, false)) return;
  if (options_.defect != Defect::DeviceToDeviceWritesWrongBytes)
    return enqueueCopy(stream, copy);
  engine_->enqueue(stream, [copy] {
    std::memcpy(copy.dst, copy.src, copy.bytes);
    *static_cast<unsigned char*>(copy.dst) ^= 0xff;
  });
}

}  // namespace testdev
