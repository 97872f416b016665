// SynchronousCachingHooks: a hooks base for a synchronous, host-visible
// device whose memory comes from the core CachingAllocator. On top of
// SynchronousDeviceHooks (low, high, streams, events) and
// CachingAllocatorHooks (memory, memory_history) it gives:
//
//  - getDeviceAllocator(i): one Allocator per device over cachingAllocator(),
//    for the calling thread's current stream on i (and marking i used, so
//    that hasPrimaryContext turns true), so the subclass writes no allocator;
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
// capture and replay that mean what they mean on a GPU.
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
// mutex, released while a replay runs the graph's work.
// Lifetime: like every hooks object, a registered one is never destroyed.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

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

  GraphId graphCreateImpl(bool keep_graph) override;
  void graphDestroyImpl(GraphId graph) override;
  void graphCaptureBeginImpl(GraphId graph, MempoolId pool, CaptureMode mode) override;
  void graphCaptureEndImpl(GraphId graph) override;
  void graphInstantiateImpl(GraphId graph) override;
  void graphReplayImpl(GraphId graph) override;
  void graphResetImpl(GraphId graph) override;
  MempoolId graphPoolImpl(GraphId graph) const override;

 private:
  class DeviceAllocator;
  // Ended: instantiated by graphCaptureEnd (no keep_graph); replay only.
  enum class Phase : unsigned char { Empty, Capturing, Captured, Instantiated, Ended };
  struct Graph {
    bool keep_graph = false;
    Phase phase = Phase::Empty;
    MempoolId pool{};
    bool holds_pool = false;  // retained from the allocator, released by reset/destroy
    Stream stream;            // the captured stream (Capturing and after)
    std::vector<std::function<void()>> work;
  };

  // Live graph `id` in one of `phases` (any if empty) for `hook`, else
  // InvalidArgument (not live) or DeviceError (wrong phase). graph_mutex_ held.
  Graph& graph(GraphId id, HookId hook, std::initializer_list<Phase> phases = {}) const;
  // Ends the capture's pool use and gives the pool back. graph_mutex_ held.
  void releaseGraph(Graph& g);

  std::vector<std::unique_ptr<DeviceAllocator>> allocators_;
  mutable std::mutex graph_mutex_;  // guards the two below
  mutable std::map<GraphId, Graph> graphs_;
  GraphId next_graph_ = 1;
};

}  // namespace accel::kit
