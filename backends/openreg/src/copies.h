// Copies: the one path by which openreg copies memory on a stream, shared by
// its extension interface (copy, copyAsync) and the copies hook group
// (openreg_backend.cpp), so that both check and order copies alike.
//
// Given the device table (which device a pointer is on, the live allocation
// it lies in, the queue that runs the copy), nothing else.
//
// Thread-safety: thread-safe. Only once the table is open (the backend's
// init): the hooks run after the core's init, the extension checks first.
#pragma once

#include <cstddef>
#include <string_view>

#include "types.h"

namespace accel::openreg::detail {

class DeviceTable;

class Copies {
 public:
  // `devices` must outlive this object (the backend owns both).
  explicit Copies(const DeviceTable& devices) noexcept : devices_(devices) {}

  // Enqueues the copy of `bytes` from `src` to `dst` on `stream`, whose
  // device must be one the copy involves; the direction follows from the
  // pointers. With `wait`, returns once the copy ran (and refuses a
  // capturing stream, which would record the copy instead of running it);
  // otherwise at once. `what` names the caller in errors. Throws
  // InvalidArgument for pointers that are not what the copy needs,
  // DeviceError for a lost device, work that failed or a fork child.
  void enqueue(void* dst, const void* src, std::size_t bytes, Stream stream,
               std::string_view what, bool wait);

  // A synchronous copy on the current stream (the core's) of the device that
  // holds src (else dst). Throws as enqueue.
  void now(void* dst, const void* src, std::size_t bytes);

 private:
  const DeviceTable& devices_;
};

}  // namespace accel::openreg::detail
