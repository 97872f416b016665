// CUDA's device fill is the fill group's (CudaBackend::fill), reached
// through the core's fills (accel/device_fill.h), on the runtime double: the
// core checks the call before the backend sees it, so a refused fill
// consumes nothing of its generator, and a fill writes the host fill's bits.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "accel/device_fill.h"
#include "accel/random_fill.h"
#include "double_support.h"

namespace accel::cuda::testing {
namespace {

constexpr std::size_t kCount = 1000;

class CudaFillGroup : public ::testing::Test {
 protected:
  void SetUp() override {
    stream_ = cuda().getNewStream(0);
    block_ = cuda().getDeviceAllocator(0).allocate(kCount * sizeof(float));
    data_ = static_cast<float*>(block_.get());
    generator_ = cuda().getNewGenerator(0);
    generator_.manualSeed(7);
  }
  void TearDown() override { cuda().synchronizeStream(stream_); }

  std::vector<float> deviceValues() {
    std::vector<float> values(kCount);
    cuda().synchronizeStream(stream_);
    EXPECT_EQ(
        cudaMemcpy(values.data(), data_, kCount * sizeof(float), cudaMemcpyDeviceToHost),
        cudaSuccess);
    return values;
  }

  DataPtr block_;
  float* data_ = nullptr;
  Stream stream_;
  Generator generator_;
};

// The backend declares the fill group.
TEST_F(CudaFillGroup, TheBackendDeclaresTheFillGroup) {
  EXPECT_TRUE(cuda().capabilities().has(HookGroup::Fill));
}

// A kind the core does not know is refused before the backend sees it;
// nothing is drawn.
TEST_F(CudaFillGroup, AnUnknownKindIsRefusedAndDrawsNothing) {
  EXPECT_THROW(cuda().fillRandom(stream_, static_cast<DeviceFill>(99), data_, kCount, 0,
                                 1, generator_),
               InvalidArgument);
  EXPECT_EQ(generator_.offset(), 0u);
}

// Parameters the host fill rejects are refused with the host fill's words
// before the generator moves.
TEST_F(CudaFillGroup, RejectedParametersConsumeNothing) {
  try {
    accel::fillUniform(stream_, data_, kCount, 1.0f, 0.0f, generator_);
    ADD_FAILURE() << "fillUniform(low=1, high=0) was not refused";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("low=1, high=0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(accel::fillNormal(stream_, data_, kCount, 0.0f, -1.0f, generator_),
               InvalidArgument);
  EXPECT_EQ(generator_.offset(), 0u);
}

// Without a generator the device's default one draws, and the device
// writes what the host fill writes from the same position.
TEST_F(CudaFillGroup, WithoutAGeneratorTheDefaultGeneratorDraws) {
  const Generator& defaults = cuda().getDefaultGenerator(0);
  const std::uint64_t seed = defaults.currentSeed();
  const std::uint64_t before = defaults.offset();
  accel::fillUniform(stream_, data_, kCount);
  EXPECT_EQ(defaults.offset(), before + fillOutputs(FillKind::UniformFloat, kCount));
  std::vector<float> host(kCount);
  accel::fillUniform(std::span(host), PhiloxPosition{seed, before});
  EXPECT_EQ(deviceValues(), host);
}

// A ranged uniform fill and a Bernoulli fill take their kernel parameters
// from the same arithmetic as the host fill (accel/adapter/fill_jobs.h).
TEST_F(CudaFillGroup, RangedAndBernoulliFillsWriteTheHostFillsBits) {
  accel::fillUniform(stream_, data_, kCount, -2.0f, 5.0f, generator_);
  std::vector<float> host(kCount);
  accel::fillUniform(std::span(host), -2.0f, 5.0f, PhiloxPosition{7, 0});
  EXPECT_EQ(deviceValues(), host);
  const std::uint64_t at = generator_.offset();
  accel::fillBernoulli(stream_, data_, kCount, 0.25, generator_);
  accel::fillBernoulli(std::span(host), 0.25, PhiloxPosition{7, at});
  EXPECT_EQ(deviceValues(), host);
}

}  // namespace
}  // namespace accel::cuda::testing
