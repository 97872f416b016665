// SynchronousCachingHooks: a hooks base for a synchronous, host-visible
// device whose memory comes from the core CachingAllocator. On top of
// SynchronousDeviceHooks (low, high, streams, events) and
// CachingAllocatorHooks (memory, memory_history) it gives:
//
//  - getDeviceAllocator(i): one Allocator per device over cachingAllocator()
//    (the kit's CachingDeviceAllocator), for the calling thread's current
//    stream on i; its first allocation marks i used, so that
//    hasPrimaryContext turns true. The subclass writes no allocator;
//  - the graphs group: graph ids, the capture phases (empty, capturing,
//    captured, instantiated) and their errors, one capture per stream, and a
//    private pool per capture: graphCaptureBegin(g) with the default pool
//    makes a new pool of the caching allocator, with another graph's pool
//    shares it; allocations on the captured stream go to that pool until
//    graphCaptureEnd, and the pool is released by graphReset/graphDestroy.
//
// What a graph replays: the device runs work as it is enqueued, so only work
// the backend hands to launch() is captured. launch(stream, work) runs `work`
// now, or, while `stream` is being captured, appends it to the graph instead
// (as CUDA capture records a kernel without running it); graphReplay runs the
// graph's work in order. A backend whose kernels go through launch() gets
// capture and replay that mean what they mean on a GPU. The copies group
// (when declared) goes through launch() too: a copy on a capturing stream is
// checked at once, recorded, and made by each replay. So does the fill group
// (when declared): the core's host fill written into the device's memory,
// its draw reserved when it runs, so that each replay of a captured fill
// draws anew.
//
// What a capture forbids, as CUDA's stream capture does: querying or
// synchronising a capturing stream, and deviceSynchronize on its device
// during a Global capture (from any thread) or a ThreadLocal one (from the
// capturing thread), throw DeviceError and invalidate the capture, which
// graphCaptureEnd then discards (DeviceError saying why; the graph is empty
// again). Recording an event on a capturing stream, or making one wait on an
// event, is NotSupported (a capture holds one stream). A Relaxed capture
// allows deviceSynchronize.
//
// The subclass writes cachingAllocator() (owning the allocator and its
// SegmentSource), its pinned allocator, showConfig and getDeviceProperties,
// and declares the groups it wants in `capabilities` (Memory, MemoryHistory,
// Graphs, Device); examples/out_of_tree_backend is the worked example.
//
// Errors: an id that is not a live graph is InvalidArgument naming the hook
// and the id; a call in the wrong phase (replay before instantiate, capture
// begin on a captured graph, a second capture of a stream) is DeviceError
// naming the phase and what to do. Work thrown by launch()ed code during a
// replay propagates to graphReplay's caller.
//
// Thread-safety: every hook is thread-safe; graphs live in a table behind a
// mutex, released while a replay runs the graph's work. While no graph is
// capturing, launch(), the copies and the stream checks above take no lock
// (one atomic load).
// Lifetime: like every hooks object, a registered one is never destroyed.
#pragma once

#include <atomic>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accel/kit/caching_device_allocator.h"
#include "accel/kit/synchronous_device.h"
#include "accel/memory/memory_hooks.h"

namespace accel::kit {

class ACCEL_API SynchronousCachingHooks
    : public memory::CachingAllocatorHooks<SynchronousDeviceHooks> {
 public:
  // As SynchronousDeviceHooks's constructor.
  SynchronousCachingHooks(DeviceType type, Capabilities capabilities, int device_count);
  ~SynchronousCachingHooks() override;

  // Runs `work` now, or appends it to the graph capturing `stream` (see
  // above). Thread-safe; throws what `work` throws, or InvalidArgument for a
  // stream this object never issued.
  void launch(Stream stream, std::function<void()> work);

 protected:
  Allocator& getDeviceAllocatorImpl(DeviceIndex index) override;

  // What a capture forbids (see above), then as SynchronousDeviceHooks.
  void deviceSynchronizeImpl(DeviceIndex index) override;
  bool queryStreamImpl(Stream stream) const override;
  void synchronizeStreamImpl(Stream stream) const override;
  void recordEventImpl(EventId event, Stream stream) override;
  void blockStreamImpl(EventId event, Stream stream) override;
  // Checked at once, then made through launch(): recorded on a capturing stream.
  void copyHostToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override;
  void copyDeviceToHostImpl(void* dst, const void* src, std::size_t bytes,
                            Stream stream) override;
  void copyDeviceToDeviceImpl(void* dst, const void* src, std::size_t bytes,
                              Stream stream) override;

  void fillRandomImpl(Stream stream, DeviceFill kind, void* data, std::size_t count,
                      double a, double b, const Generator& generator) override;

  GraphId graphCreateImpl(bool keep_graph) override;
  void graphDestroyImpl(GraphId graph) override;
  void graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode mode) override;
  void graphCaptureEndImpl(GraphId graph) override;
  void graphInstantiateImpl(GraphId graph) override;
  void graphReplayImpl(GraphId graph) override;
  void graphResetImpl(GraphId graph) override;
  MempoolId graphPoolImpl(GraphId graph) const override;

 private:
  class FirstUse;
  // Ended: instantiated by graphCaptureEnd (no keep_graph); replay only.
  enum class Phase : unsigned char { Empty, Capturing, Captured, Instantiated, Ended };
  struct Graph {
    bool keep_graph = false;
    Phase phase = Phase::Empty;
    MempoolId pool{};
    bool holds_pool = false;  // retained from the allocator, released by reset/destroy
    Stream stream;            // the captured stream (Capturing and after)
    CaptureMode mode = CaptureMode::Global;
    std::thread::id thread;   // the thread that began the capture
    std::string invalidated;  // why the capture is void; empty while valid
    std::vector<std::function<void()>> work;
  };

  // Live graph `id` in one of `phases` (any if empty) for `hook`, else
  // InvalidArgument (not live) or DeviceError (wrong phase). graph_mutex_ held.
  Graph& graph(GraphId id, HookId hook, std::initializer_list<Phase> phases = {}) const;
  // Ends the capture's pool use and gives the pool back. graph_mutex_ held.
  void releaseGraph(Graph& g);
  // The id of the graph capturing `stream`, or 0. graph_mutex_ held.
  GraphId capturing(Stream stream) const;
  // Throws DeviceError for `hook` and invalidates the capture if `stream` is
  // being captured; returns at once while no graph captures.
  void refuseOnCapturingStream(Stream stream, HookId hook) const;
  // Throws NotSupported for `hook` if `stream` is being captured.
  void refuseEventOnCapturingStream(Stream stream, HookId hook) const;
  // Appends `work` to the graph capturing `stream` and returns true, or
  // returns false (work untouched) when no graph captures it.
  bool record(Stream stream, std::function<void()>& work);
  // The copies' common path: checks, then memcpy now or recorded.
  void copy(HookId hook, void* dst, const void* src, std::size_t bytes, Stream stream);

  std::unique_ptr<FirstUse> first_use_;
  std::once_flag allocators_made_;
  std::vector<std::unique_ptr<CachingDeviceAllocator>> allocators_;
  mutable std::mutex graph_mutex_;  // guards the two below
  mutable std::map<GraphId, Graph> graphs_;
  GraphId next_graph_ = 1;
  // Graphs in Capturing (written under graph_mutex_): at 0, launch(), the
  // copies and the capture checks skip the lock.
  std::atomic<int> captures_{0};
};

}  // namespace accel::kit
