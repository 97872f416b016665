// Graphs: openreg's graphs hook group.
//
// A graph captures the operations enqueued on one stream (the calling
// thread's current stream of its current device at graphCaptureBegin, which
// must not be the default stream) until graphCaptureEnd. Instantiation checks
// the capture and makes it replayable; graphReplay enqueues the recorded
// operations, in order, on the calling thread's current stream of the graph's
// device. With keep_graph == false, graphCaptureEnd instantiates at once (as
// PyTorch's CUDAGraph does); with true, graphInstantiate must be called.
//
// Allocations made while a capture is attached to the allocating thread's
// current stream come from the capture's private pool (graphPool) of the core
// caching allocator (beginAllocateToPool), shared by every graph captured
// with the same MempoolId; each graph retains the pool, whose memory stays
// reserved until the last such graph is reset or destroyed, so replays can
// use the addresses baked into the graph.
//
// States: Empty -> (captureBegin) Capturing -> (captureEnd) Captured
// -> (instantiate) Instantiated; graphReset returns to Empty from any state
// but Capturing. Calls in the wrong state throw InvalidArgument saying what
// to call first.
//
// Thread-safety: all members are thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "accel/graph.h"
#include "accel/hook_catalogue.h"
#include "id_table.h"
#include "operation.h"
#include "stream_queue.h"

namespace accel::openreg::detail {

class Runtime;

class Graphs {
 public:
  explicit Graphs(Runtime& runtime) noexcept : runtime_(runtime) {}

  [[nodiscard]] GraphId create(bool keep_graph);
  void destroy(GraphId graph);
  void captureBegin(GraphId graph, MempoolId pool, CaptureMode mode);
  void captureEnd(GraphId graph);
  void instantiate(GraphId graph);
  void replay(GraphId graph);
  void reset(GraphId graph);
  [[nodiscard]] MempoolId pool(GraphId graph);

 private:
  enum class State { Empty, Capturing, Captured, Instantiated };

  struct Graph {
    bool keep_graph = false;
    std::mutex mutex;  // guards everything below
    State state = State::Empty;
    DeviceIndex device = 0;
    StreamQueue* stream = nullptr;  // the capturing stream
    MempoolId pool;                 // held from captureBegin until reset
    std::shared_ptr<Capture> capture;
    std::vector<Operation> operations;
  };

  [[nodiscard]] std::shared_ptr<Graph> find(GraphId graph, HookId hook) const;
  // Drops the operations and the pool. Requires graph.mutex; not Capturing.
  void resetLocked(Graph& graph) noexcept;

  Runtime& runtime_;
  IdTable<GraphId, Graph> graphs_;
};

}  // namespace accel::openreg::detail
