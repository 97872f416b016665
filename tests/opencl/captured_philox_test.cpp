// Captured random fills draw new numbers on every replay (captured_philox.h):
// a replay writes the host fill's numbers at the generator's position when
// the replay is made, the generator moves by the graph's draw at each replay
// and not during the capture, in program order with uncaptured fills, as
// the CUDA backend's graphs do (CudaGpu.CapturedFillsDrawNewNumbersOnEveryReplay).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <thread>
#include <vector>

#include "accel/device_fill.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "accel/stream_guard.h"
#include "opencl_test_support.h"

namespace accel::opencl::testing {
namespace {

constexpr std::uint64_t kSeed = 11;
constexpr std::uint64_t kStart = 103;  // not a multiple of 4

class CapturedPhiloxTest : public OpenClGraphTest {
 protected:
  template <typename T>
  DataPtr allocate(std::size_t count) {
    return hooks().getDeviceAllocator(0).allocate(count * sizeof(T));
  }
  template <typename T>
  std::vector<T> read(const DataPtr& data, std::size_t count) {
    std::vector<T> out(count);
    hooks().copyDeviceToHost(out.data(), data.get(), count * sizeof(T), stream_);
    hooks().synchronizeStream(stream_);
    return out;
  }
  [[nodiscard]] Generator generator(std::uint64_t seed = kSeed) const {
    Generator g = makePhiloxGenerator(device0(), seed);
    g.setOffset(kStart);
    return g;
  }
};

TEST_F(CapturedPhiloxTest, EveryReplayDrawsTheNextNumbersOfTheGenerator) {
  // Both kernel families (fill_lanes.cl's vectorised fills with partial
  // work-items at both ends; fill.cl's chunked ones, an odd normal count).
  constexpr std::size_t kFloats = 4099, kWords = 257, kNormals = 1001, kBytes = 77;
  constexpr std::size_t kDoubles = 333;
  const bool fp64 = deviceInfo(0).fp64;
  DataPtr floats = allocate<float>(kFloats), words = allocate<std::uint32_t>(kWords);
  DataPtr normals = allocate<float>(kNormals), bytes = allocate<std::uint8_t>(kBytes);
  DataPtr doubles = allocate<double>(kDoubles);
  Generator gen = generator();

  const GraphId graph = hooks().graphCreate();
  hooks().graphCaptureBegin(graph);
  accel::fillUniform(stream_, static_cast<float*>(floats.get()), kFloats, -1.0f, 2.0f,
                     gen);
  accel::fillBits(stream_, static_cast<std::uint32_t*>(words.get()), kWords, gen);
  accel::fillUniform(stream_, static_cast<float*>(floats.get()), 0, 0.0f, 1.0f,
                     gen);  // empty
  accel::fillNormal(stream_, static_cast<float*>(normals.get()), kNormals, 0.5f, 2.0f,
                    gen);
  accel::fillBernoulli(stream_, static_cast<std::uint8_t*>(bytes.get()), kBytes, 0.3,
                       gen);
  if (fp64)
    accel::fillUniform(stream_, static_cast<double*>(doubles.get()), kDoubles, 0.0, 1.0,
                       gen);
  hooks().graphCaptureEnd(graph);
  EXPECT_EQ(gen.offset(), kStart) << "a capture runs nothing: no outputs drawn";

  const std::uint64_t atWords = fillOutputs(FillKind::UniformFloat, kFloats);
  const std::uint64_t atNormals = atWords + fillOutputs(FillKind::Uint32, kWords);
  const std::uint64_t atBytes = atNormals + fillOutputs(FillKind::NormalFloat, kNormals);
  const std::uint64_t atDoubles = atBytes + fillOutputs(FillKind::Bernoulli, kBytes);
  const std::uint64_t perReplay =
      atDoubles + (fp64 ? fillOutputs(FillKind::UniformDouble, kDoubles) : 0);
  std::vector<float> previous;
  for (std::uint64_t replay = 0; replay < 3; ++replay) {
    SCOPED_TRACE(replay);
    hooks().graphReplay(graph);
    const std::uint64_t at = kStart + replay * perReplay;
    EXPECT_EQ(gen.offset(), at + perReplay) << "a replay draws the graph's outputs";
    std::vector<float> wantFloats(kFloats), wantNormals(kNormals);
    std::vector<std::uint32_t> wantWords(kWords);
    std::vector<std::uint8_t> wantBytes(kBytes);
    accel::fillUniform(std::span(wantFloats), -1.0f, 2.0f, PhiloxPosition{kSeed, at});
    accel::fillBits(std::span(wantWords), PhiloxPosition{kSeed, at + atWords});
    accel::fillNormal(std::span(wantNormals), 0.5f, 2.0f,
                      PhiloxPosition{kSeed, at + atNormals});
    accel::fillBernoulli(std::span(wantBytes), 0.3, PhiloxPosition{kSeed, at + atBytes});
    const std::vector<float> gotFloats = read<float>(floats, kFloats);
    EXPECT_EQ(gotFloats, wantFloats);
    EXPECT_EQ(read<std::uint32_t>(words, kWords), wantWords);
    EXPECT_EQ(read<float>(normals, kNormals), wantNormals);
    EXPECT_EQ(read<std::uint8_t>(bytes, kBytes), wantBytes);
    if (fp64) {
      std::vector<double> wantDoubles(kDoubles);
      accel::fillUniform(std::span(wantDoubles), 0.0, 1.0,
                         PhiloxPosition{kSeed, at + atDoubles});
      EXPECT_EQ(read<double>(doubles, kDoubles), wantDoubles);
    }
    if (replay > 0) {
      EXPECT_NE(gotFloats, previous) << "a replay repeated the previous one's numbers";
    }
    previous = gotFloats;
  }

  // A reseeded generator: the next replay draws from the new seed.
  gen.manualSeed(kSeed + 1);  // offset 0
  hooks().graphReplay(graph);
  std::vector<std::uint32_t> wantWords(kWords);
  accel::fillBits(std::span(wantWords), PhiloxPosition{kSeed + 1, atWords});
  EXPECT_EQ(read<std::uint32_t>(words, kWords), wantWords);
  EXPECT_EQ(gen.offset(), perReplay);
  hooks().graphDestroy(graph);
}

TEST_F(CapturedPhiloxTest, ReplaysAndUncapturedFillsDrawInProgramOrder) {
  constexpr std::size_t kCount = 1000;
  DataPtr captured = allocate<float>(kCount), outside = allocate<float>(kCount);
  Generator gen = generator();
  const GraphId graph = hooks().graphCreate();
  hooks().graphCaptureBegin(graph);
  accel::fillUniform(stream_, static_cast<float*>(captured.get()), kCount, 0.0f, 1.0f,
                     gen);
  hooks().graphCaptureEnd(graph);

  hooks().graphReplay(graph);  // kStart
  accel::fillUniform(stream_, static_cast<float*>(outside.get()), kCount, 0.0f, 1.0f,
                     gen);     // kStart + kCount
  hooks().graphReplay(graph);  // kStart + 2 kCount
  std::vector<float> wantOutside(kCount), wantCaptured(kCount);
  accel::fillUniform(std::span(wantOutside), 0.0f, 1.0f,
                     PhiloxPosition{kSeed, kStart + kCount});
  accel::fillUniform(std::span(wantCaptured), 0.0f, 1.0f,
                     PhiloxPosition{kSeed, kStart + 2 * kCount});
  EXPECT_EQ(read<float>(outside, kCount), wantOutside);
  EXPECT_EQ(read<float>(captured, kCount), wantCaptured);
  EXPECT_EQ(gen.offset(), kStart + 3 * kCount);
  hooks().graphDestroy(graph);
}

TEST_F(CapturedPhiloxTest, EachGeneratorMovesByItsOwnDraw) {
  constexpr std::size_t kCount = 500;
  DataPtr first = allocate<std::uint32_t>(kCount),
          second = allocate<std::uint32_t>(kCount);
  DataPtr other = allocate<std::uint32_t>(kCount);
  Generator a = generator(kSeed);
  Generator b = generator(kSeed + 7);
  const GraphId graph = hooks().graphCreate();
  hooks().graphCaptureBegin(graph);
  accel::fillBits(stream_, static_cast<std::uint32_t*>(first.get()), kCount, a);
  accel::fillBits(stream_, static_cast<std::uint32_t*>(other.get()), kCount, b);
  accel::fillBits(stream_, static_cast<std::uint32_t*>(second.get()), kCount, a);
  hooks().graphCaptureEnd(graph);
  for (std::uint64_t replay = 0; replay < 2; ++replay) {
    SCOPED_TRACE(replay);
    hooks().graphReplay(graph);
    std::vector<std::uint32_t> want(kCount);
    accel::fillBits(std::span(want), PhiloxPosition{kSeed, kStart + replay * 2 * kCount});
    EXPECT_EQ(read<std::uint32_t>(first, kCount), want);
    accel::fillBits(std::span(want),
                    PhiloxPosition{kSeed, kStart + replay * 2 * kCount + kCount});
    EXPECT_EQ(read<std::uint32_t>(second, kCount), want);
    accel::fillBits(std::span(want), PhiloxPosition{kSeed + 7, kStart + replay * kCount});
    EXPECT_EQ(read<std::uint32_t>(other, kCount), want);
  }
  EXPECT_EQ(a.offset(), kStart + 4 * kCount);
  EXPECT_EQ(b.offset(), kStart + 2 * kCount);
  hooks().graphDestroy(graph);
}

// A replay made on another stream while the previous one is still pending
// must not overwrite the position that one has yet to read: its write waits
// for it. (Without the wait the second replay ran first here, and the held
// one then wrote the first position's numbers last.)
TEST_F(CapturedPhiloxTest, AReplayOnAnotherStreamWaitsForThePendingOne) {
  if (!simultaneousUse()) {
    GTEST_SKIP() << "no simultaneous use here: a replay waits on the host for the "
                    "previous one, which a held queue would never finish";
  }
  constexpr std::size_t kCount = 3000;
  DataPtr out = allocate<float>(kCount);
  Generator gen = generator();
  const GraphId graph = hooks().graphCreate();
  hooks().graphCaptureBegin(graph);
  accel::fillUniform(stream_, static_cast<float*>(out.get()), kCount, 0.0f, 1.0f, gen);
  hooks().graphCaptureEnd(graph);

  const Stream other = hooks().getNewStream(0);
  ASSERT_NE(other.id, stream_.id);
  {
    HeldQueue held(nativeQueue(stream_));
    hooks().graphReplay(graph);  // held: pending at kStart
    {
      StreamGuard onOther(other);
      hooks().graphReplay(graph);  // at kStart + kCount, after the held one
    }
    EXPECT_FALSE(hooks().queryStream(other)) << "the second replay ran before the first";
    held.release();
    hooks().synchronizeStream(stream_);
    hooks().synchronizeStream(other);
  }
  std::vector<float> want(kCount);
  accel::fillUniform(std::span(want), 0.0f, 1.0f, PhiloxPosition{kSeed, kStart + kCount});
  EXPECT_EQ(read<float>(out, kCount), want) << "the replays ran out of order";
  EXPECT_EQ(gen.offset(), kStart + 2 * kCount);
  hooks().graphDestroy(graph);
}

// A replay that fails once the positions began to be written keeps what it
// claimed (as the CUDA and openreg backends' do), and the writes it enqueued
// still run: the graph tracks them as its last replay, so that a reset or a
// destroy (which free the slots and release the pool) and the next replay
// wait for them. The failure here: the second generator's draw would pass
// 2^64 - 1, after the first one's write was enqueued on a held queue. (A
// failing clEnqueueSVMMemFill or clEnqueueCommandBufferKHR cannot be forced
// on pocl; they leave the graph the same way.)
class FailedReplayTest : public CapturedPhiloxTest {
 protected:
  static constexpr std::size_t kCount = 1000;
  static constexpr std::uint64_t kNearEnd = std::numeric_limits<std::uint64_t>::max() - 1;

