// The public functions of accel/trace.h, over the process's TraceSession.
#include "accel/trace.h"

#include "layers/trace/trace_layer.h"
#include "layers/trace/trace_session.h"

namespace accel::trace {

void start(const TraceOptions& options) {
  (void)detail::TraceLayer::instance();  // attaches the hooks' side to the session
  detail::TraceSession::instance().start(options);
}

void stop() noexcept { detail::TraceSession::instance().stop(); }

bool isTracing() noexcept { return detail::TraceSession::instance().recording(); }

TraceWriteResult write(const std::string& path) {
  return detail::TraceSession::instance().write(path);
}

std::string toJson() { return detail::TraceSession::instance().toJson(); }

}  // namespace accel::trace
