// The fills have the distributions they claim: moments within five standard
// errors, and Kolmogorov-Smirnov on 10^6 samples at the 0.1% level, with
// fixed seeds (so each check is deterministic; a wrong mapping fails it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "accel/random_fill.h"

namespace accel {
namespace {

constexpr std::size_t kSamples = 1'000'000;
// Critical value of the Kolmogorov-Smirnov statistic at alpha = 0.001.
const double kKsCritical = 1.9495 / std::sqrt(static_cast<double>(kSamples));

// The largest distance between the empirical CDF of `samples` and `cdf`.
template <typename T>
double ksStatistic(std::vector<T> samples, const std::function<double(double)>& cdf) {
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double worst = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double f = cdf(static_cast<double>(samples[i]));
    worst = std::max(
        {worst, (static_cast<double>(i) + 1) / n - f, f - static_cast<double>(i) / n});
  }
  return worst;
}

double normalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

template <typename T>
double mean(const std::vector<T>& values) {
  double sum = 0;
  for (T v : values) sum += static_cast<double>(v);
  return sum / static_cast<double>(values.size());
}

template <typename T>
double variance(const std::vector<T>& values) {
  const double m = mean(values);
  double sum = 0;
  for (T v : values) sum += (static_cast<double>(v) - m) * (static_cast<double>(v) - m);
  return sum / static_cast<double>(values.size() - 1);
}

const double kN = static_cast<double>(kSamples);

TEST(RandomDistribution, UniformFloatHasUniformMomentsAndPassesKolmogorovSmirnov) {
  const double a = -2.0, b = 3.0;
  std::vector<float> values(kSamples);
  fillUniform(values, static_cast<float>(a), static_cast<float>(b), {11, 0});
  EXPECT_NEAR(mean(values), (a + b) / 2, 5 * (b - a) / std::sqrt(12 * kN));
  EXPECT_NEAR(variance(values), (b - a) * (b - a) / 12,
              5 * (b - a) * (b - a) / std::sqrt(180 * kN));
  EXPECT_LT(ksStatistic(values, [&](double x) { return (x - a) / (b - a); }),
            kKsCritical);
}

TEST(RandomDistribution, UniformDoublePassesKolmogorovSmirnov) {
  std::vector<double> values(kSamples);
  fillUniform(values, {12, 5});
  EXPECT_NEAR(mean(values), 0.5, 5 / std::sqrt(12 * kN));
  EXPECT_LT(ksStatistic(values, [](double x) { return x; }), kKsCritical);
}

TEST(RandomDistribution, NormalFloatHasNormalMomentsAndPassesKolmogorovSmirnov) {
  const double mu = 3.0, sigma = 2.0;
  std::vector<float> values(kSamples);
  fillNormal(values, static_cast<float>(mu), static_cast<float>(sigma), {13, 0});
  EXPECT_NEAR(mean(values), mu, 5 * sigma / std::sqrt(kN));
  EXPECT_NEAR(variance(values), sigma * sigma, 5 * sigma * sigma * std::sqrt(2 / kN));
  EXPECT_LT(ksStatistic(values, [&](double x) { return normalCdf((x - mu) / sigma); }),
            kKsCritical);
}

TEST(RandomDistribution, NormalDoubleHasNormalMomentsTailsAndPassesKolmogorovSmirnov) {
  std::vector<double> values(kSamples);
  fillNormal(values, 0.0, 1.0, {14, 1});
  EXPECT_NEAR(mean(values), 0.0, 5 / std::sqrt(kN));
  EXPECT_NEAR(variance(values), 1.0, 5 * std::sqrt(2 / kN));
  // Beyond three standard deviations: 0.27%, a check on the tails KS barely sees.
  const double p3 = 2 * normalCdf(-3.0);
  const auto beyond = std::count_if(values.begin(), values.end(),
                                    [](double z) { return std::fabs(z) > 3.0; });
  EXPECT_NEAR(static_cast<double>(beyond) / kN, p3, 5 * std::sqrt(p3 * (1 - p3) / kN));
  EXPECT_LT(ksStatistic(values, normalCdf), kKsCritical);
}

TEST(RandomDistribution, BernoulliHasMeanP) {
  for (double p : {0.01, 0.3, 0.5, 0.97}) {
    std::vector<std::uint8_t> values(kSamples);
    fillBernoulli(values, p, {15, 0});
    EXPECT_NEAR(mean(values), p, 5 * std::sqrt(p * (1 - p) / kN)) << "p = " << p;
  }
}

TEST(RandomDistribution, EveryBitOfUint32AndUint64IsSetHalfTheTime) {
  std::vector<std::uint32_t> words(kSamples / 4);
  fillBits(words, {16, 0});
  std::vector<std::uint64_t> wide(kSamples / 4);
  fillBits(wide, {16, 3});
  const double n = static_cast<double>(words.size());
  for (int bit = 0; bit < 64; ++bit) {
    double set = 0;
    double setWide = 0;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (bit < 32) {
        set += (words[i] >> bit) & 1;
      }
      setWide += (wide[i] >> bit) & 1;
    }
    if (bit < 32) {
      EXPECT_NEAR(set / n, 0.5, 5 * 0.5 / std::sqrt(n)) << "bit " << bit;
    }
    EXPECT_NEAR(setWide / n, 0.5, 5 * 0.5 / std::sqrt(n)) << "bit " << bit;
  }
}

}  // namespace
}  // namespace accel
