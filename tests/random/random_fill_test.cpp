// Host fills: every path (scalar, AVX2, AVX-512) and every thread split gives
// exactly the documented mapping of the Philox stream, at any size, offset and
// output alignment; parameters are checked before anything is consumed.
#include "accel/random_fill.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <ostream>
#include <random>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accel/error.h"
#include "accel/philox_generator.h"

namespace accel {
namespace {

constexpr FillPath kForcedPaths[] = {FillPath::Scalar, FillPath::Avx2, FillPath::Avx512};
// Enough for several SIMD chunks and for a 6-way thread split.
constexpr std::size_t kLarge = 100003;

// Outputs [offset, offset + count) of stream (seed, 0), straight from philox4x32.
std::vector<std::uint32_t> streamOutputs(std::uint64_t seed, std::uint64_t offset,
                                         std::size_t count) {
  std::vector<std::uint32_t> outputs(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t n = offset + i;
    if (i == 0 || n % 4 == 0) {
      const PhiloxCounter block = philoxBlock(seed, 0, n / 4);
      for (std::size_t j = i; j < count && (offset + j) / 4 == n / 4; ++j) {
        outputs[j] = block[(offset + j) % 4];
      }
    }
  }
  return outputs;
}

std::uint64_t join(std::uint32_t low, std::uint32_t high) {
  return (std::uint64_t{high} << 32) | low;
}

// One kind of fill with fixed parameters: how to run it, and what the
// documented mapping says it must produce.
struct FillCase {
  std::string name;
  FillKind kind;
  std::size_t elementBytes;
  std::function<void(void* out, std::size_t count, PhiloxPosition from, FillOptions)>
      fill;
  std::function<void(void* out, std::size_t count, const Generator&)> fillFrom;
  std::function<void(void* out, std::size_t count, const std::vector<std::uint32_t>& o)>
      reference;
};

// Failure messages name the case rather than dumping its bytes.
void PrintTo(const FillCase& c, std::ostream* out) { *out << c.name; }

template <typename T>
std::span<T> as(void* out, std::size_t count) {
  return {static_cast<T*>(out), count};
}

// A FillCase of T elements. `fill(span, source...)` runs the fill; source is
// a PhiloxPosition and FillOptions, or a Generator (every fill has both
// overloads, with the same leading arguments). `reference(span, outputs)`
// writes what the documented mapping makes of the stream's outputs.
template <typename T, typename Fill, typename Reference>
FillCase fillCase(std::string name, FillKind kind, Fill fill, Reference reference) {
  return {std::move(name),
          kind,
          sizeof(T),
          [fill](void* out, std::size_t n, PhiloxPosition from, FillOptions options) {
            fill(as<T>(out, n), from, options);
          },
          [fill](void* out, std::size_t n, const Generator& generator) {
            fill(as<T>(out, n), generator);
          },
          [reference](void* out, std::size_t n, const std::vector<std::uint32_t>& o) {
            reference(as<T>(out, n), o);
          }};
}

// The reference of a fill whose element i is element(outputs, i).
template <typename Element>
auto elementwise(Element element) {
  return [element](auto out, const std::vector<std::uint32_t>& o) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = element(o, i);
  };
}

// The reference of a normal fill: elements 2p and 2p + 1 from pairAt(p).
template <typename T, typename Pair>
auto normalPairs(T mean, T stddev, Pair pairAt) {
  return [=](std::span<T> out, const std::vector<std::uint32_t>& o) {
    for (std::size_t i = 0; i < out.size(); i += 2) {
      const auto z = pairAt(o, i / 2);
      out[i] = z[0] * stddev + mean;
      if (i + 1 < out.size()) out[i + 1] = z[1] * stddev + mean;
    }
  };
}

std::vector<FillCase> fillCases() {
  using O = const std::vector<std::uint32_t>&;
  using std::size_t;
  return {
      fillCase<std::uint32_t>(
          "Uint32", FillKind::Uint32,
          [](auto out, const auto&... source) { fillBits(out, source...); },
          elementwise([](O o, size_t i) { return o[i]; })),
      fillCase<std::uint64_t>(
          "Uint64", FillKind::Uint64,
          [](auto out, const auto&... source) { fillBits(out, source...); },
          elementwise([](O o, size_t i) { return join(o[2 * i], o[2 * i + 1]); })),
      fillCase<float>(
          "UniformFloat", FillKind::UniformFloat,
          [](auto out, const auto&... source) { fillUniform(out, source...); },
          elementwise([](O o, size_t i) { return uniformFloatFromBits(o[i]); })),
      fillCase<float>(
          "UniformFloatRange", FillKind::UniformFloat,
          [](auto out, const auto&... source) {
            fillUniform(out, -2.5f, 7.25f, source...);
          },
          elementwise(
              [](O o, size_t i) { return uniformFloatFromBits(o[i], -2.5f, 7.25f); })),
      fillCase<double>(
          "UniformDouble", FillKind::UniformDouble,
          [](auto out, const auto&... source) { fillUniform(out, source...); },
          elementwise([](O o, size_t i) {
            return uniformDoubleFromBits(o[2 * i], o[2 * i + 1]);
          })),
      fillCase<double>(
          "UniformDoubleRange", FillKind::UniformDouble,
          [](auto out, const auto&... source) {
            fillUniform(out, -1e3, 0.05, source...);
          },
          elementwise([](O o, size_t i) {
            return uniformDoubleFromBits(o[2 * i], o[2 * i + 1], -1e3, 0.05);
          })),
      fillCase<float>(
          "NormalFloat", FillKind::NormalFloat,
          [](auto out, const auto&... source) { fillNormal(out, 1.5f, 2.0f, source...); },
          normalPairs(1.5f, 2.0f,
                      [](O o, size_t p) {
                        return normalFloatPairFromBits(o[2 * p], o[2 * p + 1]);
                      })),
      fillCase<double>(
          "NormalDouble", FillKind::NormalDouble,
          [](auto out, const auto&... source) { fillNormal(out, -3.0, 0.5, source...); },
          normalPairs(-3.0, 0.5,
                      [](O o, size_t p) {
                        return normalDoublePairFromBits(o[4 * p], o[4 * p + 1],
                                                        o[4 * p + 2], o[4 * p + 3]);
                      })),
      fillCase<std::uint8_t>(
          "BernoulliByte", FillKind::Bernoulli,
          [](auto out, const auto&... source) { fillBernoulli(out, 0.3, source...); },
          elementwise([](O o, size_t i) {
            return std::uint8_t{bernoulliFromBits(o[i], bernoulliThreshold(0.3))};
          })),
      fillCase<float>(
          "BernoulliFloat", FillKind::Bernoulli,
          [](auto out, const auto&... source) { fillBernoulli(out, 0.71, source...); },
          elementwise([](O o, size_t i) {
            return bernoulliFromBits(o[i], bernoulliThreshold(0.71)) ? 1.0f : 0.0f;
          })),
  };
}

// An output area `shift` elements into a buffer whose other bytes hold a
// guard pattern, so that writes outside the elements are caught.
class GuardedOutput {
 public:
  static constexpr std::uint8_t kGuard = 0xCD;

