// DeviceProperties: what a backend reports about one device, as typed fields.
//
// Fields a backend cannot know stay at their zero/empty defaults; the header
// of each field says what zero means. Returned by
// AcceleratorHooks::getDeviceProperties.
#pragma once

#include <cstdint>
#include <string>

namespace accel {

struct DeviceProperties {
  std::string name;                      // "openreg simulated device", "NVIDIA H100"
  std::uint64_t total_memory_bytes = 0;  // device memory capacity; 0 if unknown
  int multiprocessor_count = 0;          // compute units; 0 if unknown
  int compute_capability_major = 0;      // vendor's architecture version; 0 if none
  int compute_capability_minor = 0;
  int warp_size = 0;  // SIMD width of a scheduling unit; 0 if none
  int max_threads_per_multiprocessor = 0;
  std::uint64_t l2_cache_bytes = 0;
  bool is_integrated = false;  // shares memory with the host
  std::string uuid;            // stable device identity; empty if none
};

}  // namespace accel
