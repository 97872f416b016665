#include "graphs.h"

#include <cuda_runtime_api.h>

#include <memory>

#include "accel/adapter/failure.h"
#include "capture_registry.h"
#include "captured_fills.h"
#include "cuda_error.h"
#include "current_device.h"
#include "record_table.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

enum class GraphState { Empty, Capturing, Captured, Instantiated };

struct GraphRecord {
  bool keep_graph = false;
  GraphState state = GraphState::Empty;
  std::int8_t device = 0;
  adapter::Stream stream{};
  unsigned long long capture_id = 0;  // CUDA's, while capturing
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  // Captured fills' positions, advanced per replay (shared: records copy).
  std::shared_ptr<CapturedFills> fills;
  // Recorded after each replay of a graph with captured fills; the next
  // replay waits for it (graphReplay).
  cudaEvent_t replayed = nullptr;
};

RecordTable<std::uint64_t, GraphRecord>& graphTable() {
  static auto* const table =
      new RecordTable<std::uint64_t, GraphRecord>("graph");  // never destroyed
  return *table;
}

cudaStreamCaptureMode toCuda(int mode) {
  switch (mode) {
    case ACCEL_CAPTURE_THREAD_LOCAL:
      return cudaStreamCaptureModeThreadLocal;
    case ACCEL_CAPTURE_RELAXED:
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
  record.fills.reset();
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

std::uint64_t graphCreate(bool keep_graph) {
  GraphRecord record;
  record.keep_graph = keep_graph;
  return graphTable().add(record);
}

void graphDestroy(std::uint64_t graph) {
  graphTable().removeWith(graph, [&](GraphRecord& record) {
    ACCEL_ADAPTER_CHECK(record.state != GraphState::Capturing, adapter::InvalidArgument,
                        "graph ", graph,
                        " is capturing; end the capture before destroying it");
    release(record);
  });
}

void graphCaptureBegin(const adapter::Core& core, int device_count, std::uint64_t graph,
                       adapter::Stream stream, int mode) {
  ACCEL_ADAPTER_CHECK(
      stream.id != kDefaultStreamId, adapter::InvalidArgument,
      "capture: the current stream of cuda:", static_cast<int>(stream.device),
      " is the default stream, which CUDA cannot capture; make a stream from "
      "the stream pool current first (StreamGuard)");
  const cudaStream_t native = nativeStream(stream);
  graphTable().with(graph, [&](GraphRecord& record) {
    ACCEL_ADAPTER_CHECK(record.state == GraphState::Empty, adapter::InvalidArgument,
                        "graph ", graph, " already holds a capture; reset it first");
    record.device = stream.device;
    DeviceContext context(stream.device);
    // Captures count as underway before CUDA's begins: another thread's
    // allocator must not call cudaMalloc or cudaFree, nor query an event,
    // once the capture exists, even before its id is known here.
    captureBeginning(core, device_count);
    try {
      checkCuda(cudaStreamBeginCapture(native, toCuda(mode)), "cudaStreamBeginCapture");
    } catch (...) {
      captureAbandoned();
      throw;
    }
    // The memory's view of the capture (capture_registry.h), and its fills'.
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    bool registered = false;
    try {
      checkCuda(cudaStreamGetCaptureInfo(native, &status, &record.capture_id),
                "cudaStreamGetCaptureInfo");
      captureBegan(record.capture_id, stream);
      registered = true;
      capturedFillsBegan(record.capture_id, stream.device);
    } catch (...) {
      if (registered) {
        captureEnded(record.capture_id);
      } else {
        captureAbandoned();
      }
      cudaGraph_t abandoned = nullptr;
      if (succeeded(cudaStreamEndCapture(native, &abandoned)) && abandoned != nullptr) {
        (void)succeeded(cudaGraphDestroy(abandoned));
      }
      throw;
    }
    record.state = GraphState::Capturing;
    record.stream = stream;
  });
}

void graphCaptureEnd(std::uint64_t graph) {
  graphTable().with(graph, [&](GraphRecord& record) {
    ACCEL_ADAPTER_CHECK(record.state == GraphState::Capturing, adapter::InvalidArgument,
                        "graph ", graph, " is not capturing; begin a capture first");
    DeviceContext context(record.device);
    cudaGraph_t captured = nullptr;
    const cudaError_t status =
        cudaStreamEndCapture(nativeStream(record.stream), &captured);
    if (status == cudaErrorStreamCaptureWrongThread) {
      // The capture goes on (CUDA keeps it open): nothing changes here.
      checkCuda(status,
                "cudaStreamEndCapture (end the capture on the thread that began "
                "it, or capture in CaptureMode::Relaxed)");
    }
    record.fills = capturedFillsEnded(record.capture_id);
    captureEnded(record.capture_id);
    record.state = GraphState::Empty;
    if (status != cudaSuccess) {
      // Nothing to replay: the Philox slots go now, as a reset would (the
      // core gives the pool up when the plugin refuses the end).
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

void graphInstantiate(std::uint64_t graph) {
  graphTable().with(graph, [&](GraphRecord& record) {
    if (record.state == GraphState::Instantiated) return;  // done at capture end
    ACCEL_ADAPTER_CHECK(record.state == GraphState::Captured, adapter::InvalidArgument,
                        "graph ", graph, " has no finished capture to instantiate");
    instantiate(record);
  });
}

void graphReplay(const adapter::Core& core, std::uint64_t graph) {
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
    if (!record.fills) {
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
    record.fills->advance(core, stream);
    checkCuda(cudaGraphLaunch(record.exec, stream), "cudaGraphLaunch");
    checkCuda(cudaEventRecord(record.replayed, stream),
              "cudaEventRecord (a graph's replay order)");
  });
}

void graphReset(std::uint64_t graph) {
  graphTable().with(graph, [&](GraphRecord& record) {
    ACCEL_ADAPTER_CHECK(record.state != GraphState::Capturing, adapter::InvalidArgument,
                        "graph ", graph,
                        " is capturing; end the capture before resetting it");
    release(record);
  });
}

}  // namespace accel::cuda::detail
