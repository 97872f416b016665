// TraceClock: cheap timestamps for the allocation history ring.
//
// Recording history stamps every allocation and free; on a virtual machine a
// steady_clock read costs as much as the whole cached allocate+free pair. On
// x86-64 with an invariant time-stamp counter (CPUID 0x80000007 EDX bit 8:
// constant rate, running in every power state, the same on every core) the
// ring keeps raw counter ticks, and a snapshot converts them to steady-clock
// nanoseconds with the rate measured between the clock's creation and the
// snapshot, so the longer history runs the more exact the scale. Elsewhere
// the ticks are steady-clock nanoseconds and the conversion is the identity.
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
#else
    return false;
#endif
  }

  const bool use_counter_;
  Scale base_;
};

}  // namespace accel::memory::detail
