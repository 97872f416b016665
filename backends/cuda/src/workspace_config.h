// The cuBLAS workspace size: CUBLAS_WORKSPACE_CONFIG, or a documented default.
//
// CUBLAS_WORKSPACE_CONFIG is cuBLAS's own setting, ":SIZE:COUNT" repeated
// (SIZE in KiB), e.g. ":4096:8". The backend gives each (cuBLAS handle,
// stream) pair one workspace of the sum of SIZE * COUNT, set with
// cublasSetWorkspace. Without the variable: ":4096:8" (32 MiB) on compute
// capability 9.0 and later (what NVIDIA recommends for Hopper), else
// ":4096:2:16:8" (8 MiB + 128 KiB, cuBLAS's own default before Hopper).
//
// Thread-safety: pure functions; the environment is read on every call.
#pragma once

#include <cstddef>
#include <string_view>

namespace accel::cuda::detail {

inline constexpr std::string_view kDefaultWorkspaceConfig = ":4096:2:16:8";
inline constexpr std::string_view kHopperWorkspaceConfig = ":4096:8";

// Bytes described by a CUBLAS_WORKSPACE_CONFIG value. Throws
// adapter::InvalidArgument (the plugin compiles this file too) naming the
// variable, the text and the expected form for anything else
// (empty, missing ':', non-numbers, zero counts, overflow).
std::size_t parseCublasWorkspaceConfig(std::string_view text);

// The workspace bytes for a device of compute capability `major * 10 +
// minor` (0 = unknown: the pre-Hopper default): the variable if set, else
// the default above. Throws as parseCublasWorkspaceConfig.
std::size_t cublasWorkspaceBytes(int computeCapability);

}  // namespace accel::cuda::detail
