#include "accel/memory_stats.h"

#include <array>
#include <string_view>

namespace accel {
namespace {

// PyTorch's names for the pooled figures and the plain counters; the one
// place these strings are written.
template <typename Field>
struct NamedField {
  std::string_view name;
  Field MemoryStats::*member;
};
constexpr std::array<NamedField<PooledStat>, 9> kPooled{{
    {"allocation", &MemoryStats::allocations},
    {"segment", &MemoryStats::segments},
    {"active", &MemoryStats::active},
    {"inactive_split", &MemoryStats::inactive_split},
    {"allocated_bytes", &MemoryStats::allocated_bytes},
    {"reserved_bytes", &MemoryStats::reserved_bytes},
    {"active_bytes", &MemoryStats::active_bytes},
    {"inactive_split_bytes", &MemoryStats::inactive_split_bytes},
    {"requested_bytes", &MemoryStats::requested_bytes},
}};

constexpr std::array<NamedField<Stat>, 2> kPlainStats{{
    {"oversize_allocations", &MemoryStats::oversize_allocations},
    {"oversize_segments", &MemoryStats::oversize_segments},
}};

constexpr std::array<NamedField<std::int64_t>, 6> kCounters{{
    {"num_alloc_retries", &MemoryStats::num_alloc_retries},
    {"num_ooms", &MemoryStats::num_ooms},
    {"num_sync_all_streams", &MemoryStats::num_sync_all_streams},
    {"num_device_alloc", &MemoryStats::num_device_alloc},
    {"num_device_free", &MemoryStats::num_device_free},
    {"max_split_size", &MemoryStats::max_split_size},
}};

void addStat(std::map<std::string, std::int64_t>& out, std::string prefix,
             const Stat& stat) {
  out[prefix + ".current"] = stat.current;
  out[prefix + ".peak"] = stat.peak;
  out[prefix + ".allocated"] = stat.allocated;
  out[prefix + ".freed"] = stat.freed;
}

}  // namespace

std::map<std::string, std::int64_t> MemoryStats::flatten() const {
  std::map<std::string, std::int64_t> out;
  for (const auto& entry : kPooled) {
    const PooledStat& stat = this->*entry.member;
    const std::string name(entry.name);
    addStat(out, name + ".all", stat);
    addStat(out, name + ".small_pool", stat.small_pool);
    addStat(out, name + ".large_pool", stat.large_pool);
  }
  for (const auto& entry : kPlainStats) {
    addStat(out, std::string(entry.name), this->*entry.member);
  }
  for (const auto& entry : kCounters) {
    out[std::string(entry.name)] = this->*entry.member;
  }
  return out;
}

const std::vector<std::string>& MemoryStats::flatNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    const auto add = [&out](const std::string& prefix) {
      for (const char* field : {".current", ".peak", ".allocated", ".freed"})
        out.push_back(prefix + field);
    };
    for (const auto& entry : kPooled) {
      const std::string name(entry.name);
      add(name + ".all");
      add(name + ".small_pool");
      add(name + ".large_pool");
    }
    for (const auto& entry : kPlainStats) add(std::string(entry.name));
    for (const auto& entry : kCounters) out.emplace_back(entry.name);
    return out;
  }();
  return names;
}

void MemoryStats::flatValues(std::vector<std::int64_t>& out) const {
  out.clear();
  const auto add = [&out](const Stat& stat) {
    out.insert(out.end(), {stat.current, stat.peak, stat.allocated, stat.freed});
  };
  for (const auto& entry : kPooled) {
    const PooledStat& stat = this->*entry.member;
    add(stat);
    add(stat.small_pool);
    add(stat.large_pool);
  }
  for (const auto& entry : kPlainStats) add(this->*entry.member);
  for (const auto& entry : kCounters) out.push_back(this->*entry.member);
}

void MemoryStats::resetPeaks() noexcept {
  for (const auto& entry : kPooled) (this->*entry.member).resetPeak();
  for (const auto& entry : kPlainStats) (this->*entry.member).resetPeak();
}

void MemoryStats::resetAccumulated() noexcept {
  for (const auto& entry : kPooled) (this->*entry.member).resetAccumulated();
  for (const auto& entry : kPlainStats) (this->*entry.member).resetAccumulated();
  // Events counted since the reset; max_split_size is a setting, not a count.
  for (std::int64_t MemoryStats::*counter :
       {&MemoryStats::num_alloc_retries, &MemoryStats::num_ooms,
        &MemoryStats::num_sync_all_streams, &MemoryStats::num_device_alloc,
        &MemoryStats::num_device_free})
    this->*counter = 0;
}

}  // namespace accel
