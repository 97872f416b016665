// Graphs of the opencl backend, over cl_khr_command_buffer.
//
// graphCaptureBegin captures the stream the core names (the calling
// thread's current stream of its current device), which must not be the
// default stream (the backend's own blocking work, such as pinned-buffer
// unmaps and cross-device copies, runs there): from then on the backend's
// fills and device-to-device copies on that stream are recorded into a
// command buffer (recording.h) instead of being enqueued. The core routes
// allocations on the stream to the capture's private pool and keeps it
// until the graph is reset or destroyed, so that replays find their memory
// where the capture left it.
// graphCaptureEnd finalizes the command buffer; without keep_graph the graph
// is then instantiated at once, with keep_graph graphInstantiate does it.
// graphReplay enqueues the command buffer (clEnqueueCommandBufferKHR) on the
// calling thread's current stream of the graph's device, in order with that
// stream's other work, after writing the captured fills' Philox positions
// (recording.h: each replay draws new numbers, moving the generators by the
// graph's draw); where the driver refuses a queue other than the one
// recorded on, the replay runs there between a marker and a barrier that
// order it with the current stream. Where the device does not allow a
// command buffer to be pending twice, a replay first waits (on the host) for
// the previous one.
//
// Not recorded, and refused during a capture with NotSupported: copies from
// or to host memory (the extension has no such command) and events recorded
// on or waited for by the captured stream (a command buffer records neither).
// The CaptureMode is accepted; nothing the backend does on other threads
// breaks a capture.
//
// graphReset and graphDestroy wait for every replay of the graph still
// pending (on any queue) before they release the command buffer (and the
// core then the pool).
//
// A replay that fails once the positions began to be written (a later
// generator's draw would pass 2^64, an enqueue fails) keeps what it claimed,
// as the CUDA and openreg backends' do: the generators claimed before the
// failure stay moved by the graph's draw (all of them when the command
// buffer's enqueue fails), and the writes already enqueued still run. They
// become the graph's latest replay (a marker after them; a clFinish of the
// queue if even that fails), so that reset, destroy and the next replay
// wait for them.
//
// Thread-safety: thread-safe (a table lock, and one lock per graph held
// across its OpenCL calls).
#pragma once

#include "accel/adapter/core.h"
#include "types.h"

namespace accel::opencl::detail {

GraphId graphCreate(bool keep_graph);
void graphDestroy(GraphId graph);
void graphCaptureBegin(const adapter::Core& core, GraphId graph, Stream stream);
void graphCaptureEnd(GraphId graph);
void graphInstantiate(GraphId graph);
// Throws InvalidArgument for an unknown graph, one not instantiated, or a
// generator's draw that would pass 2^64 - 1 (reservePhilox); DeviceError
// when an enqueue (a position's write, the command buffer, the marker or
// barrier around it) fails; what creating the current stream's queue
// throws; bad_alloc before anything is claimed.
// The replay runs on the calling thread's current stream of the graph's
// device (thread_current.h).
void graphReplay(GraphId graph);
void graphReset(GraphId graph);

}  // namespace accel::opencl::detail