  GuardedOutput(std::size_t count, std::size_t elementBytes, std::size_t shift)
      : begin_(shift * elementBytes + kSlack),
        bytes_(count * elementBytes),
        storage_((begin_ + bytes_ + kSlack + 7) / 8) {
    std::memset(storage_.data(), kGuard, storage_.size() * 8);
  }

  void* data() { return raw() + begin_; }
  std::vector<std::uint8_t> bytes() const {
    return {raw() + begin_, raw() + begin_ + bytes_};
  }
  bool guardsIntact() const {
    for (std::size_t i = 0; i < storage_.size() * 8; ++i) {
      if ((i < begin_ || i >= begin_ + bytes_) && raw()[i] != kGuard) return false;
    }
    return true;
  }

 private:
  static constexpr std::size_t kSlack = 64;
  std::uint8_t* raw() { return reinterpret_cast<std::uint8_t*>(storage_.data()); }
  const std::uint8_t* raw() const {
    return reinterpret_cast<const std::uint8_t*>(storage_.data());
  }

  std::size_t begin_;
  std::size_t bytes_;
  std::vector<std::uint64_t> storage_;  // 8-byte aligned, so shift decides alignment
};

std::vector<std::uint8_t> expectedBytes(const FillCase& c, std::size_t count,
                                        PhiloxPosition from) {
  const std::vector<std::uint32_t> outputs =
      streamOutputs(from.seed, from.offset, fillOutputs(c.kind, count));
  GuardedOutput expected(count, c.elementBytes, 0);
  c.reference(expected.data(), count, outputs);
  return expected.bytes();
}

std::string describe(FillPath path, std::size_t count, PhiloxPosition from,
                     std::size_t shift, unsigned threads) {
  return std::string("path ") + std::string(fillPathName(path)) + ", count " +
         std::to_string(count) + ", offset " + std::to_string(from.offset) + ", shift " +
         std::to_string(shift) + ", threads " + std::to_string(threads);
}

class RandomFill : public ::testing::TestWithParam<FillCase> {};

TEST_P(RandomFill, EveryPathMapsAsDocumentedAtAnySizeOffsetAndAlignment) {
  const FillCase& c = GetParam();
  const std::uint64_t seed = 0x5EED0000CAFEull;
  const std::uint64_t offsets[] = {
      0, 1, 2, 3, 5, (1ull << 34) - 6, (1ull << 34) - 4 * 37 - 1, 0x0123456789ABCDEFull};
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{3},
                            std::size_t{5}, std::size_t{4097}, kLarge}) {
    for (std::uint64_t offset : offsets) {
      if (count == kLarge && offset > 3 && offset != (1ull << 34) - 6) continue;
      const PhiloxPosition from{seed, offset};
      const std::vector<std::uint8_t> expected = expectedBytes(c, count, from);
      for (FillPath path : kForcedPaths) {
        if (!isFillPathSupported(path)) continue;
        for (std::size_t shift : {std::size_t{1}, std::size_t{3}}) {
          GuardedOutput out(count, c.elementBytes, shift);
          c.fill(out.data(), count, from, FillOptions{path, 1});
          ASSERT_EQ(out.bytes(), expected) << describe(path, count, from, shift, 1);
          ASSERT_TRUE(out.guardsIntact()) << describe(path, count, from, shift, 1);
        }
      }
    }
  }
}

