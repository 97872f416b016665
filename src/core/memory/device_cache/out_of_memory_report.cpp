// OutOfMemoryReport: the facts and the message of an out-of-memory error
// (out_of_memory_report.h).
#include "memory/device_cache/out_of_memory_report.h"

#include <algorithm>
#include <cstdio>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/memory/size_rules.h"

namespace accel::memory::detail {
namespace {

std::string formatBytes(std::size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[48];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%zu B", bytes);
  } else {
    std::snprintf(text, sizeof text, "%.2f %s", value, kUnits[unit]);
  }
  return text;
}

// What the capacity in an out-of-memory message is when the allocator caps
// it: the cap, the fraction it was set as, and that a cap of 0 allows nothing.
std::string capText(const ReserveCap& cap) {
  if (!cap.capped) return {};
  std::string text = " (the allocator's limit";
  if (cap.fraction) {
    text += accel::detail::concat(": ", hookInfo(HookId::setMemoryFraction).name, "(",
                                  *cap.fraction, ") of ", formatBytes(cap.fraction_of));
  }
  if (cap.bytes == 0) text += "; it allows no allocation";
  return text + ")";
}

OutOfMemoryEvent factsOf(const OutOfMemoryScene& scene) {
  const ReserveCap& cap = scene.cap;
  OutOfMemoryEvent facts;
  facts.device = scene.device.index();
  facts.requested_bytes = scene.requested;
  facts.device_total_bytes = cap.capped ? cap.bytes : scene.memory.total_bytes;
  facts.device_free_bytes = scene.memory.free_bytes;
  if (cap.capped) {
    const std::size_t under_limit =
        cap.bytes - std::min<std::size_t>(cap.bytes, scene.reserved_bytes);
    facts.device_free_bytes = std::min(facts.device_free_bytes, under_limit);
    if (scene.memory.total_bytes == 0) facts.device_free_bytes = under_limit;
  }
  facts.allocated_bytes = static_cast<std::size_t>(scene.allocated_bytes);
  facts.reserved_bytes = static_cast<std::size_t>(scene.reserved_bytes);
  facts.reserved_unallocated_bytes = facts.reserved_bytes - facts.allocated_bytes;
  std::size_t free_total = 0;
  if (scene.segments != nullptr) {
    for (const auto& [base, segment] : *scene.segments) {
      if (segment->pool->owner != nullptr) facts.private_pool_bytes += segment->size;
      for (const Block* block = segment->head; block != nullptr; block = block->next) {
        if (block->allocated) continue;
        free_total += block->size;
        facts.largest_free_block = std::max(facts.largest_free_block, block->size);
      }
    }
  }
  facts.fragmentation = free_total == 0
                            ? 0.0
                            : 1.0 - static_cast<double>(facts.largest_free_block) /
                                        static_cast<double>(free_total);
  facts.stream = Stream(scene.device, scene.stream);
  return facts;
}

std::string messageOf(const OutOfMemoryScene& scene, const OutOfMemoryEvent& facts) {
  const ReserveCap& cap = scene.cap;
  std::string message = accel::detail::concat(
      // torch's first sentences ("... out of memory. Tried to allocate 2.00 MiB"),
      // which log scrapers and users' tooling match.
      scene.device, " is out of memory. Tried to allocate ",
      formatBytes(facts.requested_bytes), " (", facts.requested_bytes,
      " bytes) on stream ", facts.stream.id, ". Capacity: ",
      cap.capped || facts.device_total_bytes != 0 ? formatBytes(facts.device_total_bytes)
                                                  : std::string("unknown"),
      capText(cap), "; free: ", formatBytes(facts.device_free_bytes),
      "; allocated: ", formatBytes(facts.allocated_bytes),
      "; reserved but unallocated: ", formatBytes(facts.reserved_unallocated_bytes),
      "; in private pools: ", formatBytes(facts.private_pool_bytes),
      "; fragmentation: ", static_cast<int>(facts.fragmentation * 100.0 + 0.5),
      "% (largest free cached block ", formatBytes(facts.largest_free_block), ").");
  if (facts.requested_bytes > kMaxRequest) {
    message += accel::detail::concat(
        " No device holds that much: requests above ", kMaxRequest,
        " bytes are refused (is the size a negative number converted to unsigned?).");
    return message;
  }
  // Suggest a setting only where it would change something.
  const bool fragmented = facts.reserved_unallocated_bytes >= facts.requested_bytes;
  const bool below_device = cap.fraction && *cap.fraction < 1.0;
  if (cap.capped && below_device &&
      facts.reserved_bytes + facts.requested_bytes > cap.bytes && !fragmented) {
    // The fraction refused it, not the device: the fraction is what to change.
    message += accel::detail::concat(
        " The limit is this process's memory fraction, not the device: raise it with ",
        hookInfo(HookId::setMemoryFraction).name,
        "(), or free tensors you no longer need.");
  } else if (fragmented && !scene.expandable_segments && scene.maps_pages) {
    message +=
        " Much memory is reserved but unallocated; to avoid fragmentation set "
        "ACCEL_ALLOC_CONF=expandable_segments:true.";
  } else if (fragmented && scene.max_split_size == 0) {
    message +=
        " Much memory is reserved but unallocated; to limit fragmentation set "
        "ACCEL_ALLOC_CONF=max_split_size_mb:<MiB>.";
  } else {
    message += " Free tensors you no longer need, or use smaller batches.";
  }
  return message;
}

}  // namespace

OutOfMemoryReport::OutOfMemoryReport(const OutOfMemoryScene& scene)
    : facts_(factsOf(scene)), message_(messageOf(scene, facts_)) {}

void OutOfMemoryReport::raise(const OutOfMemorySink& sink) const {
  sink.notify(facts_);
  throw OutOfMemory(message_);
}

}  // namespace accel::memory::detail
