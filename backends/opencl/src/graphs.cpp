#include "graphs.h"

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "command_buffers.h"
#include "loader.h"
#include "opencl_error.h"
#include "queue_tails.h"
#include "recording.h"
#include "streams.h"
#include "thread_current.h"

namespace accel::opencl::detail {
namespace {

enum class State { Empty, Capturing, Captured, Instantiated };

const char* stateName(State state) {
  static constexpr const char* kNames[] = {"empty", "capturing", "captured",
                                           "instantiated"};
  return kNames[static_cast<int>(state)];
}

struct Graph {
  bool keep_graph = false;
  std::mutex mutex;  // guards everything below, across the OpenCL calls
  State state = State::Empty;
  DeviceIndex device = 0;
  Stream stream{};  // the captured stream
  std::shared_ptr<Recording> recording;
  // The events of the replays that may still be pending, retained, the
  // latest last (replays on two queues need not finish in order; with
  // random fills each waits for the one before).
  std::vector<cl_event> replays;
};

struct GraphTable {
  std::mutex mutex;
  GraphId next = 1;
  std::unordered_map<GraphId, std::shared_ptr<Graph>> graphs;
};

GraphTable& table() {
  static auto* const graphs = new GraphTable();  // never destroyed
  return *graphs;
}

std::shared_ptr<Graph> find(GraphId id, HookId hook) {
  GraphTable& t = table();
  std::lock_guard lock(t.mutex);
  auto found = t.graphs.find(id);
  ACCEL_ADAPTER_CHECK(found != t.graphs.end(), InvalidArgument, name(hook),
                      "(): opencl has no graph ", id,
                      " (never created, or destroyed); create one "
                      "with ",
                      name(HookId::graphCreate));
  return found->second;
}

// Waits for every pending replay (their commands use the pool's memory and
// the recording's buffers). Requires graph.mutex. Never throws.
void waitForReplays(Graph& graph) noexcept {
  const Loader& l = loader();
  for (cl_event replay : graph.replays) {
    (void)l.clWaitForEvents(1, &replay);
    (void)l.clReleaseEvent(replay);
  }
  graph.replays.clear();
}

// The latest replay's event, or null. Requires graph.mutex.
cl_event lastReplay(const Graph& graph) noexcept {
  return graph.replays.empty() ? nullptr : graph.replays.back();
}

// Keeps `replay` (retained; taken over) as the latest replay, and drops the
// replays already finished, so that the list stays as short as the work in
// flight. Requires graph.mutex and room for one more event reserved in
// graph.replays (graphReplay reserves it before it claims anything). Never
// throws.
void addReplay(Graph& graph, cl_event replay) noexcept {
  const Loader& l = loader();
  std::erase_if(graph.replays, [&](cl_event pending) {
    cl_int status = CL_QUEUED;
    if (l.clGetEventInfo(pending, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                         &status, nullptr) != CL_SUCCESS ||
        status > CL_COMPLETE) {
      return false;  // running, or unknown: kept until waited for
    }
    (void)l.clReleaseEvent(pending);  // complete, or failed
    return true;
  });
  graph.replays.push_back(replay);  // reserved: does not allocate
}

// Back to Empty, releasing what a capture made. Requires graph.mutex; the
// graph is not capturing. Never throws.
void resetLocked(Graph& graph) noexcept {
  waitForReplays(graph);
  graph.recording.reset();
  graph.state = State::Empty;
}

// Ends an active capture: commands on the stream go back to the queue (the
// core ends the private pool's routing). Requires graph.mutex. Never throws.
void stopCapturing(Graph& graph) noexcept { endRecording(graph.stream); }

// A replay failed after the captured fills' positions began to be written:
// the writes already enqueued on `queue` (and the command buffer, if `done`
// names it) still run, on the graph's slots, so they become the graph's
// latest replay: graphReset and graphDestroy wait for them before freeing the
// slots, and the next replay's writes wait for them. A marker after them
// (and after the previous replay, which the writes waited for, in case none
// was enqueued); when even the marker fails, the queue is finished on the
// host instead. Requires graph.mutex. Never throws.
void trackFailedReplay(Graph& graph, cl_command_queue queue, cl_event done) noexcept {
  const Loader& l = loader();
  cl_event pending = done;
  if (pending == nullptr) {
    cl_event previous = lastReplay(graph);
    if (l.clEnqueueMarkerWithWaitList(queue, previous != nullptr ? 1 : 0,
                                      previous != nullptr ? &previous : nullptr,
                                      &pending) != CL_SUCCESS) {
      (void)l.clFinish(queue);  // the writes are done (or the queue is lost)
      return;
    }
  }
  (void)l.clFlush(queue);
  addReplay(graph, pending);
}

}  // namespace

GraphId graphCreate(bool keep_graph) {
  auto graph = std::make_shared<Graph>();
  graph->keep_graph = keep_graph;
  GraphTable& t = table();
  std::lock_guard lock(t.mutex);
  const GraphId id = t.next++;
  t.graphs.emplace(id, std::move(graph));
  return id;
}

void graphDestroy(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphDestroy);
  {
    std::lock_guard lock(graph->mutex);
    if (graph->state == State::Capturing) stopCapturing(*graph);  // abandoned
    resetLocked(*graph);
  }
  GraphTable& t = table();
  std::lock_guard lock(t.mutex);
  t.graphs.erase(id);
}

