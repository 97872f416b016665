// CapturedDraws: the random draws of one graph's captured fills, so that
// every replay draws new numbers, as running the fills again would. Part of
// the plugin adapter (accel/plugin_adapter.h): header-only, C++17.
//
// A fill enqueued outside a capture reserves its outputs from the generator
// at once (Core::reservePhilox) and hands its kernel the position by value.
// A captured kernel's arguments are frozen in the graph, so a captured fill
// claims a slot instead and its kernel reads the position from the slot when
// it runs. Before each replay the backend asks advance() for each slot's next
// position (reserved in capture order, as the fills would reserve them) and
// writes them in stream order, ahead of the graph's work:
//
//   // capturing a fill of `outputs` outputs:
//   std::shared_ptr<const PhiloxPosition> slot =
//       graph.draws.claim(core(), generator, outputs);
//   recordFill(..., slot);                 // the kernel reads *slot when it runs
//   // replaying:
//   for (auto& [slot, from] : graph.draws.advance(core()))
//     enqueueWrite(stream, slot, from);    // the device's way, in stream order
//
// Each claim keeps its generator (Core::retain) for as long as the graph
// keeps this object. A backend whose slots live in device memory keeps that
// memory beside each slot; openreg's live in host memory.
//
// Thread-safety: every member is thread-safe. Errors: claim and advance throw
// what the core's services throw (InvalidArgument for a generator whose
// draw would pass 2^64 - 1).
#ifndef ACCEL_ADAPTER_CAPTURED_DRAWS_H
#define ACCEL_ADAPTER_CAPTURED_DRAWS_H

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "accel/adapter/core.h"
#include "accel/adapter/failure.h"

#pragma GCC visibility push(hidden)

namespace accel::adapter {

class CapturedDraws {
 public:
  // Claims a slot for a captured fill of `outputs` outputs of `generator`
  // (kept alive with the slot). The slot is unset until the first advance.
  [[nodiscard]] std::shared_ptr<const PhiloxPosition> claim(const Core& core,
                                                            accel_generator* generator,
                                                            std::uint64_t outputs) {
    ACCEL_ADAPTER_CHECK(generator != nullptr, InvalidArgument,
                        "a captured fill needs a generator (pass one, or the device's "
                        "default generator)");
    Draw draw{std::make_shared<PhiloxPosition>(), core.retain(generator), outputs};
    std::shared_ptr<const PhiloxPosition> slot = draw.slot;
    std::lock_guard<std::mutex> lock(mutex_);
    draws_.push_back(std::move(draw));
    return slot;
  }

  // Gives back a claim whose fill was not recorded after all (the capture
  // ended meanwhile), so that replays do not draw for it. Never throws.
  void unclaim(const std::shared_ptr<const PhiloxPosition>& slot) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = draws_.begin(); it != draws_.end(); ++it) {
      if (it->slot == slot) {
        draws_.erase(it);
        return;
      }
    }
  }

  // Each slot with the position its fill draws from at the next replay,
  // reserved now, in capture order. The caller writes them (in stream
  // order). A reservation that fails leaves the earlier ones made (their
  // generators moved), as the fills would have.
  [[nodiscard]] std::vector<std::pair<std::shared_ptr<PhiloxPosition>, PhiloxPosition>>
  advance(const Core& core) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::pair<std::shared_ptr<PhiloxPosition>, PhiloxPosition>> next;
    next.reserve(draws_.size());
    for (Draw& draw : draws_) {
      next.emplace_back(draw.slot,
                        core.reservePhilox(draw.generator.get(), draw.outputs));
    }
    return next;
  }

  [[nodiscard]] bool empty() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return draws_.empty();
  }

 private:
  struct Draw {
    std::shared_ptr<PhiloxPosition> slot;
    GeneratorRef generator;
    std::uint64_t outputs = 0;
  };
  mutable std::mutex mutex_;
  std::vector<Draw> draws_;
};

}  // namespace accel::adapter

#pragma GCC visibility pop

#endif  // ACCEL_ADAPTER_CAPTURED_DRAWS_H
