// `accel check` and `accel info` with libaccel_cuda.so on a machine without a
// usable CUDA device: the backend is reported unavailable with the reason,
// nothing fails, and check exits with the status docs/accel-tool.md gives for
// "only the cases that need no device could run" (3), never "passed". Skips
// where a device is usable.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "gpu_support.h"

namespace {

// `accel <args>` with stderr merged and no plugin environment; {status, output}.
std::pair<int, std::string> accelTool(const std::string& args) {
  const std::string command =
      "env -u ACCEL_PLUGINS -u ACCEL_PLUGIN_PATH -u ACCEL_AUTOLOAD '" +
      std::string(ACCEL_TOOL_PATH) + "' " + args + " 2>&1";
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, output};
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    output.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

class CudaToolWithoutGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (accel::cuda::registerBackend().isAvailable()) {
      GTEST_SKIP() << "a CUDA device is usable here; see the GPU tests";
    }
  }
};

TEST_F(CudaToolWithoutGpu, CheckSkipsDeviceCasesAsUnavailableAndFailsNothing) {
  const auto [status, output] = accelTool("check --plugin '" ACCEL_CUDA_PLUGIN_PATH "'");
  EXPECT_EQ(status, 3) << output;
  EXPECT_NE(output.find("'cuda' is not available here"), std::string::npos) << output;
  EXPECT_NE(output.find(" 0 failed"), std::string::npos) << output;
  EXPECT_EQ(output.find("FAIL "), std::string::npos) << output;
  EXPECT_EQ(output.find("accel check: passed"), std::string::npos) << output;
  EXPECT_NE(output.find("NOT CHECKED on a device: 'cuda'"), std::string::npos) << output;
  EXPECT_NE(output.find("no NVIDIA driver: libcuda.so.1 not found"), std::string::npos)
      << output;
}

TEST_F(CudaToolWithoutGpu, InfoListsTheBackendAsNotAvailable) {
  const auto [status, output] = accelTool("info --plugin '" ACCEL_CUDA_PLUGIN_PATH "'");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("cuda: built, not available, 0 devices"), std::string::npos)
      << output;
  EXPECT_NE(output.find("no NVIDIA driver: libcuda.so.1 not found"), std::string::npos)
      << output;
}

}  // namespace
