// Captured random fills in openreg graphs: every replay draws the
// generator's next numbers, in program order with uncaptured fills, replays
// on two streams read their own positions, and a replay that fails midway
// keeps what it claimed (graphs.h).
#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "openreg_test_support.h"

namespace {

using openreg_test::OpenRegGraphTest;
using openreg_test::readBack;
using openreg_test::upload;

// Random fills: every replay draws the generator's next numbers, each the
// host fill's at the offset the replay claimed (the offset after the capture
// plus k times the graph's draw), and the generator moves by the graph's draw
// per replay, as PyTorch's CUDA graphs do.
TEST_F(OpenRegGraphTest, EveryReplayDrawsTheNextNumbersOfTheGenerator) {
  constexpr std::size_t kUniform = 1000;
  constexpr std::size_t kNormal = 33;  // odd: normals draw in pairs
  accel::DataPtr noise = accel::openreg::allocate(kUniform * sizeof(float), 1);
  accel::DataPtr copy = accel::openreg::allocate(kUniform * sizeof(float), 1);
  accel::DataPtr normal = accel::openreg::allocate(kNormal * sizeof(double), 1);
  accel::Generator generator = hooks().getNewGenerator(1);
  generator.manualSeed(7);
  generator.setOffset(40);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  accel::fillUniform(stream_, static_cast<float*>(noise.get()), kUniform, 0.0f, 1.0f,
                     generator);
  accel::openreg::copyAsync(copy.get(), noise.get(), kUniform * sizeof(float), stream_);
  accel::fillNormal(stream_, static_cast<double*>(normal.get()), kNormal, 1.0, 2.0,
                    generator);
  hooks().graphCaptureEnd(graph);
  EXPECT_EQ(generator.offset(), 40u);  // capturing draws nothing
  const std::uint64_t uniform_draw =
      accel::fillOutputs(accel::FillKind::UniformFloat, kUniform);
  const std::uint64_t draw =
      uniform_draw + accel::fillOutputs(accel::FillKind::NormalDouble, kNormal);
  std::vector<float> previous;
  for (std::uint64_t k = 0; k < 3; ++k) {
    upload(copy.get(), std::vector<float>(kUniform, -1.0f));
    hooks().graphReplay(graph);
    hooks().synchronizeStream(stream_);
    std::vector<float> uniform(kUniform);
    std::vector<double> normals(kNormal);
    accel::fillUniform(std::span<float>(uniform), 0.0f, 1.0f,
                       accel::PhiloxPosition{7, 40 + k * draw});
    accel::fillNormal(std::span<double>(normals), 1.0, 2.0,
                      accel::PhiloxPosition{7, 40 + k * draw + uniform_draw});
    const std::vector<float> replayed = readBack<float>(copy.get(), kUniform);
    EXPECT_EQ(replayed, uniform) << "replay " << k;
    EXPECT_EQ(readBack<double>(normal.get(), kNormal), normals) << "replay " << k;
    if (k > 0) {
      EXPECT_NE(replayed, previous) << "replay " << k << " repeated the one before";
    }
    previous = replayed;
  }
  EXPECT_EQ(generator.offset(), 40 + 3 * draw);
}

TEST_F(OpenRegGraphTest, ReplaysAndUncapturedFillsDrawInProgramOrder) {
  constexpr std::size_t kCount = 64;
  accel::DataPtr captured = accel::openreg::allocate(kCount * sizeof(float), 1);
  accel::DataPtr direct = accel::openreg::allocate(kCount * sizeof(float), 1);
  accel::Generator generator = hooks().getNewGenerator(1);
  generator.manualSeed(11);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  accel::fillUniform(stream_, static_cast<float*>(captured.get()), kCount, 0.0f, 1.0f,
                     generator);
  hooks().graphCaptureEnd(graph);
  hooks().graphReplay(graph);  // draws [0, 64)
  accel::fillUniform(stream_, static_cast<float*>(direct.get()), kCount, 0.0f, 1.0f,
                     generator);  // [64, 128)
  hooks().synchronizeStream(stream_);
  const std::vector<float> first = readBack<float>(captured.get(), kCount);
  hooks().graphReplay(graph);  // [128, 192)
  hooks().synchronizeStream(stream_);
  std::vector<float> expected(3 * kCount);
  accel::fillUniform(std::span<float>(expected), 0.0f, 1.0f,
                     accel::PhiloxPosition{11, 0});
  const auto part = [&](std::size_t i) {
    return std::vector<float>(expected.begin() + i * kCount,
                              expected.begin() + (i + 1) * kCount);
  };
  EXPECT_EQ(first, part(0));
  EXPECT_EQ(readBack<float>(direct.get(), kCount), part(1));
  EXPECT_EQ(readBack<float>(captured.get(), kCount), part(2));
  EXPECT_EQ(generator.offset(), 3 * kCount);
}

TEST_F(OpenRegGraphTest, AReplayOnAnotherStreamWaitsUntilThePendingOneReadItsPosition) {
  constexpr std::size_t kCount = 256;
  accel::DataPtr noise = accel::openreg::allocate(kCount * sizeof(float), 1);
  accel::DataPtr sum = accel::openreg::allocate(kCount * sizeof(float), 1);
  upload(sum.get(), std::vector<float>(kCount, 0.0f));
  accel::Generator generator = hooks().getNewGenerator(1);
  generator.manualSeed(5);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  accel::fillUniform(stream_, static_cast<float*>(noise.get()), kCount, 0.0f, 1.0f,
                     generator);
  accel::openreg::launchKernel(stream_, "accumulate",
                               {{"noise", noise.get(), kCount * sizeof(float)},
                                {"sum", sum.get(), kCount * sizeof(float)}},
                               [](const accel::openreg::KernelContext& k) {
                                 std::span<float> total = k.buffer<float>("sum");
                                 std::span<float> noise = k.buffer<float>("noise");
                                 for (std::size_t i = 0; i < total.size(); ++i)
                                   total[i] += noise[i];
                               });
  hooks().graphCaptureEnd(graph);
  // Each operation of the first replay starts 20 ms late, each of the
  // second's 30 ms late: were the second replay enqueued at once, its
  // position would land between the first's write (20 ms) and fill (40 ms).
  // It must wait for the first replay to finish instead.
  const accel::Stream other = hooks().getNewStream(1);
  accel::openreg::setStreamLatency(stream_, std::chrono::milliseconds(20));
  accel::openreg::setStreamLatency(other, std::chrono::milliseconds(30));
  hooks().graphReplay(graph);
  hooks().setCurrentStream(other);
  hooks().graphReplay(graph);
  hooks().synchronizeStream(other);
  hooks().synchronizeStream(stream_);
  accel::openreg::setStreamLatency(stream_, std::chrono::microseconds(0));
  accel::openreg::setStreamLatency(other, std::chrono::microseconds(0));
  std::vector<float> draws(2 * kCount);
  accel::fillUniform(std::span<float>(draws), 0.0f, 1.0f, accel::PhiloxPosition{5, 0});
  std::vector<float> expected(kCount);
  for (std::size_t i = 0; i < kCount; ++i) expected[i] = draws[i] + draws[kCount + i];
  EXPECT_EQ(readBack<float>(sum.get(), kCount), expected);
  EXPECT_EQ(generator.offset(), 2 * kCount);
}

TEST_F(OpenRegGraphTest, AGraphWithoutFillsLeavesTheGeneratorsAlone) {
  accel::DataPtr x = accel::openreg::allocate(4 * sizeof(int), 1);
  upload(x.get(), std::vector<int>{0, 1, 2, 3});
  accel::Generator generator = hooks().getDefaultGenerator(1);
  const std::uint64_t before = generator.offset();
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  enqueueStep(x.get(), 4);
  hooks().graphCaptureEnd(graph);
  hooks().graphReplay(graph);
  hooks().graphReplay(graph);
  hooks().synchronizeStream(stream_);
  EXPECT_EQ(readBack<int>(x.get(), 4), (std::vector<int>{3, 7, 11, 15}));
  EXPECT_EQ(generator.offset(), before);
}

// A replay that fails midway (here: the second generator's draw would pass
// 2^64 - 1, after the first one's write was enqueued) keeps the first
// generator's claim, and its write still runs: the next replay, on another
// stream, waits for it. The latencies put that write (30 ms) between the
// next replay's own write (20 ms) and its fill (40 ms and later), were the
// next replay not to wait: the fill would then read the failed replay's
// position.
TEST_F(OpenRegGraphTest, AFailedReplayKeepsItsClaimsAndTheNextReplayWaitsForItsWrites) {
  constexpr std::size_t kCount = 128;
  constexpr std::uint64_t kNearEnd = std::numeric_limits<std::uint64_t>::max() - 1;
  accel::DataPtr first = accel::openreg::allocate(kCount * sizeof(float), 1);
  accel::DataPtr second = accel::openreg::allocate(kCount * sizeof(float), 1);
  accel::Generator a = hooks().getNewGenerator(1);
  accel::Generator b = hooks().getNewGenerator(1);
  a.manualSeed(21);
  b.manualSeed(22);
  const accel::GraphId graph = newGraph();
  hooks().graphCaptureBegin(graph);
  accel::fillUniform(stream_, static_cast<float*>(first.get()), kCount, 0.0f, 1.0f, a);
  accel::fillUniform(stream_, static_cast<float*>(second.get()), kCount, 0.0f, 1.0f, b);
  hooks().graphCaptureEnd(graph);
  const accel::Stream other = hooks().getNewStream(1);
  accel::openreg::setStreamLatency(stream_, std::chrono::milliseconds(30));
  accel::openreg::setStreamLatency(other, std::chrono::milliseconds(20));
  b.setOffset(kNearEnd);
  EXPECT_THROW(hooks().graphReplay(graph), accel::InvalidArgument);
  EXPECT_EQ(a.offset(), kCount) << "a failed replay keeps what it claimed";
  EXPECT_EQ(b.offset(), kNearEnd);
  b.setOffset(0);
  hooks().setCurrentStream(other);
  hooks().graphReplay(graph);
  hooks().synchronizeStream(other);
  hooks().synchronizeStream(stream_);
  accel::openreg::setStreamLatency(stream_, std::chrono::microseconds(0));
  accel::openreg::setStreamLatency(other, std::chrono::microseconds(0));
  std::vector<float> want(kCount);
  accel::fillUniform(std::span<float>(want), 0.0f, 1.0f,
                     accel::PhiloxPosition{21, kCount});
  EXPECT_EQ(readBack<float>(first.get(), kCount), want)
      << "the next replay read the failed one's position";
  accel::fillUniform(std::span<float>(want), 0.0f, 1.0f, accel::PhiloxPosition{22, 0});
  EXPECT_EQ(readBack<float>(second.get(), kCount), want);
  EXPECT_EQ(a.offset(), 2 * kCount);
  EXPECT_EQ(b.offset(), kCount);
}

}  // namespace
