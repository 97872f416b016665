// The runtime double's state: devices and their primary contexts, memory,
// streams (a worker thread each), events, captures and graphs. One lock
// guards all of it (the double is for correctness, not speed); work runs on
// the workers outside it.
//
// Every rule the double enforces cites the CUDA documentation it comes from
// in a comment "CUDA: <document>, <section>" where it is checked.
//
// Thread-safety: every function takes the lock itself unless it says
// "lock held".
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

struct CUctx_st {
  int device = 0;
  bool active = false;  // the primary context exists (retained by the runtime)
};

namespace cuda_double {

struct Range {
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;
};

// One piece of stream work: what it runs and the device memory it touches.
struct Work {
  std::function<void()> run;
  std::vector<Range> memory;
  int device = 0;  // whose memory the work may touch
  // A kernel (cuda_double_launch): it reaches another device's cudaMalloc
  // memory only as an enabled peer. Copies reach any device's memory.
  bool kernel = false;
};

struct Capture;

struct Marker {
  bool done = false;
  std::chrono::steady_clock::time_point at{};
};

// An entry of a stream's queue: waits for `wait_for` (cudaStreamWaitEvent),
// sets `record` (cudaEventRecord), or runs `work`.
struct Item {
  Work work;
  std::shared_ptr<Marker> wait_for;
  std::shared_ptr<Marker> record;
};

}  // namespace cuda_double

struct CUstream_st {
  int device = 0;
  unsigned int flags = 0;
  int priority = 0;
  bool legacy = false;
  std::deque<cuda_double::Item> queue;
  std::vector<cuda_double::Range> running;  // memory of the work running now
  std::uint64_t enqueued = 0;
  std::uint64_t completed = 0;
  std::shared_ptr<cuda_double::Capture> capture;  // null when not capturing
  std::uint64_t capture_seq = 0;                  // work captured on this stream
  bool waiting_for_event = false;                 // the worker waits for a marker
};

struct CUevent_st {
  int device = 0;
  unsigned int flags = 0;
  std::shared_ptr<cuda_double::Marker> marker;  // last real record; null: never
  // Last recorded inside a capture (id of the capture; 0: not).
  std::uint64_t capture_id = 0;
  CUstream_st* capture_stream = nullptr;
  std::uint64_t capture_seq = 0;
};

struct CUgraph_st {
  std::vector<cuda_double::Work> nodes;
  int device = 0;
};

struct CUgraphExec_st {
  std::vector<cuda_double::Work> nodes;
  int device = 0;
};

namespace cuda_double {

struct Capture {
  std::uint64_t id = 0;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;
  int device = 0;
  CUstream_st* origin = nullptr;
  std::vector<Work> nodes;
  bool invalidated = false;
  std::string why_invalidated;
  std::set<CUstream_st*> streams;                // origin and joined streams
  std::map<CUstream_st*, std::uint64_t> joined;  // capture_seq the origin waited for
};

enum class MemoryKind { Device, Pinned, Mapped };

struct Allocation {
  std::size_t bytes = 0;
  int device = 0;
  MemoryKind kind = MemoryKind::Device;
  // Devices whose work may touch it (bit d: device d). Mapped pages: the
  // devices cuMemSetAccess named; the rest: all for copies, and for
  // kernels the owning device and the peers that enabled access to it
  // (State::peer_enabled).
  unsigned int access = ~0u;
};

class State {
 public:
  static State& get();  // never destroyed

  std::mutex mutex;
  std::condition_variable changed;  // work completed, markers set

  int device_count = 2;
  std::size_t capacity = std::size_t{8} << 30;  // per device, bookkeeping only
  std::vector<CUctx_st> contexts;
  std::vector<std::size_t> used;
  std::vector<CUstream_st*> legacy_streams;
  std::set<CUstream_st*> streams;
  std::vector<CUstream_st*> destroyed;  // for reuse by newStream, oldest first
  std::set<CUevent_st*> events;
  std::set<CUgraph_st*> graphs;
  std::set<CUgraphExec_st*> execs;
  std::set<std::shared_ptr<Capture>> captures;
  std::map<std::uintptr_t, Allocation> memory;  // by base address
  std::uint64_t next_capture_id = 1;
  int violations = 0;
  std::string last_violation;
  int waiting = 0;
  // Pageable copies and cudaMemset return before the work ran
  // (CUDA_DOUBLE_PAGEABLE_ASYNC=1): CUDA's text allows either behaviour.
  bool pageable_async = false;
  // No device can access another as a peer (CUDA_DOUBLE_NO_P2P=1).
  bool no_p2p = false;
  // Bit p of peer_enabled[d]: cudaDeviceEnablePeerAccess(p) ran on device d.
  std::vector<unsigned int> peer_enabled;
  // cuda_double_after_next_capture_begins.
  void (*after_capture_begins)(void*) = nullptr;
  void* after_capture_begins_arg = nullptr;
  // cuda_double_before_next_free's function, run once at cudaFree's entry.
  void (*before_free)(void*) = nullptr;
  void* before_free_arg = nullptr;

  // Lock held. Records misuse that CUDA reports only as a later fault.
  void violation(std::string text);
  // Lock held. Device memory / pinned memory containing the range, if any.
  const Allocation* find(std::uintptr_t address, std::size_t bytes) const;
  // Lock held. The stream's worker, started on first use.
  CUstream_st* newStream(int device, unsigned int flags, int priority, bool legacy);
  CUstream_st* legacy(int device);
  // Lock held. Enqueues `work` on `stream`, or records it into the stream's
  // capture. Returns the error of a capture that was invalidated.
  cudaError_t submit(CUstream_st* stream, Work work);
  // Lock held (released while waiting). Waits for all work enqueued so far
  // on `stream` / on every stream of `device` (-1: all devices).
  void drain(std::unique_lock<std::mutex>& lock, CUstream_st* stream);
  void drainDevice(std::unique_lock<std::mutex>& lock, int device);
  // Lock held. Invalidates `capture` (CUDA: Programming Guide, "CUDA Graphs
  // > Stream Capture > Invalidation": further work on its streams and its
  // end return cudaErrorStreamCaptureInvalidated).
  void invalidate(Capture& capture, std::string why);
  // Lock held. The check for "potentially unsafe API calls" during capture
  // (cudaMalloc, cudaFree, cudaHostAlloc, synchronous copies ...):
  // cudaErrorStreamCaptureUnsupported, invalidating the captures that forbid
  // the call, or cudaSuccess.
  cudaError_t unsafeCall(const char* call);
  // Lock held. Whether queued or running work touches `range`.
  bool inUse(const Range& range) const;
  // Lock held. Any capture on `device` (-1: any device).
  bool capturing(int device) const;

 private:
  State();
  void work(CUstream_st* stream);  // the worker loop
};

// The calling thread's runtime state.
struct ThreadState {
  CUctx_st* current = nullptr;  // the current context (driver's view)
  int device = 0;               // cudaSetDevice's choice
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  cudaError_t last_error = cudaSuccess;
};
ThreadState& thread();

}  // namespace cuda_double