TEST_P(RandomFill, ThreadedFillGivesTheSameNumbersAsOneThread) {
  const FillCase& c = GetParam();
  for (std::size_t count : {std::size_t{2 * 16384 + 3}, kLarge}) {
    const PhiloxPosition from{77, 3};
    const std::vector<std::uint8_t> expected = expectedBytes(c, count, from);
    for (FillPath path : {FillPath::Auto, FillPath::Scalar}) {
      for (unsigned threads : {2u, 3u, 8u, 0u}) {
        GuardedOutput out(count, c.elementBytes, 1);
        c.fill(out.data(), count, from, FillOptions{path, threads});
        ASSERT_EQ(out.bytes(), expected) << describe(path, count, from, 1, threads);
        ASSERT_TRUE(out.guardsIntact()) << describe(path, count, from, 1, threads);
      }
    }
  }
}

TEST_P(RandomFill, PathsAgreeOnRandomSeedsOffsetsAndSizes) {
  const FillCase& c = GetParam();
  std::mt19937_64 pick(12345);
  for (int trial = 0; trial < 40; ++trial) {
    const PhiloxPosition from{pick(), pick() >> 8};
    const std::size_t count = pick() % 700;
    const std::vector<std::uint8_t> expected = expectedBytes(c, count, from);
    for (FillPath path : kForcedPaths) {
      if (!isFillPathSupported(path)) continue;
      GuardedOutput out(count, c.elementBytes, trial % 5);
      c.fill(out.data(), count, from, FillOptions{path, 1});
      ASSERT_EQ(out.bytes(), expected) << describe(path, count, from, trial % 5, 1);
    }
  }
}

