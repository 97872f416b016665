// Streams of the cuda backend (adapter::Stream: the C plugin ABI's device
// and id): the default stream, pools of streams per
// priority per device, wrapped external streams, and the per-thread current
// stream.
//
// Stream ids (accel::StreamId):
//   0                          the device's default stream (the legacy NULL stream)
//   1 + level * 32 + slot      pool stream `slot` of priority level `level`
//   2^62 | device << 56 | p    the external stream at address p of `device`
//                              (wrapExternalStream)
// A pool's 32 streams are created together on the first getNewStream of that
// (device, priority), non-blocking, and handed out round robin; they are never
// destroyed (like PyTorch's pools, and for the same reason: a stream id may
// still be held anywhere, including in static destructors).
//
// An external stream's id is its address (and device): no table to grow or
// to go stale. CUDA may give a destroyed stream's address to a new stream,
// on any device; wrapping the new one asks CUDA for its device then, and its
// id names it (PyTorch's external stream ids are addresses too).
//
// Priorities: accelhooks says "greater runs first, 0 is the default"; CUDA
// says "lower runs first, 0 is the default". Level p is CUDA priority -p, for
// p in [0, -greatest] of the device's cudaDeviceGetStreamPriorityRange.
//
// Thread-safety: thread-safe; the current stream is per thread and device.
// Lifetime: the registry is never destroyed.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include "accel/adapter/core.h"
#include "accel/stream.h"

namespace accel::cuda::detail {

inline constexpr int kStreamsPerPool = 32;
inline constexpr int kMaxPriorityLevels = 8;
inline constexpr StreamId kExternalStreamTag = StreamId{1} << 62;

// {0, greatest level}: the accelhooks priority range (all CUDA devices report
// the same one), queried once. The query needs a context: the first one is
// asked of a device whose primary context exists, else of the thread's
// current device (whose context it creates).
std::pair<int, int> streamPriorityRange();
// The same range, for a stream about to be made on `device`: a first query
// runs there, so a first getNewStream(i) creates no context but device i's.
std::pair<int, int> streamPriorityRange(DeviceIndex device);

// A pool stream of `device` at `priority` (already checked against the range).
adapter::Stream newStream(DeviceIndex device, int priority);

// The CUDA stream behind `stream`. Throws InvalidArgument for an id that no
// pool or wrapped external stream has, or an external stream used with
// another device than it was wrapped for.
cudaStream_t nativeStream(adapter::Stream stream);

// A Stream naming an existing CUDA stream of `device` (created elsewhere);
// wrapping the same stream twice gives the same id. The caller keeps the
// stream alive while the id is in use. Makes device `device`'s context
// current for cudaStreamGetDevice. Throws InvalidArgument for a null stream
// (use the default stream, id 0), a stream of another device, or a handle
// CUDA does not know.
adapter::Stream wrapExternalStream(cudaStream_t stream, DeviceIndex device);

// Whether `stream` belongs to a capture (cudaStreamGetCaptureInfo: active or
// invalidated), setting `*capture_id` to CUDA's id of it when it does. The
// default stream never does. Throws what nativeStream and checkCuda throw.
bool isCapturing(adapter::Stream stream, unsigned long long* capture_id);

// "stream <id> on cuda:<device>", for messages. Throws std::bad_alloc.
std::string describe(adapter::Stream stream);

// This thread's current stream of `device` (the default stream until set).
// The backend keeps it (CudaBackend::keepsCurrent): a wrapped external
// stream must be usable as the current one. Never throw.
adapter::Stream currentStream(DeviceIndex device) noexcept;
void setCurrentStream(adapter::Stream stream) noexcept;

}  // namespace accel::cuda::detail
