#include "graphs.h"

#include <cuda_runtime_api.h>

#include <memory>

#include "accel/adapter/failure.h"
#include "capture_registry.h"
#include "captured_philox.h"
#include "cuda_error.h"
#include "cuda_memory.h"
#include "current_device.h"
#include "cxx_boundary.h"
#include "record_table.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

enum class GraphState { Empty, Capturing, Captured, Instantiated };

struct GraphRecord {
  bool keep_graph = false;
  GraphState state = GraphState::Empty;
  DeviceIndex device = 0;
  Stream stream;
  MempoolId pool;
  bool pool_retained = false;         // allocations of the capture are in `pool`
  unsigned long long capture_id = 0;  // CUDA's, while capturing
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  // Captured fills' positions, advanced per replay (shared: records copy).
  std::shared_ptr<kit::CapturedPhilox> philox;
  // Recorded after each replay of a graph with captured fills; the next
  // replay waits for it (graphReplay).
  cudaEvent_t replayed = nullptr;
};

RecordTable<GraphId, GraphRecord>& graphTable() {
  static auto* const table =
      new RecordTable<GraphId, GraphRecord>("graph");  // never destroyed
  return *table;
}

cudaStreamCaptureMode toCuda(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::ThreadLocal:
      return cudaStreamCaptureModeThreadLocal;
    case CaptureMode::Relaxed:
      return cudaStreamCaptureModeRelaxed;
    default:
      return cudaStreamCaptureModeGlobal;
  }
}

void release(GraphRecord& record) noexcept {
  if (record.replayed != nullptr) {
    try {
      DeviceContext context(record.device);
      (void)succeeded(cudaEventDestroy(record.replayed));
    } catch (...) {
      (void)succeeded(cudaEventDestroy(record.replayed));
    }
    record.replayed = nullptr;
  }
  if (record.exec != nullptr) (void)succeeded(cudaGraphExecDestroy(record.exec));
  if (record.graph != nullptr) (void)succeeded(cudaGraphDestroy(record.graph));
  record.exec = nullptr;
  record.graph = nullptr;
  record.state = GraphState::Empty;
  record.philox.reset();  // its slots are in the pool: freed first
  if (record.pool_retained) {
    record.pool_retained = false;
    try {
      deviceCachingAllocator().releasePool(record.device, record.pool);
    } catch (...) {
      // The pool's memory stays cached; nothing else depends on it.
    }
  }
}

// Makes the executable graph of a finished capture (the table is locked);
// a graph not kept is dropped once instantiated.
void instantiate(GraphRecord& record) {
  DeviceContext context(record.device);
  checkCuda(cudaGraphInstantiate(&record.exec, record.graph, 0), "cudaGraphInstantiate");
  if (!record.keep_graph) {
    (void)succeeded(cudaGraphDestroy(record.graph));
    record.graph = nullptr;
  }
  record.state = GraphState::Instantiated;
}

}  // namespace

GraphId graphCreate(bool keep_graph) {
  GraphRecord record;
  record.keep_graph = keep_graph;
  return graphTable().add(record);
}

void graphDestroy(GraphId graph) {
  graphTable().removeWith(graph, [&](GraphRecord& record) {
    ACCEL_ADAPTER_CHECK(record.state != GraphState::Capturing, adapter::InvalidArgument,
                        "graph ", graph,
                        " is capturing; end the capture before destroying it");
    release(record);
  });
}

void graphCaptureBegin(GraphId graph, MempoolId pool, CaptureMode mode) {
  const DeviceIndex device = currentDevice();
  const Stream stream = toLibrary(currentStream(device));
  ACCEL_ADAPTER_CHECK(
      stream.id != kDefaultStreamId, adapter::InvalidArgument,
      "capture: the current stream of cuda:", static_cast<int>(device),
      " is the default stream, which CUDA cannot capture; make a stream from "
      "the stream pool current first (StreamGuard)");
  graphTable().with(graph, [&](GraphRecord& record) {
    ACCEL_ADAPTER_CHECK(record.state == GraphState::Empty, adapter::InvalidArgument,
                        "graph ", graph, " already holds a capture; reset it first");
    // The capture's allocations come from a private pool (the one given, to
    // share it with other graphs, or a new one), kept until the graph is
    // reset or destroyed: replays write to the addresses captured.
    memory::CachingAllocator& allocator = deviceCachingAllocator();
    const MempoolId chosen = pool.isDefault() ? allocator.createPool() : pool;
    allocator.retainPool(device, chosen);
    record.device = device;
    record.pool = chosen;
    record.pool_retained = true;
    DeviceContext context(device);
    try {
      allocator.beginAllocateToPool(device, chosen, stream);
    } catch (...) {
      release(record);
      throw;
    }
    // Captures count as underway before CUDA's begins: another thread's
    // allocator must not call cudaMalloc or cudaFree, nor query an event,
    // once the capture exists, even before its id is known here.
    captureBeginning();
    try {
      checkCuda(cudaStreamBeginCapture(nativeStream(toAdapter(stream)), toCuda(mode)),
                "cudaStreamBeginCapture");
    } catch (...) {
      captureAbandoned();
      allocator.endAllocateToPool(device, chosen, stream);
      release(record);
      throw;
    }
    // The allocator's view of the capture (capture_registry.h).
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    bool registered = false;
    try {
      checkCuda(cudaStreamGetCaptureInfo(nativeStream(toAdapter(stream)), &status,
                                         &record.capture_id),
                "cudaStreamGetCaptureInfo");
      captureBegan(record.capture_id, device, chosen, stream);
      registered = true;
      capturedPhiloxBegan(record.capture_id);
    } catch (...) {
      if (registered) {
        (void)captureEnded(record.capture_id);
      } else {
        captureAbandoned();
      }
      cudaGraph_t abandoned = nullptr;
      if (succeeded(cudaStreamEndCapture(nativeStream(toAdapter(stream)), &abandoned)) &&
          abandoned != nullptr) {
        (void)succeeded(cudaGraphDestroy(abandoned));
      }
      allocator.endAllocateToPool(device, chosen, stream);
      release(record);
      throw;
    }
    record.state = GraphState::Capturing;
    record.stream = stream;
  });
}

