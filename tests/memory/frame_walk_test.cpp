// walkFrames (memory/frame_walk.h): the return addresses it walks with its
// cached unwind rules are exactly the unwinder's (_Unwind_Backtrace), from
// frames of every shape this build makes: frames with and without a frame
// pointer, alloca's frames (their CFA on rbp), recursion deeper than the
// walk, library frames (qsort calling back), a std::function, another
// thread, and a signal handler (whose trampoline's rule is one the walk
// leaves to the unwinder); the first walk (rules worked out) and the next
// (rules from the table) alike. The sources are compiled in (internal to
// libaccel).
#include <alloca.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "memory/frame_walk.h"

namespace accel::memory::detail {
namespace {

constexpr int kMost = 64;

struct Walks {
  std::vector<void*> cached;
  std::vector<void*> unwinder;
};

// Both walks from one frame: each starts where this frame returns to.
[[gnu::noinline]] Walks walkBothHere(int most = kMost) {
  void* cached[kMost];
  void* unwinder[kMost];
  const int c = walkFrames(cached, most);
  const int u = walkFramesWithUnwinder(unwinder, most);
  asm volatile("" ::: "memory");
  return {std::vector<void*>(cached, cached + c),
          std::vector<void*>(unwinder, unwinder + u)};
}

void expectSameWalks(const Walks& walks) {
  ASSERT_GE(walks.unwinder.size(), 2u) << "the unwinder found the test's own callers";
  EXPECT_EQ(walks.cached, walks.unwinder);
}

// Frames of different shapes, recursing `depth` times, then both walks.
[[gnu::noinline]] Walks withAlloca(int depth, int most);
[[gnu::noinline]] Walks plain(int depth, int most) {
  Walks walks = depth == 0 ? walkBothHere(most) : withAlloca(depth - 1, most);
  asm volatile("" ::: "memory");  // no tail call
  return walks;
}
[[gnu::noinline]] Walks withAlloca(int depth, int most) {
  // A frame whose size is known only at run time: its CFA is on rbp.
  auto* scratch =
      static_cast<volatile char*>(alloca(static_cast<std::size_t>(16 + depth)));
  scratch[0] = static_cast<char>(depth);
  Walks walks = depth == 0 ? walkBothHere(most) : plain(depth - 1, most);
  asm volatile("" ::: "memory");
  return walks;
}

TEST(FrameWalk, TheWalkIsTheUnwindersFromATest) {
  expectSameWalks(walkBothHere());
  // Again, with the rules from the table.
  expectSameWalks(walkBothHere());
}

TEST(FrameWalk, TheWalkIsTheUnwindersThroughFramesOfEveryShape) {
  for (int depth = 0; depth < 12; ++depth) {
    SCOPED_TRACE(depth);
    expectSameWalks(plain(depth, kMost));
    expectSameWalks(withAlloca(depth, kMost));
  }
}

TEST(FrameWalk, AWalkDeeperThanItsBoundStopsAtTheBound) {
  const Walks walks = plain(100, 20);
  EXPECT_EQ(walks.cached.size(), 20u);
  expectSameWalks(walks);
  EXPECT_EQ(walkBothHere(0).cached.size(), 0u);
}

Walks g_from_callback;

int compareAndWalk(const void* a, const void* b) {
  if (g_from_callback.unwinder.empty()) g_from_callback = walkBothHere();
  return std::memcmp(a, b, sizeof(int));
}

TEST(FrameWalk, TheWalkIsTheUnwindersThroughTheCLibrary) {
  int values[] = {3, 1, 2};
  g_from_callback = Walks{};
  std::qsort(values, 3, sizeof(int), &compareAndWalk);
  expectSameWalks(g_from_callback);
}

TEST(FrameWalk, TheWalkIsTheUnwindersThroughAStdFunctionAndOnAnotherThread) {
  std::function<Walks()> through = [] { return plain(3, kMost); };
  expectSameWalks(through());
  Walks on_thread;
  std::thread([&] { on_thread = withAlloca(4, kMost); }).join();
  expectSameWalks(on_thread);
}

// A handler may not allocate: it walks into arrays of its own.
void* g_handler_cached[kMost];
void* g_handler_unwinder[kMost];
volatile int g_handler_counts[2] = {0, 0};

[[gnu::noinline]] void walkBothIntoHandlerArrays() {
  g_handler_counts[0] = walkFrames(g_handler_cached, kMost);
  g_handler_counts[1] = walkFramesWithUnwinder(g_handler_unwinder, kMost);
  asm volatile("" ::: "memory");
}

void walkInHandler(int) { walkBothIntoHandlerArrays(); }

TEST(FrameWalk, TheWalkIsTheUnwindersFromASignalHandler) {
  struct sigaction action {};
  struct sigaction before {};
  action.sa_handler = &walkInHandler;
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &action, &before), 0);
  std::raise(SIGUSR1);
  sigaction(SIGUSR1, &before, nullptr);
  // The handler's caller is the signal trampoline: the walk hands the rest
  // to the unwinder, which goes on through it to this test.
  expectSameWalks(Walks{
      std::vector<void*>(g_handler_cached, g_handler_cached + g_handler_counts[0]),
      std::vector<void*>(g_handler_unwinder, g_handler_unwinder + g_handler_counts[1])});
}

}  // namespace
}  // namespace accel::memory::detail
