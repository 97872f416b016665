// CUDA graphs of the cuda backend, by stream capture.
//
// graphCaptureBegin captures the calling thread's current stream of its
// current device (cudaStreamBeginCapture with the CaptureMode mapped to
// cudaStreamCaptureMode{Global,ThreadLocal,Relaxed}); the default stream
// cannot be captured, so capture needs a current stream from getNewStream.
// graphCaptureEnd ends it (cudaStreamEndCapture) and, for a graph created
// without keep_graph, instantiates it at once (dropping the captured graph);
// a kept graph is instantiated by graphInstantiate. graphReplay launches the
// executable graph on the calling thread's current stream of the graph's
// device, like any other work.
//
// Memory pools: allocations made through the caching allocator on the
// capturing stream come from a private pool (the MempoolId given at capture,
// which graphs may share, or a new one), retained until the graph is reset
// or destroyed, so replays find their memory where the capture left it.
//
// Thread-safety: thread-safe (a mutex around the table; CUDA calls run
// outside it except where the state must change with them).
#pragma once

#include "accel/graph.h"

namespace accel::cuda::detail {

GraphId graphCreate(bool keep_graph);
void graphDestroy(GraphId graph);
void graphCaptureBegin(GraphId graph, MempoolId pool, CaptureMode mode);
void graphCaptureEnd(GraphId graph);
void graphInstantiate(GraphId graph);
void graphReplay(GraphId graph);
void graphReset(GraphId graph);
MempoolId graphPool(GraphId graph);

}  // namespace accel::cuda::detail