TEST_P(RandomFill, GeneratorFillReservesExactlyFillOutputsAndDrawsFromThere) {
  const FillCase& c = GetParam();
  Generator gen = makePhiloxGenerator(Device(DeviceType::CPU, 0), 2024);
  gen.setOffset(7);
  for (std::size_t count : {std::size_t{5}, std::size_t{64}, std::size_t{0}}) {
    const std::uint64_t before = gen.offset();
    GuardedOutput out(count, c.elementBytes, 0);
    c.fillFrom(out.data(), count, gen);
    EXPECT_EQ(gen.offset(), before + fillOutputs(c.kind, count));
    EXPECT_EQ(out.bytes(), expectedBytes(c, count, {2024, before}));
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKind, RandomFill, ::testing::ValuesIn(fillCases()),
                         [](const ::testing::TestParamInfo<FillCase>& info) {
                           return info.param.name;
                         });

TEST(RandomFillOutputs, CountsAreTheDocumentedConsumption) {
  EXPECT_EQ(fillOutputs(FillKind::Uint32, 5), 5u);
  EXPECT_EQ(fillOutputs(FillKind::Uint64, 5), 10u);
  EXPECT_EQ(fillOutputs(FillKind::UniformFloat, 5), 5u);
  EXPECT_EQ(fillOutputs(FillKind::UniformDouble, 5), 10u);
  EXPECT_EQ(fillOutputs(FillKind::NormalFloat, 5), 6u);
  EXPECT_EQ(fillOutputs(FillKind::NormalFloat, 6), 6u);
  EXPECT_EQ(fillOutputs(FillKind::NormalDouble, 5), 12u);
  EXPECT_EQ(fillOutputs(FillKind::Bernoulli, 5), 5u);
}

TEST(RandomFillMapping, UniformEndpointsAreExact) {
  EXPECT_EQ(uniformFloatFromBits(0), 0.0f);
  EXPECT_EQ(uniformFloatFromBits(0xFF), 0.0f);
  EXPECT_EQ(uniformFloatFromBits(0x100), 0x1p-24f);
  EXPECT_EQ(uniformFloatFromBits(0xFFFFFFFF), 1.0f - 0x1p-24f);
  EXPECT_EQ(uniformDoubleFromBits(0, 0), 0.0);
  EXPECT_EQ(uniformDoubleFromBits(0x800, 0), 0x1p-53);
  EXPECT_EQ(uniformDoubleFromBits(0xFFFFFFFF, 0xFFFFFFFF), 1.0 - 0x1p-53);
  EXPECT_EQ(uniformDoubleFromBits(0, 0x80000000),
            0.5);  // the second word is the high one
}

TEST(RandomFillMapping, UniformRangeNeverReturnsHigh) {
  // Here u * range + low rounds to high for the largest u; the clamp keeps it below.
  const float low = std::nextafter(1.0f, 0.0f);
  EXPECT_EQ(uniformFloatFromBits(0xFFFFFFFF, low, 1.0f), low);
  const double lowD = std::nextafter(1.0, 0.0);
  EXPECT_EQ(uniformDoubleFromBits(~0u, ~0u, lowD, 1.0), lowD);

  std::vector<float> values(4096);
  for (FillPath path : kForcedPaths) {
    if (!isFillPathSupported(path)) continue;
    fillUniform(values, low, 1.0f, {1, 0}, {path, 1});
    for (float v : values) ASSERT_EQ(v, low);
  }
  fillUniform(values, -1.0f, 1.0f, {1, 0});
  for (float v : values) ASSERT_TRUE(v >= -1.0f && v < 1.0f) << v;
}

TEST(RandomFillMapping, NormalPairIsBoxMullerWithinAFewUlps) {
  std::mt19937 pick(7);  // 32-bit results
  double worstFloat = 0;
  double worstDouble = 0;
  for (int i = 0; i < 20000; ++i) {
    std::uint32_t w[4];
    for (std::uint32_t& word : w) word = static_cast<std::uint32_t>(pick());
    const double u1 = ((w[0] >> 8) + 1) * 0x1p-24;
    const double turn = (w[1] >> 8) * 0x1p-24;
    const long double pi = 3.141592653589793238462643383279502884L;
    const long double r = std::sqrt(-2.0L * std::log(static_cast<long double>(u1)));
    const std::array<float, 2> z = normalFloatPairFromBits(w[0], w[1]);
    const long double expect0 = r * std::cos(2 * pi * turn);
    const long double expect1 = r * std::sin(2 * pi * turn);
    worstFloat = std::max<double>(worstFloat, std::fabs(z[0] - expect0));
    worstFloat = std::max<double>(worstFloat, std::fabs(z[1] - expect1));

    const long double u1d = ((join(w[0], w[1]) >> 11) + 1) * 0x1p-53L;
    const long double turnd = (join(w[2], w[3]) >> 11) * 0x1p-53L;
    const long double rd = std::sqrt(-2.0L * std::log(u1d));
    const std::array<double, 2> zd = normalDoublePairFromBits(w[0], w[1], w[2], w[3]);
    worstDouble =
        std::max<double>(worstDouble, std::fabs(zd[0] - rd * std::cos(2 * pi * turnd)));
    worstDouble =
        std::max<double>(worstDouble, std::fabs(zd[1] - rd * std::sin(2 * pi * turnd)));
  }
  // |z| < 9, so these are a couple of units in the last place (measured over
  // 2 * 10^6 inputs: 6.0e-7 and 1.3e-15).
  EXPECT_LT(worstFloat, 1.5e-6);
  EXPECT_LT(worstDouble, 4e-15);
}

TEST(RandomFillMapping, NormalPairEdgeInputs) {
  // u1 = 1: radius 0.
  const std::array<float, 2> zero = normalFloatPairFromBits(0xFFFFFFFF, 0x12345678);
  EXPECT_EQ(zero[0], 0.0f);
  EXPECT_EQ(zero[1], 0.0f);
  // u1 = 2^-24, angle 0: the largest radius, all on z0.
  const std::array<float, 2> far = normalFloatPairFromBits(0, 0);
  EXPECT_NEAR(far[0], std::sqrt(-2.0 * std::log(0x1p-24)), 2e-6);
  EXPECT_EQ(far[1], 0.0f);
  // A quarter turn: all on z1.
  const std::array<float, 2> quarter = normalFloatPairFromBits(0, 0x40000000);
  EXPECT_NEAR(quarter[0], 0.0f, 1e-7);
  EXPECT_NEAR(quarter[1], far[0], 2e-6);
  const std::array<double, 2> farD = normalDoublePairFromBits(0, 0, 0, 0);
  EXPECT_NEAR(farD[0], std::sqrt(-2.0 * std::log(0x1p-53)), 1e-14);
  EXPECT_EQ(farD[1], 0.0);
}

TEST(RandomFillBernoulli, ProbabilityZeroAndOneAreExact) {
  std::vector<std::uint8_t> bytes(1000);
  std::vector<float> floats(1000);
  for (FillPath path : {FillPath::Auto, FillPath::Scalar}) {
    fillBernoulli(bytes, 1.0, {3, 1}, {path, 1});
    fillBernoulli(floats, 1.0, {3, 1}, {path, 1});
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      ASSERT_EQ(bytes[i], 1);
      ASSERT_EQ(floats[i], 1.0f);
    }
    fillBernoulli(bytes, 0.0, {3, 1}, {path, 1});
    fillBernoulli(floats, 0.0, {3, 1}, {path, 1});
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      ASSERT_EQ(bytes[i], 0);
      ASSERT_EQ(floats[i], 0.0f);
    }
  }
  EXPECT_EQ(bernoulliThreshold(1.0), 1ull << 32);
  EXPECT_EQ(bernoulliThreshold(0.5), 1ull << 31);
  EXPECT_TRUE(bernoulliFromBits(0x7FFFFFFF, bernoulliThreshold(0.5)));
  EXPECT_FALSE(bernoulliFromBits(0x80000000, bernoulliThreshold(0.5)));
}

