#include "graphs.h"

#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "runtime.h"

namespace accel::openreg::detail {
namespace {

// Hook names in messages come from the catalogue.
constexpr std::string_view name(HookId hook) { return hookInfo(hook).name; }

// What to do with a graph that cannot be replayed yet (only built on failure).
std::string notReplayableAdvice(bool captured) {
  if (captured) {
    return accel::detail::concat("; call ", name(HookId::graphInstantiate),
                                 " first (it was created with keep_graph)");
  }
  return accel::detail::concat("; capture it (", name(HookId::graphCaptureBegin), " ... ",
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
  throw InvalidArgument(accel::detail::concat(
      name(hook), "(): openreg has no graph ", graph,
      " (never created, or destroyed); create one with ", name(HookId::graphCreate)));
}

void Graphs::destroy(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphDestroy);
  {
    std::lock_guard<std::mutex> lock(graph->mutex);
    if (graph->state == State::Capturing) {
      // Abandon the capture so that the stream does not stay in capture mode.
      graph->stream->endCapture(graph->capture);
      runtime_.cachingAllocator().endAllocateToPool(graph->device, graph->pool,
                                                    graph->stream->stream());
      graph->capture.reset();
      graph->state = State::Empty;
    }
    resetLocked(*graph);
  }
  (void)graphs_.take(id);
}

void Graphs::captureBegin(GraphId id, MempoolId pool, CaptureMode mode) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphCaptureBegin);
  const DeviceIndex index = threadCurrentDevice();
  DeviceState& device = runtime_.device(index, name(HookId::graphCaptureBegin));
  StreamQueue& queue = runtime_.currentQueue(index, name(HookId::graphCaptureBegin));
  ACCEL_CHECK(
      queue.stream().id != kDefaultStreamId, InvalidArgument,
      name(HookId::graphCaptureBegin), "(): the current stream of ", device.device,
      " is its default stream, which cannot be captured; make a stream from ",
      name(HookId::getNewStream), "() current (accel::StreamGuard) before capturing");
  device.faults.checkNotLost(name(HookId::graphCaptureBegin));
  std::lock_guard<std::mutex> lock(graph->mutex);
  ACCEL_CHECK(graph->state == State::Empty, InvalidArgument,
              name(HookId::graphCaptureBegin), "(): graph ", id, " is ",
              stateName(static_cast<int>(graph->state)),
              "; a graph holds one capture: call ", name(HookId::graphReset),
              " first, or create another graph");
  memory::CachingAllocator& allocator = runtime_.cachingAllocator();
  const MempoolId chosen = pool.isDefault() ? allocator.createPool() : pool;
  auto capture = std::make_shared<Capture>();
  capture->graph = id;
  capture->mode = mode;
  capture->thread = std::this_thread::get_id();
  capture->pool = chosen;
  allocator.retainPool(index, chosen);
  try {
    allocator.beginAllocateToPool(index, chosen, queue.stream());
    try {
      queue.beginCapture(capture);
    } catch (...) {
      allocator.endAllocateToPool(index, chosen, queue.stream());
      throw;
    }
  } catch (...) {
    allocator.releasePool(index, chosen);
    throw;
  }
  graph->state = State::Capturing;
  graph->device = index;
  graph->stream = &queue;
  graph->pool = chosen;
  graph->capture = std::move(capture);
}

