// The graphs group: create, capture, instantiate, replay, pools, reset, destroy.
//
// Capture records the current stream of the current device. Like CUDA, a
// backend may refuse to capture a device's default stream, so each case runs
// on a fresh thread with a new stream made current (when the backend has
// streams): the thread's current stream dies with it.
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace {

void useNewStreamIfAny(AcceleratorHooks& hooks) {
  if (hooks.supports(HookGroup::Streams)) hooks.setCurrentStream(hooks.getNewStream(0));
}

void captureAndReplayWithoutKeepingGraph(AcceleratorHooks& hooks) {
  inNewThread([&] {
    useNewStreamIfAny(hooks);
    GraphId graph = hooks.graphCreate(/*keep_graph=*/false);
    EXPECT_NE(graph, kNoGraph) << "graphCreate() returned kNoGraph";
    hooks.graphCaptureBegin(graph);
    hooks.graphCaptureEnd(graph);
    EXPECT_FALSE(hooks.graphPool(graph).isDefault())
        << "graphPool() of a captured graph is the default pool; capture must give it a "
           "private pool";
    EXPECT_NO_THROW(hooks.graphReplay(graph)) << "graphReplay() after graphCaptureEnd()";
    EXPECT_NO_THROW(hooks.graphReplay(graph)) << "graphReplay() a second time";
    EXPECT_NO_THROW(hooks.graphReset(graph)) << "graphReset()";
    EXPECT_NO_THROW(hooks.graphDestroy(graph)) << "graphDestroy() after graphReset()";
  });
}

void keptGraphIsInstantiatedExplicitly(AcceleratorHooks& hooks) {
  inNewThread([&] {
    useNewStreamIfAny(hooks);
    GraphId graph = hooks.graphCreate(/*keep_graph=*/true);
    hooks.graphCaptureBegin(graph);
    hooks.graphCaptureEnd(graph);
    EXPECT_NO_THROW(hooks.graphInstantiate(graph))
        << "graphInstantiate() of a kept graph";
    EXPECT_NO_THROW(hooks.graphReplay(graph)) << "graphReplay() after graphInstantiate()";
    EXPECT_NO_THROW(hooks.graphDestroy(graph)) << "graphDestroy()";
  });
}

void graphsCanShareAPool(AcceleratorHooks& hooks) {
  inNewThread([&] {
    useNewStreamIfAny(hooks);
    GraphId first = hooks.graphCreate();
    GraphId second = hooks.graphCreate();
    EXPECT_NE(first, second) << "two live graphCreate() results share an id";
    hooks.graphCaptureBegin(first);
    hooks.graphCaptureEnd(first);
    MempoolId pool = hooks.graphPool(first);
    hooks.graphCaptureBegin(second, pool);
    hooks.graphCaptureEnd(second);
    EXPECT_TRUE(hooks.graphPool(second) == pool)
        << "graphPool() of a graph captured into another graph's pool";
    hooks.graphDestroy(second);
    hooks.graphDestroy(first);
  });
}

void unknownGraphIsRejected(AcceleratorHooks& hooks) {
  constexpr GraphId kNeverCreated = 0x7fffffffffffULL;
  EXPECT_TRUE(throwsAccelError([&] { hooks.graphReplay(kNeverCreated); }))
      << "graphReplay(an id never created) must be an error";
  EXPECT_TRUE(throwsAccelError([&] { hooks.graphCaptureBegin(kNoGraph); }))
      << "graphCaptureBegin(kNoGraph) must be an error";
  GraphId graph = hooks.graphCreate();
  hooks.graphDestroy(graph);
  EXPECT_TRUE(throwsAccelError([&] { hooks.graphReplay(graph); }))
      << "graphReplay(a destroyed graph) must be an error";
}

}  // namespace

std::vector<ConformanceCase> graphsCases() {
  constexpr HookGroup g = HookGroup::Graphs;
  return {
      {g,
       "CaptureAndReplayWithoutKeepingGraph",
       {"graphCreate", "graphCaptureBegin", "graphCaptureEnd", "graphPool", "graphReplay",
        "graphReset", "graphDestroy"},
       true,
       captureAndReplayWithoutKeepingGraph},
      {g,
       "KeptGraphIsInstantiatedExplicitly",
       {"graphCreate", "graphCaptureBegin", "graphCaptureEnd", "graphInstantiate",
        "graphReplay", "graphDestroy"},
       true,
       keptGraphIsInstantiatedExplicitly},
      {g,
       "GraphsCanShareAPool",
       {"graphCaptureBegin", "graphPool"},
       true,
       graphsCanShareAPool},
      {g,
       "UnknownGraphIsRejected",
       {"graphReplay", "graphCaptureBegin", "graphDestroy"},
       true,
       unknownGraphIsRejected},
  };
}

}  // namespace accel::conformance::detail