TEST(RandomFillErrors, BadParametersThrowBeforeConsumingOrWriting) {
  Generator gen = makePhiloxGenerator(Device(DeviceType::CPU, 0), 1);
  std::vector<float> floats(8, -7.0f);
  std::vector<double> doubles(8, -7.0);
  std::vector<std::uint8_t> bytes(8, 9);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(fillUniform(floats, 1.0f, 1.0f, gen), InvalidArgument);
  EXPECT_THROW(fillUniform(floats, 2.0f, 1.0f, gen), InvalidArgument);
  EXPECT_THROW(fillUniform(floats, 0.0f, inf, gen), InvalidArgument);
  EXPECT_THROW(fillUniform(floats, nan, 1.0f, gen), InvalidArgument);
  EXPECT_THROW(fillUniform(floats, -3e38f, 3e38f, gen),
               InvalidArgument);  // range overflows
  EXPECT_THROW(fillUniform(doubles, 0.0, std::nan(""), gen), InvalidArgument);
  EXPECT_THROW(fillNormal(floats, 0.0f, -1.0f, gen), InvalidArgument);
  EXPECT_THROW(fillNormal(floats, nan, 1.0f, gen), InvalidArgument);
  EXPECT_THROW(fillNormal(doubles, 0.0, std::numeric_limits<double>::infinity(), gen),
               InvalidArgument);
  EXPECT_THROW(fillBernoulli(bytes, -0.1, gen), InvalidArgument);
  EXPECT_THROW(fillBernoulli(bytes, 1.5, gen), InvalidArgument);
  EXPECT_THROW(fillBernoulli(bytes, std::nan(""), gen), InvalidArgument);
  EXPECT_EQ(gen.offset(), 0u);
  EXPECT_EQ(floats, std::vector<float>(8, -7.0f));
  EXPECT_EQ(doubles, std::vector<double>(8, -7.0));
  EXPECT_EQ(bytes, std::vector<std::uint8_t>(8, 9));
  // Degenerate but valid: stddev 0 gives the mean.
  fillNormal(floats, 4.0f, 0.0f, gen);
  EXPECT_EQ(floats, std::vector<float>(8, 4.0f));
}