void graphCaptureEnd(GraphId graph) {
  graphTable().with(graph, [&](GraphRecord& record) {
    ACCEL_ADAPTER_CHECK(record.state == GraphState::Capturing, adapter::InvalidArgument,
                        "graph ", graph, " is not capturing; begin a capture first");
    DeviceContext context(record.device);
    cudaGraph_t captured = nullptr;
    const cudaError_t status =
        cudaStreamEndCapture(nativeStream(toAdapter(record.stream)), &captured);
    if (status == cudaErrorStreamCaptureWrongThread) {
      // The capture goes on (CUDA keeps it open): nothing changes here.
      checkCuda(status,
                "cudaStreamEndCapture (end the capture on the thread that began "
                "it, or capture in CaptureMode::Relaxed)");
    }
    memory::CachingAllocator& allocator = deviceCachingAllocator();
    record.philox = capturedPhiloxEnded(record.capture_id);
    for (const Stream& forked : captureEnded(record.capture_id)) {
      allocator.endAllocateToPool(record.device, record.pool, forked);
    }
    allocator.endAllocateToPool(record.device, record.pool, record.stream);
    record.state = GraphState::Empty;
    if (status != cudaSuccess) {
      // Nothing to replay: the pool and the Philox slots go now, as a reset
      // would (a next capture would otherwise retain another pool and never
      // release this one).
      if (captured != nullptr) (void)succeeded(cudaGraphDestroy(captured));
      release(record);
      checkCuda(status, "cudaStreamEndCapture (the capture was invalidated)");
    }
    record.graph = captured;
    record.state = GraphState::Captured;
    // Without keep_graph the graph is replayable at once: instantiate it now
    // and drop the captured graph (graphInstantiate is for kept graphs).
    if (!record.keep_graph) instantiate(record);
  });
}

void graphInstantiate(GraphId graph) {
  graphTable().with(graph, [&](GraphRecord& record) {
    if (record.state == GraphState::Instantiated) return;  // done at capture end
    ACCEL_ADAPTER_CHECK(record.state == GraphState::Captured, adapter::InvalidArgument,
                        "graph ", graph, " has no finished capture to instantiate");
    instantiate(record);
  });
}

void graphReplay(GraphId graph) {
  graphTable().with(graph, [&](GraphRecord& record) {
    ACCEL_ADAPTER_CHECK(record.state == GraphState::Instantiated,
                        adapter::InvalidArgument, "graph ", graph,
                        " is not instantiated; instantiate it after the capture");
    // On the thread's current stream of the graph's device, like any other
    // work (the stream captured on may be busy with unrelated work now).
    // Captured fills draw new numbers: their positions are claimed from
    // their generators and written ahead of the graph, in stream order.
    DeviceContext context(record.device);
    const cudaStream_t stream = nativeStream(currentStream(record.device));
    if (!record.philox) {
      checkCuda(cudaGraphLaunch(record.exec, stream), "cudaGraphLaunch");
      return;
    }
    // The graph's fills read their positions from slots every replay
    // shares: a replay on another stream must not write them before the
    // previous replay's fills have read them, so it waits for that replay.
    if (record.replayed == nullptr) {
      checkCuda(cudaEventCreateWithFlags(&record.replayed, cudaEventDisableTiming),
                "cudaEventCreateWithFlags (a graph's replay order)");
    } else {
      checkCuda(cudaStreamWaitEvent(stream, record.replayed, 0),
                "cudaStreamWaitEvent (after the graph's previous replay)");
    }
    advanceCapturedPhilox(*record.philox, stream);
    checkCuda(cudaGraphLaunch(record.exec, stream), "cudaGraphLaunch");
    checkCuda(cudaEventRecord(record.replayed, stream),
              "cudaEventRecord (a graph's replay order)");
  });
}

void graphReset(GraphId graph) {
  graphTable().with(graph, [&](GraphRecord& record) {
    ACCEL_ADAPTER_CHECK(record.state != GraphState::Capturing, adapter::InvalidArgument,
                        "graph ", graph,
                        " is capturing; end the capture before resetting it");
    release(record);
  });
}

MempoolId graphPool(GraphId graph) {
  return graphTable().with(graph, [](GraphRecord& record) { return record.pool; });
}

}  // namespace accel::cuda::detail
