#include "graphs.h"

#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "device_table.h"

namespace accel::openreg::detail {
namespace {

// What to do with a graph that cannot be replayed yet (only built on failure).
std::string notReplayableAdvice(bool captured) {
  if (captured) {
    return concat("; call ", name(HookId::graphInstantiate),
                  " first (it was created with keep_graph)");
  }
  return concat("; capture it (", name(HookId::graphCaptureBegin), " ... ",
                name(HookId::graphCaptureEnd), ") first");
}

const char* stateName(int state) {
  static constexpr const char* kNames[] = {"empty", "capturing", "captured",
                                           "instantiated"};
  return kNames[state];
}

}  // namespace

GraphId Graphs::create(bool keep_graph) {
  return graphs_.add([&](GraphId) {
    auto graph = std::make_shared<Graph>();
    graph->keep_graph = keep_graph;
    return graph;
  });
}

std::shared_ptr<Graphs::Graph> Graphs::find(GraphId graph, HookId hook) const {
  if (std::shared_ptr<Graph> found = graphs_.find(graph)) return found;
  throw InvalidArgument(concat(name(hook), "(): openreg has no graph ", graph,
                               " (never created, or destroyed); create one with ",
                               name(HookId::graphCreate)));
}

void Graphs::destroy(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphDestroy);
  {
    std::lock_guard<std::mutex> lock(graph->mutex);
    if (graph->state == State::Capturing) {
      // Abandon the capture so that the stream does not stay in capture mode.
      graph->stream->endCapture(graph->capture);
      graph->capture.reset();
      graph->state = State::Empty;
    }
    resetLocked(*graph);
  }
  (void)graphs_.take(id);
}

void Graphs::captureBegin(GraphId id, Stream stream, CaptureMode mode) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphCaptureBegin);
  DeviceState& device = devices_.device(stream.device, name(HookId::graphCaptureBegin));
  StreamQueue& queue = devices_.queue(stream, name(HookId::graphCaptureBegin));
  ACCEL_ADAPTER_CHECK(
      stream.id != kDefaultStreamId, InvalidArgument, name(HookId::graphCaptureBegin),
      "(): the current stream of ", DeviceName{device.index},
      " is its default stream, which cannot be captured; make a stream from ",
      name(HookId::getNewStream), "() current (accel::StreamGuard) before capturing");
  device.faults.checkNotLost(name(HookId::graphCaptureBegin));
  std::lock_guard<std::mutex> lock(graph->mutex);
  ACCEL_ADAPTER_CHECK(graph->state == State::Empty, InvalidArgument,
                      name(HookId::graphCaptureBegin), "(): graph ", id, " is ",
                      stateName(static_cast<int>(graph->state)),
                      "; a graph holds one capture: call ", name(HookId::graphReset),
                      " first, or create another graph");
  auto capture = std::make_shared<Capture>();
  capture->graph = id;
  capture->mode = mode;
  capture->thread = std::this_thread::get_id();
  queue.beginCapture(capture);
  graph->state = State::Capturing;
  graph->device = stream.device;
  graph->stream = &queue;
  graph->capture = std::move(capture);
}

void Graphs::captureEnd(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphCaptureEnd);
  std::lock_guard<std::mutex> lock(graph->mutex);
  ACCEL_ADAPTER_CHECK(graph->state == State::Capturing, InvalidArgument,
                      name(HookId::graphCaptureEnd), "(): graph ", id, " is ",
                      stateName(static_cast<int>(graph->state)), ", not capturing; call ",
                      name(HookId::graphCaptureBegin), " first");
  graph->stream->endCapture(graph->capture);
  std::vector<Operation> operations;
  std::string invalidated;
  {
    std::lock_guard<std::mutex> capture_lock(graph->capture->mutex);
    operations = std::move(graph->capture->operations);
    invalidated = std::move(graph->capture->invalidated);
  }
  std::shared_ptr<adapter::CapturedDraws> draws = graph->capture->draws;
  graph->capture.reset();
  graph->state = State::Captured;
  if (!invalidated.empty()) {
    operations.clear();
    draws.reset();
    resetLocked(*graph);
    throw DeviceError(concat(name(HookId::graphCaptureEnd), "(): the capture of graph ",
                             id, " was invalidated and is discarded: ", invalidated));
  }
  graph->operations = std::move(operations);
  if (!draws->empty()) graph->draws = std::move(draws);
  if (!graph->keep_graph) graph->state = State::Instantiated;
}

void Graphs::instantiate(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphInstantiate);
  std::lock_guard<std::mutex> lock(graph->mutex);
  if (graph->state == State::Instantiated) return;
  ACCEL_ADAPTER_CHECK(graph->state == State::Captured, InvalidArgument,
                      name(HookId::graphInstantiate), "(): graph ", id, " is ",
                      stateName(static_cast<int>(graph->state)), "; capture it (",
                      name(HookId::graphCaptureBegin), " ... ",
                      name(HookId::graphCaptureEnd), ") first");
  graph->state = State::Instantiated;
}

void Graphs::replay(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphReplay);
  std::lock_guard<std::mutex> lock(graph->mutex);
  ACCEL_ADAPTER_CHECK(graph->state == State::Instantiated, InvalidArgument,
                      name(HookId::graphReplay), "(): graph ", id, " is ",
                      stateName(static_cast<int>(graph->state)),
                      notReplayableAdvice(graph->state == State::Captured));
  DeviceState& device = devices_.device(graph->device, name(HookId::graphReplay));
  (void)device;
  StreamQueue& queue = devices_.currentQueue(graph->device, name(HookId::graphReplay));
  device.faults.beginOperation(name(HookId::graphReplay));
  if (graph->draws != nullptr) {
    // The previous replay, on another stream, must have read its positions
    // before this one overwrites them (on one stream the queue orders them).
    if (graph->last_queue != nullptr && graph->last_queue != &queue) {
      graph->last_queue->waitFor(graph->last_ticket);
    }
  }
  std::uint64_t ticket = 0;
  try {
    if (graph->draws != nullptr) {
      for (auto& [slot, from] : graph->draws->advance(core_)) {
        Operation write;
        write.name = "the Philox position of a graph replay";
        write.is_marker = true;  // host memory: no unit, never dropped
        write.body = [slot = std::move(slot), from = from] { *slot = from; };
        ticket = queue.enqueue(std::move(write));
      }
    }
    for (const Operation& operation : graph->operations)
      ticket = queue.enqueue(operation);
  } catch (...) {
    // A failed replay keeps what it claimed, and what it enqueued still
    // runs on the graph's slots: the next replay on another stream waits
    // for it, as for a whole replay (the previous one is done: waited for
    // above).
    if (ticket != 0) {
      graph->last_queue = &queue;
      graph->last_ticket = ticket;
    }
    throw;
  }
  graph->last_queue = &queue;
  graph->last_ticket = ticket;
}

void Graphs::reset(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphReset);
  std::lock_guard<std::mutex> lock(graph->mutex);
  ACCEL_ADAPTER_CHECK(graph->state != State::Capturing, InvalidArgument,
                      name(HookId::graphReset), "(): graph ", id, " is capturing; call ",
                      name(HookId::graphCaptureEnd), " first");
  resetLocked(*graph);
}

void Graphs::resetLocked(Graph& graph) noexcept {
  graph.operations.clear();  // releases the blocks they held
  graph.draws.reset();       // and the generators
  graph.last_queue = nullptr;
  graph.last_ticket = 0;
  graph.stream = nullptr;
  graph.state = State::Empty;
}

}  // namespace accel::openreg::detail
