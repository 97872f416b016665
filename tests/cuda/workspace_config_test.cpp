// CUBLAS_WORKSPACE_CONFIG parsing and the documented defaults (docs/cuda.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "accel/adapter/failure.h"
#include "workspace_config.h"

namespace {

using accel::cuda::detail::cublasWorkspaceBytes;
using accel::cuda::detail::parseCublasWorkspaceConfig;

TEST(CublasWorkspaceConfig, SumsSizeTimesCountInKiB) {
  EXPECT_EQ(parseCublasWorkspaceConfig(":4096:8"), 4096u * 1024 * 8);
  EXPECT_EQ(parseCublasWorkspaceConfig(":4096:2:16:8"),
            4096u * 1024 * 2 + 16u * 1024 * 8);
  EXPECT_EQ(parseCublasWorkspaceConfig(":1:1"), 1024u);
}

TEST(CublasWorkspaceConfig, MalformedTextIsRejectedNamingTheVariable) {
  for (const char* bad : {"", "4096:8", ":4096", ":4096:", ":a:8", ":4096:0", ":0:2",
                          ":4096:8:", ":-1:2", ":99999999999999999999:1"}) {
    try {
      (void)parseCublasWorkspaceConfig(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const accel::adapter::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("CUBLAS_WORKSPACE_CONFIG"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find(":4096:8"), std::string::npos) << e.what();
    }
  }
}

TEST(CublasWorkspaceConfig, DefaultsDependOnTheArchitectureAndTheVariableWins) {
  ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
  EXPECT_EQ(cublasWorkspaceBytes(80), 4096u * 1024 * 2 + 16u * 1024 * 8);
  EXPECT_EQ(cublasWorkspaceBytes(0), 4096u * 1024 * 2 + 16u * 1024 * 8);
  EXPECT_EQ(cublasWorkspaceBytes(90), 32u * 1024 * 1024);
  ::setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8", 1);
  EXPECT_EQ(cublasWorkspaceBytes(90), 16u * 1024 * 8);
  ::setenv("CUBLAS_WORKSPACE_CONFIG", "nonsense", 1);
  EXPECT_THROW((void)cublasWorkspaceBytes(90), accel::adapter::InvalidArgument);
  ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
}

}  // namespace
