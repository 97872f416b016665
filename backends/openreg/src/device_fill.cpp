// openreg's fill group: the core's reference fill (fill_host) run as a
// kernel on the stream's worker, so that a device fill writes, bit for bit,
// what the host fill writes from the same position. The core has checked
// the stream, the kind, a and b, the range and the generator.
#include <memory>
#include <string>
#include <utility>

#include "accel/adapter/fill_jobs.h"
#include "device_table.h"
#include "openreg_backend.h"

namespace accel::openreg::detail {
void OpenRegBackend::fill(Stream stream, std::int32_t kind, void* data,
                          std::uint64_t count, double a, double b,
                          accel_generator* generator) {
  const char* api = adapter::fillApiName(kind);
  checkNotForkedChild(HookId::fillRandom);
  StreamQueue& queue = devices_.queue(stream, api);
  DeviceState& device = devices_.device(stream.device, api);
  const adapter::Core& core = this->core();
  Operation operation;
  operation.name = api;
  // The queued fill keeps its block from reuse until it ran.
  operation.buffers.push_back(devices_.resolveOn(
      device, data, static_cast<std::size_t>(count) * adapter::fillElementBytes(kind),
      detail::concat(api, "()")));
  device.faults.beginOperation(api);
  const std::uint64_t outputs = core.fillOutputs(kind, count);
  // Kernels run on one worker thread each: the core's fill runs on the
  // calling thread, starting none of its own.
  if (std::shared_ptr<Capture> captured = queue.capturing() ? queue.capture() : nullptr) {
    // Captured: the fill claims nothing now; it reads its position from a
    // slot each replay writes first (graphs.h), so every replay draws new
    // numbers.
    std::shared_ptr<const adapter::PhiloxPosition> slot =
        captured->draws->claim(core, generator, outputs);
    operation.body = [core, kind, data, count, a, b, slot] {
      core.fillHost(kind, data, count, a, b, *slot);
    };
    try {
      queue.record(captured, std::move(operation));
    } catch (...) {
      captured->draws->unclaim(slot);  // not in the graph: no draw at replays
      throw;
    }
    return;
  }
  const adapter::PhiloxPosition from = core.reservePhilox(generator, outputs);
  operation.body = [core, kind, data, count, a, b, from] {
    core.fillHost(kind, data, count, a, b, from);
  };
  queue.enqueue(std::move(operation));
}

}  // namespace accel::openreg::detail
