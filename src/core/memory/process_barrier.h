// A process-wide memory barrier: makes every running thread of the process
// execute a full barrier, so that a thread which only uses plain stores and
// loads on its fast path (a biased lock's owner, a thread cache's owner) and
// a rare other thread that calls this can order themselves as with Dekker's
// algorithm, the rare side paying for both.
//
// processBarrierSupported() registers the process for
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) the first time it is asked and
// keeps the answer (in an atomic, not a function-local static: a fork while
// another thread registers must not leave the child waiting on a static
// guard; the child registers again). processBarrier() then runs the barrier;
// should the expedited command start failing (a seccomp filter installed
// later), it falls back to MEMBARRIER_CMD_GLOBAL and, on x86-64, to an
// mprotect() that shoots down the TLBs of every processor running the
// process (an interrupt, so a full barrier). Nothing here rests on timing.
//
// Thread-safety: both are safe from any thread and never throw.
#pragma once

namespace accel::detail {

// True when processBarrier() can be used; the first call registers.
[[nodiscard]] bool processBarrierSupported() noexcept;

// Every running thread of the process executes a full memory barrier before
// this returns. Only call it after processBarrierSupported() returned true.
// If no mechanism works any more (not on x86-64, both membarrier commands
// refused), it aborts with a message: a caller relying on it could not be
// made correct otherwise.
void processBarrier() noexcept;

}  // namespace accel::detail
