// CUDA graphs of the cuda backend, by stream capture.
//
// captureBegin captures the stream the core names (the calling thread's
// current stream of its current device; cudaStreamBeginCapture with the
// mode mapped to cudaStreamCaptureMode{Global,ThreadLocal,Relaxed}); the
// default stream cannot be captured, so capture needs a current stream from
// getNewStream. captureEnd ends it (cudaStreamEndCapture) and, for a graph
// created without keep_graph, instantiates it at once (dropping the captured
// graph); a kept graph is instantiated by instantiateGraph. replayGraph
// launches the executable graph on the calling thread's current stream of
// the graph's device, like any other work, after the positions of its
// captured fills (captured_fills.h).
//
// Memory pools are the core's: it routes the capturing stream's allocations
// to the graph's private pool around these calls, and a stream forked into
// the capture joins it (capture_registry.h).
//
// Thread-safety: thread-safe (a mutex around the table; CUDA calls run
// outside it except where the state must change with them).
#pragma once

#include <cstdint>

#include "accel/adapter/core.h"

namespace accel::cuda::detail {

std::uint64_t graphCreate(bool keep_graph);
void graphDestroy(std::uint64_t graph);
// mode: ACCEL_CAPTURE_*. `device_count`: the devices the core's
// allocations are diverted on while the capture is underway.
void graphCaptureBegin(const adapter::Core& core, int device_count, std::uint64_t graph,
                       adapter::Stream stream, int mode);
void graphCaptureEnd(std::uint64_t graph);
void graphInstantiate(std::uint64_t graph);
void graphReplay(const adapter::Core& core, std::uint64_t graph);
void graphReset(std::uint64_t graph);

}  // namespace accel::cuda::detail
