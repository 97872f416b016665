// Graphs: openreg's graphs hook group.
//
// A graph captures the operations enqueued on one stream (the stream the core
// names at graphCaptureBegin: the calling thread's current stream of its
// current device, which must not be the default stream) until
// graphCaptureEnd. Instantiation checks the capture and makes it replayable;
// graphReplay enqueues the recorded operations, in order, on the calling
// thread's current stream of the graph's device. With keep_graph == false,
// graphCaptureEnd instantiates at once (as PyTorch's CUDAGraph does); with
// true, graphInstantiate must be called.
//
// The core keeps each capture's private pool (allocations on the capturing
// stream come from it until the capture ends, and its memory stays reserved
// until the graph is reset or destroyed), so replays can use the addresses
// baked into the graph; openreg keeps only the operations.
//
// Random fills: every replay draws new numbers, as running the fills again
// would (and as the CUDA and OpenCL backends' graphs do). A captured fill
// reads its position from a slot (accel/adapter/captured_draws.h); replay()
// reserves each captured fill's draw, in program order with uncaptured
// fills, and enqueues the write of each slot ahead of the graph's operations.
// A replay on another stream than the graph's previous one first waits (on
// the host) for that replay to finish, so that it still reads its own
// positions. A replay that fails midway (a generator's draw would pass
// 2^64 - 1, the device is lost, no worker thread starts) keeps what it
// claimed, as the CUDA and OpenCL backends' do.
//
// States: Empty -> (captureBegin) Capturing -> (captureEnd) Captured
// -> (instantiate) Instantiated; graphReset returns to Empty from any state
// but Capturing. Calls in the wrong state throw InvalidArgument saying what
// to call first.
//
// Given the device table (the capturing stream's queue, the device a replay
// runs on) and the core's services (the Philox draws of captured fills),
// nothing else.
//
// Thread-safety: all members are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "accel/adapter/captured_draws.h"
#include "accel/adapter/core.h"
#include "id_table.h"
#include "operation.h"
#include "stream_queue.h"
#include "types.h"

namespace accel::openreg::detail {

class DeviceTable;

class Graphs {
 public:
  // `devices` and `core` must outlive this object (the backend owns them).
  Graphs(const DeviceTable& devices, const adapter::Core& core) noexcept
      : devices_(devices), core_(core) {}

  [[nodiscard]] GraphId create(bool keep_graph);
  void destroy(GraphId graph);
  void captureBegin(GraphId graph, Stream stream, CaptureMode mode);
  void captureEnd(GraphId graph);
  void instantiate(GraphId graph);
  // Throws InvalidArgument for an unknown graph, one not instantiated, or a
  // draw past 2^64 - 1; DeviceError for a lost device or a worker thread
  // that cannot start.
  void replay(GraphId graph);
  void reset(GraphId graph);

 private:
  enum class State { Empty, Capturing, Captured, Instantiated };
  struct Graph {
    bool keep_graph = false;
    std::mutex mutex;  // guards everything below
    State state = State::Empty;
    DeviceIndex device = 0;
    StreamQueue* stream = nullptr;  // the capturing stream
    std::shared_ptr<Capture> capture;
    std::vector<Operation> operations;
    // The captured fills' draws (null when the graph has none).
    std::shared_ptr<adapter::CapturedDraws> draws;
    // Where the last replay ran and its last operation's ticket: a replay
    // elsewhere waits for it before writing the slots.
    StreamQueue* last_queue = nullptr;
    std::uint64_t last_ticket = 0;
  };

  [[nodiscard]] std::shared_ptr<Graph> find(GraphId graph, HookId hook) const;
  // Drops the operations. Requires graph.mutex; not Capturing.
  void resetLocked(Graph& graph) noexcept;

  const DeviceTable& devices_;
  const adapter::Core& core_;
  IdTable<GraphId, Graph> graphs_;
};

}  // namespace accel::openreg::detail
