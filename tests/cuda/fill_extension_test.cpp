// The device fill behind the plugin's extension interface (src/extension.h,
// fill: the shape of the plugin API's device fill), on the runtime double:
// what crosses the boundary is a status and a message, never an exception,
// and a refused fill consumes nothing of its generator.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "accel/cuda/fill.h"
#include "accel/plugin_status.h"
#include "accel/random_fill.h"
#include "double_support.h"
#include "extension.h"

namespace accel::cuda::testing {
namespace {

constexpr std::size_t kCount = 1000;

accel_stream pluginStream(Stream stream) {
  accel_stream s{};
  s.id = stream.id;
  s.device = stream.device.index();
  return s;
}

class CudaFillExtension : public ::testing::Test {
 protected:
  void SetUp() override {
    stream_ = cuda().getNewStream(0);
    block_ = cuda().getDeviceAllocator(0).allocate(kCount * sizeof(float));
    data_ = static_cast<float*>(block_.get());
    generator_ = cuda().getNewGenerator(0);
    generator_.manualSeed(7);
  }
  void TearDown() override { cuda().synchronizeStream(stream_); }

  DataPtr block_;
  float* data_ = nullptr;
  Stream stream_;
  Generator generator_;
};

// A kind the plugin does not know is a status naming it; nothing is drawn.
TEST_F(CudaFillExtension, AnUnknownKindIsAnInvalidArgumentStatus) {
  const extension::Status status =
      extension::fill("fillSomething", pluginStream(stream_), 99, data_, kCount, 0, 1,
                      pluginGeneratorHandle(generator_));
  EXPECT_EQ(status.code, ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(status.message.find("fillSomething: the cuda backend cannot fill kind 99"),
            std::string::npos)
      << status.message;
  EXPECT_EQ(generator_.offset(), 0u);
}

// Parameters the host fill rejects are refused with the host fill's words,
// through the public API as an InvalidArgument, before the generator moves.
TEST_F(CudaFillExtension, RejectedParametersConsumeNothing) {
  try {
    cuda::fillUniform(stream_, data_, kCount, 1.0f, 0.0f, generator_);
    ADD_FAILURE() << "fillUniform(low=1, high=0) was not refused";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("fillUniform(low=1, high=0)"), std::string::npos)
        << e.what();
  }
  const extension::Status status =
      extension::fill("fillNormal", pluginStream(stream_), ACCEL_FILL_NORMAL_FLOAT, data_,
                      kCount, 0, -1, pluginGeneratorHandle(generator_));
  EXPECT_EQ(status.code, ACCEL_ERROR_INVALID_ARGUMENT) << status.message;
  EXPECT_EQ(generator_.offset(), 0u);
}

// Without a generator the plugin draws from the device's default one, as
// the plugin API's fill does, and writes what the host fill writes.
TEST_F(CudaFillExtension, WithoutAGeneratorTheDefaultGeneratorDraws) {
  const Generator& defaults = cuda().getDefaultGenerator(0);
  const std::uint64_t seed = defaults.currentSeed();
  const std::uint64_t before = defaults.offset();
  const extension::Status status =
      extension::fill("fillUniform", pluginStream(stream_), ACCEL_FILL_UNIFORM_FLOAT,
                      data_, kCount, 0, 1, nullptr);
  ASSERT_TRUE(status.ok()) << status.message;
  EXPECT_EQ(defaults.offset(), before + fillOutputs(FillKind::UniformFloat, kCount));
  std::vector<float> device(kCount), host(kCount);
  cuda().synchronizeStream(stream_);
  ASSERT_EQ(
      cudaMemcpy(device.data(), data_, kCount * sizeof(float), cudaMemcpyDeviceToHost),
      cudaSuccess);
  accel::fillUniform(std::span(host), PhiloxPosition{seed, before});
  EXPECT_EQ(device, host);
}

}  // namespace
}  // namespace accel::cuda::testing
