// kit::*FillJob and kit::fillApiName: the job behind each public device fill
// (accel/kit/device_fill_jobs.h), as the CUDA and OpenCL backends build it.
#include "accel/kit/device_fill_jobs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "accel/error.h"

namespace accel::kit {
namespace {

TEST(DeviceFillJobs, ApiNameFollowsTheKind) {
  EXPECT_STREQ(fillApiName(FillKind::Uint32), "fillBits");
  EXPECT_STREQ(fillApiName(FillKind::Uint64), "fillBits");
  EXPECT_STREQ(fillApiName(FillKind::UniformFloat), "fillUniform");
  EXPECT_STREQ(fillApiName(FillKind::UniformDouble), "fillUniform");
  EXPECT_STREQ(fillApiName(FillKind::NormalFloat), "fillNormal");
  EXPECT_STREQ(fillApiName(FillKind::NormalDouble), "fillNormal");
  EXPECT_STREQ(fillApiName(FillKind::Bernoulli), "fillBernoulli");
}

TEST(DeviceFillJobs, UniformZeroToOneIsTheUnrangedFillAndOtherBoundsAreARange) {
  float data[4];
  const accel::detail::FillJob unit = uniformFillJob(data, 4, 0.0f, 1.0f);
  EXPECT_EQ(unit.kind, FillKind::UniformFloat);
  EXPECT_FALSE(unit.ranged);
  EXPECT_EQ(unit.out, data);
  EXPECT_EQ(unit.count, 4u);
  const accel::detail::FillJob ranged = uniformFillJob(data, 4, -2.0f, 6.0f);
  EXPECT_TRUE(ranged.ranged);
  EXPECT_EQ(ranged.low, -2.0);
  EXPECT_EQ(ranged.range, 8.0);
  double wide[2];
  EXPECT_EQ(uniformFillJob(wide, 2, 0.0, 1.0).kind, FillKind::UniformDouble);
  EXPECT_TRUE(uniformFillJob(wide, 2, 0.0, 2.0).ranged);
}

TEST(DeviceFillJobs, BadParametersAreRefusedNamingThePublicCall) {
  float data[4];
  try {
    (void)uniformFillJob(data, 4, 1.0f, 1.0f);
    FAIL() << "an empty range was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("fillUniform"), std::string::npos) << e.what();
  }
  try {
    (void)normalFillJob(data, 4, 0.0f, -1.0f);
    FAIL() << "a negative stddev was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("fillNormal"), std::string::npos) << e.what();
  }
  std::uint8_t bytes[4];
  try {
    (void)bernoulliFillJob(bytes, 4, 1.5);
    FAIL() << "p = 1.5 was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("fillBernoulli"), std::string::npos) << e.what();
  }
}

TEST(DeviceFillJobs, BitsAndBernoulliJobsKeepTheirOutputType) {
  std::uint64_t words[2];
  EXPECT_EQ(bitsFillJob(words, 2).kind, FillKind::Uint64);
  std::uint8_t bytes[2];
  float floats[2];
  EXPECT_EQ(bernoulliFillJob(bytes, 2, 0.5).output, accel::detail::FillOutput::Byte);
  EXPECT_EQ(bernoulliFillJob(floats, 2, 0.5).output, accel::detail::FillOutput::Float);
  EXPECT_EQ(normalFillJob(floats, 2, 1.0f, 2.0f).mean, 1.0);
}

}  // namespace
}  // namespace accel::kit
