// CUDA graphs of the cuda backend, by stream capture.
//
// graphCaptureBegin captures the calling thread's current stream of its
// current device (cudaStreamBeginCapture with the CaptureMode mapped to
// cudaStreamCaptureMode{Global,ThreadLocal,Relaxed}); the default stream
// cannot be captured, so capture needs a current stream from getNewStream.
// graphCaptureEnd ends it (cudaStreamEndCapture), graphInstantiate makes the
// executable graph (and drops the captured one unless keep_graph), and
// graphReplay launches it on the stream it was captured on.
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
