// Helpers shared by the double's runtime files.
#pragma once

#include <initializer_list>
#include <vector>

#include "double_state.h"

namespace cuda_double {

// The greatest (most urgent) stream priority the double reports, like an H100.
inline constexpr int kGreatestPriority = -5;

// Keeps `status` as the thread's last error (cudaGetLastError) and returns it.
cudaError_t record(cudaError_t status);
// Lock held. The calling thread's context, made as the runtime does.
CUctx_st* runtimeContext(State& s);
// Lock held. The double's stream behind a runtime handle (null: the legacy
// stream of the current device).
cudaError_t resolveStream(State& s, cudaStream_t stream, CUstream_st** out);
// Lock held. The ranges that lie in device or pinned memory the double knows.
std::vector<Range> deviceRanges(State& s, std::initializer_list<Range> ranges);

}  // namespace cuda_double
