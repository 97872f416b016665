// The public functions of accel/trace.h, over the process's TraceRecorder.
#include "accel/trace.h"

#include "layers/trace/trace_layer.h"
#include "layers/trace/trace_recorder.h"

namespace accel::trace {

void start(const TraceOptions& options) {
  (void)detail::TraceLayer::instance();  // attaches the hooks' side to the recorder
  detail::TraceRecorder::instance().start(options);
}

void stop() noexcept { detail::TraceRecorder::instance().stop(); }

bool isTracing() noexcept { return detail::TraceRecorder::instance().recording(); }

TraceWriteResult write(const std::string& path) {
  return detail::TraceRecorder::instance().write(path);
}

std::string toJson() { return detail::TraceRecorder::instance().toJson(); }

}  // namespace accel::trace
