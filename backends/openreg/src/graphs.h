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
// Random fills: every replay draws new numbers, as running the fills again
// would (and as the CUDA and OpenCL backends' graphs do). A captured fill
// claims nothing; it reads its position from a slot of device memory,
// [seed, base offset], one per (graph, generator), from the capture's pool,
// plus its offset inside the graph (kit::CapturedPhilox keeps the
// bookkeeping). replay() claims the graph's draw from each generator, in
// program order with uncaptured fills, and enqueues the write of each slot
// ahead of the graph's operations. A replay on another stream than the
// graph's previous one first waits (on the host) for that replay to finish,
// so that it still reads its own positions. A replay that fails midway (a
// generator's draw would pass 2^64 - 1, the device is lost, no worker thread
// starts) keeps what it claimed, as the CUDA and OpenCL backends' do: the
// generators claimed before the failure stay moved, and the operations
// already enqueued still run and count as the graph's last replay.
//
// States: Empty -> (captureBegin) Capturing -> (captureEnd) Captured
// -> (instantiate) Instantiated; graphReset returns to Empty from any state
// but Capturing. Calls in the wrong state throw InvalidArgument saying what
// to call first.
//
// Thread-safety: all members are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "accel/graph.h"
#include "accel/hook_catalogue.h"
#include "accel/kit/captured_philox.h"
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
  // Throws InvalidArgument for an unknown graph, one not instantiated, or a
  // draw past 2^64 - 1; DeviceError for a lost device or a worker thread
  // that cannot start.
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
    // The captured fills' draws (null when the graph has none).
    std::shared_ptr<kit::CapturedPhilox> philox;
    // Where the last replay ran and its last operation's ticket: a replay
    // elsewhere waits for it before writing the slots.
    StreamQueue* last_queue = nullptr;
    std::uint64_t last_ticket = 0;
  };

  [[nodiscard]] std::shared_ptr<Graph> find(GraphId graph, HookId hook) const;
  // Drops the operations and the pool. Requires graph.mutex; not Capturing.
  void resetLocked(Graph& graph) noexcept;

  Runtime& runtime_;
  IdTable<GraphId, Graph> graphs_;
};

}  // namespace accel::openreg::detail
