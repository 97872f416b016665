// TraceClock: cheap timestamps for the allocation history ring.
//
// Recording history stamps every allocation and free; on a virtual machine a
// steady_clock read costs as much as the whole cached allocate+free pair. On
// x86-64 with an invariant time-stamp counter (CPUID 0x80000007 EDX bit 8:
// constant rate, running in every power state, the same on every core) the
// ring keeps raw counter ticks, and a snapshot converts them to steady-clock
// nanoseconds with the rate measured between the clock's creation and the
// snapshot, so the longer history runs the more exact the scale. On AArch64
// the ticks are the generic timer's virtual count (CNTVCT_EL0: a fixed rate,
// one count for every core, readable at EL0 under Linux), converted the same
// way, which costs one register read where steady_clock adds the vDSO's
// call and arithmetic. Elsewhere the ticks are steady-clock nanoseconds and
// the conversion is the identity.
//
// Either counter is the cheapest clock its platform has: an x86-64
// counter read costs 7.2 ns on the Xeon VM and 9.7 ns on the Zen 3 VM of
// docs/performance.md (microcoded), steady_clock 15.9 and 24.6 ns; the
// only cheaper source, the coarse clock, ticks every few milliseconds.
//
// Thread-safety: immutable after construction; every member is safe to call
// from any thread.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace accel::memory::detail {

class TraceClock {
 public:
  // Maps ticks of one clock to steady-clock nanoseconds.
  struct Scale {
    std::int64_t base_ticks = 0;
    std::int64_t base_ns = 0;
    double ns_per_tick = 1.0;
    [[nodiscard]] std::int64_t toNs(std::int64_t ticks) const noexcept {
      return base_ns + static_cast<std::int64_t>(static_cast<double>(ticks - base_ticks) *
                                                 ns_per_tick);
    }
  };

  TraceClock() noexcept : use_counter_(hasInvariantCounter()), base_(pairedReading()) {}

  // A timestamp for the ring (ticks; nanoseconds without the counter).
  [[nodiscard]] std::int64_t now() const noexcept {
#if defined(__x86_64__)
    if (use_counter_) return static_cast<std::int64_t>(__rdtsc());
#elif defined(__aarch64__)
    if (use_counter_) {
      std::uint64_t ticks = 0;
      asm volatile("mrs %0, cntvct_el0" : "=r"(ticks));
      return static_cast<std::int64_t>(ticks);
    }
#endif
    return steadyNs();
  }

  // The conversion for timestamps taken so far, measured now.
  [[nodiscard]] Scale scale() const noexcept {
    if (!use_counter_) return Scale{};
    Scale scale = base_;
    const Scale reading = pairedReading();
    const std::int64_t elapsed_ns = reading.base_ns - base_.base_ns;
    const std::int64_t elapsed_ticks = reading.base_ticks - base_.base_ticks;
    scale.ns_per_tick = elapsed_ticks > 0 ? static_cast<double>(elapsed_ns) /
                                                static_cast<double>(elapsed_ticks)
                                          : 0.0;
    return scale;
  }

 private:
  // The two clocks read at one moment: a steady_clock read between two
  // counter reads, the narrowest bracket of three tries, so that the thread
  // being descheduled between two reads does not skew the scale (on a busy
  // machine that can be milliseconds).
  [[nodiscard]] Scale pairedReading() const noexcept {
    Scale best;
    std::int64_t best_width = -1;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const std::int64_t before = now();
      const std::int64_t ns = steadyNs();
      const std::int64_t width = now() - before;
      if (best_width < 0 || width < best_width) {
        best_width = width;
        best.base_ticks = before + width / 2;
        best.base_ns = ns;
      }
    }
    return best;
  }

  static std::int64_t steadyNs() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static bool hasInvariantCounter() noexcept {
#if defined(__x86_64__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
    return (edx & (1u << 8)) != 0;
#elif defined(__aarch64__)
    return true;  // the generic timer is architectural: fixed rate, system-wide
#else
    return false;
#endif
  }

  const bool use_counter_;
  Scale base_;
};

}  // namespace accel::memory::detail