void graphCaptureBegin(const adapter::Core& core, GraphId id, Stream stream) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphCaptureBegin);
  const DeviceIndex device = stream.device;
  ACCEL_ADAPTER_CHECK(
      stream.id != kDefaultStreamId, InvalidArgument, name(HookId::graphCaptureBegin),
      "(): the current stream of ", deviceLabel(device),
      " is its default stream, which the backend keeps for its own blocking "
      "work and does not capture; make a stream from ",
      name(HookId::getNewStream), "() current (accel::StreamGuard) first");
  const CommandBufferSupport& support = commandBufferSupport(device);
  ACCEL_ADAPTER_CHECK(support.usable, NotSupported, "'opencl' does not support ",
                      name(HookId::graphCaptureBegin), "() on ", deviceLabel(device),
                      ": ", support.reason);
  std::lock_guard lock(graph->mutex);
  ACCEL_ADAPTER_CHECK(graph->state == State::Empty, InvalidArgument,
                      name(HookId::graphCaptureBegin), "(): graph ", id, " is ",
                      stateName(graph->state), "; a graph holds one capture: call ",
                      name(HookId::graphReset), " first, or create another graph");
  auto recording = std::make_shared<Recording>(core, stream);
  beginRecording(recording);
  graph->state = State::Capturing;
  graph->device = device;
  graph->stream = stream;
  graph->recording = std::move(recording);
}

void graphCaptureEnd(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphCaptureEnd);
  std::lock_guard lock(graph->mutex);
  ACCEL_ADAPTER_CHECK(graph->state == State::Capturing, InvalidArgument,
                      name(HookId::graphCaptureEnd), "(): graph ", id, " is ",
                      stateName(graph->state), ", not capturing; call ",
                      name(HookId::graphCaptureBegin), " first");
  stopCapturing(*graph);
  graph->state = State::Captured;
  try {
    graph->recording->finalize();
  } catch (...) {
    resetLocked(*graph);
    throw;
  }
  if (!graph->keep_graph) graph->state = State::Instantiated;
}

void graphInstantiate(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphInstantiate);
  std::lock_guard lock(graph->mutex);
  if (graph->state == State::Instantiated) return;  // done at capture end
  ACCEL_ADAPTER_CHECK(
      graph->state == State::Captured, InvalidArgument, name(HookId::graphInstantiate),
      "(): graph ", id, " is ", stateName(graph->state), "; capture it (",
      name(HookId::graphCaptureBegin), " ... ", name(HookId::graphCaptureEnd), ") first");
  graph->state = State::Instantiated;  // finalized at capture end
}

void graphReplay(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphReplay);
  std::lock_guard lock(graph->mutex);
  ACCEL_ADAPTER_CHECK(
      graph->state == State::Instantiated, InvalidArgument, name(HookId::graphReplay),
      "(): graph ", id, " is ", stateName(graph->state),
      graph->state == State::Captured
          ? std::string("; call ") + std::string(name(HookId::graphInstantiate)) +
                " first (it was created with keep_graph)"
          : std::string("; capture it first"));
  const Loader& l = loader();
  const CommandBufferSupport& support = graph->recording->support();
  const DeviceIndex device = graph->device;
  cl_command_buffer_khr buffer = graph->recording->commandBuffer();
  if (!support.simultaneous_use) waitForReplays(*graph);
  // Room for this replay's event, before anything is claimed or enqueued.
  graph->replays.reserve(graph->replays.size() + 1);
  cl_command_queue queue = nativeQueue(makeStream(device, currentStream(device)));
  // A replay is several commands, on this queue and (when only the recorded
  // queue takes the command buffer) on the recording's: queries of both ask
  // the queues after it, whether it succeeds or not (queue_tails.h).
  const cl_command_queue recorded = nativeQueue(graph->recording->stream());
  struct MarkUntracked {
    cl_command_queue a, b;
    ~MarkUntracked() {
      queueTail(a).markUntracked();
      queueTail(b).markUntracked();
    }
  } const mark_untracked{queue, recorded};
  // The captured fills' positions for this replay, written ahead of it on
  // the queue, after the previous replay (which may be pending on another
  // queue and still has to read its own).
  cl_event done = nullptr;
  try {
    graph->recording->writePositions(queue, lastReplay(*graph), device);
    cl_int status = support.enqueue(1, &queue, buffer, 0, nullptr, &done);
    if (status == CL_INCOMPATIBLE_COMMAND_QUEUE_KHR) {
      // Only the recorded queue takes it: run it there, after the current
      // stream's work so far, and make the current stream wait for it.
      cl_event before = nullptr;
      checkCl(l.clEnqueueMarkerWithWaitList(queue, 0, nullptr, &before),
              "clEnqueueMarkerWithWaitList", HookId::graphReplay, device);
      status = support.enqueue(0, nullptr, buffer, 1, &before, &done);
      (void)l.clReleaseEvent(before);
      if (status == CL_SUCCESS) {
        checkCl(l.clEnqueueBarrierWithWaitList(queue, 1, &done, nullptr),
                "clEnqueueBarrierWithWaitList", HookId::graphReplay, device);
      }
    }
    checkCl(status, "clEnqueueCommandBufferKHR", HookId::graphReplay, device);
  } catch (...) {
    trackFailedReplay(*graph, queue, done);
    throw;
  }
  (void)l.clFlush(queue);
  addReplay(*graph, done);
}

void graphReset(GraphId id) {
  std::shared_ptr<Graph> graph = find(id, HookId::graphReset);
  std::lock_guard lock(graph->mutex);
  ACCEL_ADAPTER_CHECK(graph->state != State::Capturing, InvalidArgument,
                      name(HookId::graphReset), "(): graph ", id, " is capturing; call ",
                      name(HookId::graphCaptureEnd), " first");
  resetLocked(*graph);
}

}  // namespace accel::opencl::detail
