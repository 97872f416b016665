// The stacks the validation layer records (interned_stacks.h): a call site
// that records again and again gets the one record of its stack, different
// call sites get different records, a stack with a host part is never
// shared, threads share records safely, and no record holds more than kRecordedFrames
// addresses.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "layers/validation/interned_stacks.h"

namespace accel::detail {
namespace {

using memory::detail::CapturedStack;

// Two call sites of internedStack, in frames of their own.
[[gnu::noinline]] CapturedStack fromSiteA() {
  CapturedStack stack = internedStack(nullptr);
  asm volatile("" ::: "memory");  // no tail call: this frame stays on the stack
  return stack;
}
[[gnu::noinline]] CapturedStack fromSiteB() {
  CapturedStack stack = internedStack(nullptr);
  asm volatile("" ::: "memory");
  return stack;
}

// A host stack with no frames, as a host provider would hand out.
class NoFrames final : public HostStack {
 public:
  [[nodiscard]] std::vector<MemoryFrame> frames() const override { return {}; }
};

TEST(InternedStacks, OneCallSiteRecordsOneStack) {
  std::vector<CapturedStack> stacks;
  for (int i = 0; i < 3; ++i) stacks.push_back(fromSiteA());
  ASSERT_NE(stacks[0], nullptr);
  EXPECT_FALSE(stacks[0]->addresses.empty());
  EXPECT_EQ(stacks[0].get(), stacks[1].get());
  EXPECT_EQ(stacks[1].get(), stacks[2].get());
}

TEST(InternedStacks, TwoCallSitesRecordTwoStacks) {
  const CapturedStack a = fromSiteA();
  const CapturedStack b = fromSiteB();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a.get(), b.get());
  EXPECT_NE(a->addresses, b->addresses);
}

TEST(InternedStacks, AStackWithAHostPartIsItsOwn) {
  auto host = std::make_shared<const NoFrames>();
  const CapturedStack first = internedStack(host);
  const CapturedStack second = internedStack(host);
  ASSERT_NE(first, nullptr);
  EXPECT_NE(first.get(), second.get());
  EXPECT_EQ(first->host, host);
}

// Threads running the same code record the same stack: after the first
// captures (which may race to intern it), each gets the one record.
TEST(InternedStacks, ThreadsAtOneCallSiteShareItsRecord) {
  constexpr int kThreads = 4;
  std::vector<CapturedStack> last(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&last, t] {
      for (int i = 0; i < 200; ++i) last[t] = fromSiteB();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_NE(last[t], nullptr);
    EXPECT_EQ(last[t].get(), last[0].get());
  }
}

// Recursion deeper than the frames kept: the innermost are kept.
[[gnu::noinline]] CapturedStack deep(int levels) {
  CapturedStack stack = levels == 0 ? internedStack(nullptr) : deep(levels - 1);
  asm volatile("" ::: "memory");
  return stack;
}

TEST(InternedStacks, AtMostTheRecordedFramesAreKept) {
  const CapturedStack stack = deep(2 * kRecordedFrames);
  ASSERT_NE(stack, nullptr);
  EXPECT_LE(stack->addresses.size(), std::size_t(kRecordedFrames));
  EXPECT_GE(stack->addresses.size(), std::size_t(kRecordedFrames) - 1);
}

}  // namespace
}  // namespace accel::detail