  void SetUp() override {
    CapturedPhiloxTest::SetUp();
    if (IsSkipped()) return;
    first_ = allocate<std::uint32_t>(kCount);
    second_ = allocate<std::uint32_t>(kCount);
    graph_ = hooks().graphCreate();
    capture();
    b_.setOffset(kNearEnd);  // a replay cannot draw from b_ now
  }

  // A fill from a_, then one from b_: a replay claims a_'s draw first.
  void capture() {
    hooks().graphCaptureBegin(graph_);
    accel::fillBits(stream_, static_cast<std::uint32_t*>(first_.get()), kCount, a_);
    accel::fillBits(stream_, static_cast<std::uint32_t*>(second_.get()), kCount, b_);
    hooks().graphCaptureEnd(graph_);
  }
  // A replay that throws after enqueueing a_'s write (behind a held queue).
  void failAReplay() {
    EXPECT_THROW(hooks().graphReplay(graph_), InvalidArgument);
    EXPECT_EQ(a_.offset(), kStart + kOutputs) << "a failed replay keeps what it claimed";
    EXPECT_EQ(b_.offset(), kNearEnd);
  }
  // Runs `call` on another thread while `held` holds the queue; returns
  // whether it returned before the queue was released. (With the fix it
  // cannot: a pending write stands between it and its return.)
  static bool returnsWhileHeld(const std::function<void()>& call, HeldQueue& held) {
    std::atomic<bool> returned{false};
    std::thread thread([&] {
      try {
        call();
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
      returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const bool early = returned.load();
    held.release();
    thread.join();
    EXPECT_TRUE(returned.load());
    return early;
  }
  void expectNumbers(std::uint64_t fromA, std::uint64_t fromB) {
    std::vector<std::uint32_t> want(kCount);
    accel::fillBits(std::span(want), PhiloxPosition{kSeed, fromA});
    EXPECT_EQ(read<std::uint32_t>(first_, kCount), want);
    accel::fillBits(std::span(want), PhiloxPosition{kSeed + 7, fromB});
    EXPECT_EQ(read<std::uint32_t>(second_, kCount), want);
  }

  const std::uint64_t kOutputs = fillOutputs(FillKind::Uint32, kCount);
  Generator a_ = generator(kSeed);
  Generator b_ = generator(kSeed + 7);
  DataPtr first_, second_;
  GraphId graph_ = 0;
};

TEST_F(FailedReplayTest, ResetWaitsForItsWritesAndTheGraphCapturesAgain) {
  {
    HeldQueue held(nativeQueue(stream_));
    failAReplay();
    EXPECT_FALSE(returnsWhileHeld([&] { hooks().graphReset(graph_); }, held))
        << "the reset freed the slots while the failed replay's write was pending";
  }
  // Captured again: new slots, from a new pool.
  b_.setOffset(kStart);
  capture();
  hooks().graphReplay(graph_);
  expectNumbers(kStart + kOutputs, kStart);
  EXPECT_EQ(a_.offset(), kStart + 2 * kOutputs);
  EXPECT_EQ(b_.offset(), kStart + kOutputs);
  hooks().graphDestroy(graph_);
}

TEST_F(FailedReplayTest, DestroyWaitsForItsWrites) {
  HeldQueue held(nativeQueue(stream_));
  failAReplay();
  EXPECT_FALSE(returnsWhileHeld([&] { hooks().graphDestroy(graph_); }, held))
      << "the destroy freed the slots while the failed replay's write was pending";
}

TEST_F(FailedReplayTest, TheNextReplayOnAnotherStreamWaitsForItsWrites) {
  if (!simultaneousUse()) {
    GTEST_SKIP() << "no simultaneous use here: a replay waits on the host for the "
                    "previous one, which a held queue would never finish";
  }
  const Stream other = hooks().getNewStream(0);
  ASSERT_NE(other.id, stream_.id);
  {
    HeldQueue held(nativeQueue(stream_));
    failAReplay();
    b_.setOffset(kStart);
    {
      StreamGuard onOther(other);
      hooks().graphReplay(graph_);  // a_ at kStart + kOutputs, after the held write
    }
    for (int poll = 0; poll < 20; ++poll) {
      ASSERT_FALSE(hooks().queryStream(other))
          << "the next replay ran before the failed one's write";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    held.release();
    hooks().synchronizeStream(stream_);
    hooks().synchronizeStream(other);
  }
  expectNumbers(kStart + kOutputs, kStart);
  EXPECT_EQ(a_.offset(), kStart + 2 * kOutputs);
  hooks().graphDestroy(graph_);
}

}  // namespace
}  // namespace accel::opencl::testing
