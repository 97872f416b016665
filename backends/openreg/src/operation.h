// Operation: one unit of work on a stream (a copy, a kernel, a fill, an event
// record or wait), as the stream's worker runs it and as a graph stores it.
//
// An operation is a re-runnable closure plus the device blocks it may touch.
// Holding the blocks' references keeps their memory from being reused until
// the operation has run (or, for a captured one, until its graph is reset);
// the worker opens exactly those blocks for host access while the body runs.
//
// Thread-safety: a value type; the worker owns it while running it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "device_memory.h"

namespace accel::openreg::detail {

struct Operation {
  // For messages: "kernel 'scale'", "copy", "event record".
  std::string name;
  // Opened for host access while `body` runs.
  std::vector<AllocationRef> buffers;
  // Runs on the worker; may run again on every replay of a graph. May be
  // empty (an event record does its work in `then`).
  std::function<void()> body;
  // Runs on the worker once, after the stream counts the operation complete:
  // an event record completes its event here, so a host that saw the event
  // complete also sees the stream idle when nothing came after it, as on
  // CUDA. Graphs never store one (event records are refused during capture).
  std::function<void()> then;
  // Device work (copies, kernels) takes an execution unit and is dropped
  // when the device is lost; markers (event records and waits) do neither,
  // so that nobody waiting on them hangs.
  bool is_marker = false;
};

}  // namespace accel::openreg::detail