TEST(RandomFillErrors, FillRunningPastPositionTwoToThe64Throws) {
  std::vector<float> floats(4);
  EXPECT_THROW(fillUniform(floats, {1, ~0ull - 3}), InvalidArgument);
  EXPECT_NO_THROW(fillUniform(floats, {1, ~0ull - 4}));
  std::vector<double> doubles(2);
  EXPECT_THROW(fillUniform(doubles, {1, ~0ull - 3}), InvalidArgument);
}

TEST(RandomFillPaths, AutoResolvesToTheWidestSupportedPath) {
  EXPECT_TRUE(isFillPathSupported(FillPath::Auto));
  EXPECT_TRUE(isFillPathSupported(FillPath::Scalar));
  const FillPath chosen = resolveFillPath(FillPath::Auto);
  EXPECT_TRUE(isFillPathSupported(chosen));
  if (isFillPathSupported(FillPath::Avx512)) {
    EXPECT_EQ(chosen, FillPath::Avx512);
  } else if (isFillPathSupported(FillPath::Avx2)) {
    EXPECT_EQ(chosen, FillPath::Avx2);
  } else {
    EXPECT_EQ(chosen, FillPath::Scalar);
  }
  EXPECT_EQ(resolveFillPath(FillPath::Scalar), FillPath::Scalar);
  EXPECT_EQ(fillPathName(FillPath::Avx512), "avx512");
  EXPECT_EQ(fillPathName(FillPath::Avx2), "avx2");
  EXPECT_EQ(fillPathName(FillPath::Scalar), "scalar");
  EXPECT_EQ(fillPathName(FillPath::Auto), "auto");
}

TEST(RandomFillPaths, ForcingAnUnsupportedPathThrowsNotSupported) {
  for (FillPath path : kForcedPaths) {
    if (isFillPathSupported(path)) continue;
    std::vector<float> values(4, 3.0f);
    EXPECT_THROW(fillUniform(values, {1, 0}, {path, 1}), NotSupported);
    EXPECT_EQ(values, std::vector<float>(4, 3.0f));
    return;
  }
  GTEST_SKIP() << "this CPU supports every fill path";
}

TEST(RandomFillGenerator, ConsecutiveFillsContinueTheStream) {
  Generator gen = makePhiloxGenerator(Device(DeviceType::CPU, 0), 99);
  std::vector<float> first(1000), second(1000), whole(2000);
  fillUniform(first, gen);
  fillUniform(second, gen);
  fillUniform(whole, {99, 0});
  EXPECT_TRUE(std::equal(first.begin(), first.end(), whole.begin()));
  EXPECT_TRUE(std::equal(second.begin(), second.end(), whole.begin() + 1000));
}

TEST(RandomFillGenerator, ConcurrentFillsFromOneGeneratorGetDisjointParts) {
  Generator gen = makePhiloxGenerator(Device(DeviceType::CPU, 0), 5);
  constexpr int kThreads = 4;
  constexpr std::size_t kCount = 1000;
  std::vector<std::vector<float>> results(kThreads, std::vector<float>(kCount));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { fillUniform(results[t], gen); });
  }
  for (std::thread& thread : threads) thread.join();

  std::vector<float> whole(kThreads * kCount);
  fillUniform(whole, {5, 0});
  std::set<std::size_t> starts;
  for (const std::vector<float>& result : results) {
    for (std::size_t part = 0; part < kThreads; ++part) {
      if (std::equal(result.begin(), result.end(), whole.begin() + part * kCount)) {
        starts.insert(part);
      }
    }
  }
  EXPECT_EQ(starts.size(), static_cast<std::size_t>(kThreads));
  EXPECT_EQ(gen.offset(), kThreads * kCount);
}

}  // namespace
}  // namespace accel
