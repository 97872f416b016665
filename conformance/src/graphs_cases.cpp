// The graphs group: create, capture, instantiate, replay, pools, reset, destroy.
//
// Capture records the current stream of the current device. Like CUDA, a
// backend may refuse to capture a device's default stream, so each case runs
// on a fresh thread with a new stream made current (when the backend has
// streams): the thread's current stream dies with it.
#include <vector>

#include "conformance_case.h"

namespace accel::conformance::detail {
namespace graphs_cases {
namespace {

void useNewStreamIfAny(AcceleratorHooks& hooks) {
  if (hooks.supports(HookGroup::Streams)) hooks.setCurrentStream(hooks.getNewStream(0));
}

void captureAndReplayWithoutKeepingGraph(AcceleratorHooks& hooks) {
  inNewThread([&] {
    useNewStreamIfAny(hooks);
    GraphId graph = hooks.graphCreate(/*keep_graph=*/false);
    EXPECT_NE(graph, kNoGraph) << hookName(HookId::graphCreate) << "() returned kNoGraph";
    hooks.graphCaptureBegin(graph);
    hooks.graphCaptureEnd(graph);
    EXPECT_FALSE(hooks.graphPool(graph).isDefault())
        << hookName(HookId::graphPool)
        << "() of a captured graph is the default pool; capture must give it a "
           "private pool";
    EXPECT_NO_THROW(hooks.graphReplay(graph))
        << hookName(HookId::graphReplay) << "() after "
        << hookName(HookId::graphCaptureEnd) << "()";
    EXPECT_NO_THROW(hooks.graphReplay(graph))
        << hookName(HookId::graphReplay) << "() a second time";
    EXPECT_NO_THROW(hooks.graphReset(graph)) << hookName(HookId::graphReset) << "()";
    EXPECT_NO_THROW(hooks.graphDestroy(graph))
        << hookName(HookId::graphDestroy) << "() after " << hookName(HookId::graphReset)
        << "()";
  });
}

void keptGraphIsInstantiatedExplicitly(AcceleratorHooks& hooks) {
  inNewThread([&] {
    useNewStreamIfAny(hooks);
    GraphId graph = hooks.graphCreate(/*keep_graph=*/true);
    hooks.graphCaptureBegin(graph);
    hooks.graphCaptureEnd(graph);
    EXPECT_NO_THROW(hooks.graphInstantiate(graph))
        << hookName(HookId::graphInstantiate) << "() of a kept graph";
    EXPECT_NO_THROW(hooks.graphReplay(graph))
        << hookName(HookId::graphReplay) << "() after "
        << hookName(HookId::graphInstantiate) << "()";
    EXPECT_NO_THROW(hooks.graphDestroy(graph)) << hookName(HookId::graphDestroy) << "()";
  });
}

void graphsCanShareAPool(AcceleratorHooks& hooks) {
  inNewThread([&] {
    useNewStreamIfAny(hooks);
    GraphId first = hooks.graphCreate();
    GraphId second = hooks.graphCreate();
    EXPECT_NE(first, second) << "two live " << hookName(HookId::graphCreate)
                             << "() results share an id";
    hooks.graphCaptureBegin(first);
    hooks.graphCaptureEnd(first);
    MempoolId pool = hooks.graphPool(first);
    hooks.graphCaptureBegin(second, pool);
    hooks.graphCaptureEnd(second);
    EXPECT_TRUE(hooks.graphPool(second) == pool)
        << hookName(HookId::graphPool)
        << "() of a graph captured into another graph's pool";
    hooks.graphDestroy(second);
    hooks.graphDestroy(first);
  });
}

void unknownGraphIsRejected(AcceleratorHooks& hooks) {
  constexpr GraphId kNeverCreated = 0x7fffffffffffULL;
  EXPECT_TRUE(throwsAccelError([&] { hooks.graphReplay(kNeverCreated); }))
      << hookName(HookId::graphReplay) << "(an id never created) must be an error";
  EXPECT_TRUE(throwsAccelError([&] { hooks.graphCaptureBegin(kNoGraph); }))
      << hookName(HookId::graphCaptureBegin) << "(kNoGraph) must be an error";
  GraphId graph = hooks.graphCreate();
  hooks.graphDestroy(graph);
  EXPECT_TRUE(throwsAccelError([&] { hooks.graphReplay(graph); }))
      << hookName(HookId::graphReplay) << "(a destroyed graph) must be an error";
}

}  // namespace
}  // namespace graphs_cases

std::vector<ConformanceCase> graphsCases() {
  using namespace graphs_cases;
  using enum HookId;
  return {
      deviceCase("CaptureAndReplayWithoutKeepingGraph",
                 captureAndReplayWithoutKeepingGraph,
                 {graphCreate, graphCaptureBegin, graphCaptureEnd, graphPool, graphReplay,
                  graphReset, graphDestroy}),
      deviceCase("KeptGraphIsInstantiatedExplicitly", keptGraphIsInstantiatedExplicitly,
                 {graphCreate, graphCaptureBegin, graphCaptureEnd, graphInstantiate,
                  graphReplay, graphDestroy}),
      deviceCase("GraphsCanShareAPool", graphsCanShareAPool,
                 {graphCaptureBegin, graphPool}),
      deviceCase("UnknownGraphIsRejected", unknownGraphIsRejected,
                 {graphReplay, graphCaptureBegin, graphDestroy})};
}

}  // namespace accel::conformance::detail