void Graphs::captureEnd(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphCaptureEnd);
  std::lock_guard<std::mutex> lock(graph->mutex);
  ACCEL_CHECK(graph->state == State::Capturing, InvalidArgument,
              name(HookId::graphCaptureEnd), "(): graph ", id, " is ",
              stateName(static_cast<int>(graph->state)), ", not capturing; call ",
              name(HookId::graphCaptureBegin), " first");
  graph->stream->endCapture(graph->capture);
  runtime_.cachingAllocator().endAllocateToPool(graph->device, graph->pool,
                                                graph->stream->stream());
  std::vector<Operation> operations;
  std::string invalidated;
  {
    std::lock_guard<std::mutex> capture_lock(graph->capture->mutex);
    operations = std::move(graph->capture->operations);
    invalidated = std::move(graph->capture->invalidated);
  }
  std::shared_ptr<kit::CapturedPhilox> philox = graph->capture->philox;
  graph->capture.reset();
  graph->state = State::Captured;
  if (!invalidated.empty()) {
    operations.clear();
    philox.reset();  // its slots are in the pool: freed before it is released
    resetLocked(*graph);
    throw DeviceError(
        accel::detail::concat(name(HookId::graphCaptureEnd), "(): the capture of graph ",
                              id, " was invalidated and is discarded: ", invalidated));
  }
  graph->operations = std::move(operations);
  if (!philox->empty()) graph->philox = std::move(philox);
  if (!graph->keep_graph) graph->state = State::Instantiated;
}

void Graphs::instantiate(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphInstantiate);
  std::lock_guard<std::mutex> lock(graph->mutex);
  if (graph->state == State::Instantiated) return;
  ACCEL_CHECK(graph->state == State::Captured, InvalidArgument,
              name(HookId::graphInstantiate), "(): graph ", id, " is ",
              stateName(static_cast<int>(graph->state)), "; capture it (",
              name(HookId::graphCaptureBegin), " ... ", name(HookId::graphCaptureEnd),
              ") first");
  graph->state = State::Instantiated;
}

void Graphs::replay(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphReplay);
  std::lock_guard<std::mutex> lock(graph->mutex);
  ACCEL_CHECK(graph->state == State::Instantiated, InvalidArgument,
              name(HookId::graphReplay), "(): graph ", id, " is ",
              stateName(static_cast<int>(graph->state)),
              notReplayableAdvice(graph->state == State::Captured));
  DeviceState& device = runtime_.device(graph->device, name(HookId::graphReplay));
  StreamQueue& queue = runtime_.currentQueue(graph->device, name(HookId::graphReplay));
  device.faults.beginOperation(name(HookId::graphReplay));
  if (graph->philox != nullptr) {
    // The previous replay, on another stream, must have read its positions
    // before this one overwrites them (on one stream the queue orders them).
    if (graph->last_queue != nullptr && graph->last_queue != &queue) {
      graph->last_queue->waitFor(graph->last_ticket);
    }
  }
  std::uint64_t ticket = 0;
  try {
    if (graph->philox != nullptr) {
      graph->philox->advance([&](void* slot, PhiloxPosition from) {
        Operation write;
        write.name = "the Philox position of a graph replay";
        write.buffers.push_back(runtime_.resolveOn(
            device, slot, kit::CapturedPhilox::kSlotBytes, name(HookId::graphReplay)));
        write.body = [words = static_cast<std::uint64_t*>(slot), from] {
          words[0] = from.seed;
          words[1] = from.offset;
        };
        ticket = queue.enqueue(std::move(write));
      });
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
  ACCEL_CHECK(graph->state != State::Capturing, InvalidArgument, name(HookId::graphReset),
              "(): graph ", id, " is capturing; call ", name(HookId::graphCaptureEnd),
              " first");
  resetLocked(*graph);
}

MempoolId Graphs::pool(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphPool);
  std::lock_guard<std::mutex> lock(graph->mutex);
  return graph->pool;
}

void Graphs::resetLocked(Graph& graph) noexcept {
  graph.operations.clear();  // releases the blocks they held, into the pool
  graph.philox.reset();      // the slots, likewise
  graph.last_queue = nullptr;
  graph.last_ticket = 0;
  if (!graph.pool.isDefault()) {
    // Returns the pool's free segments once no graph uses it.
    runtime_.cachingAllocator().releasePool(graph.device, graph.pool);
  }
  graph.pool = {};
  graph.stream = nullptr;
  graph.state = State::Empty;
}

}  // namespace accel::openreg::detail
