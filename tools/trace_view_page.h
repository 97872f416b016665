// The `accel trace view` page: tools/traceview/ (HTML, CSS, JavaScript,
// compiled in) with the model (trace_view_model.h) embedded. One
// self-contained file: no network, works from file://.
//
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace accel::tool {

[[nodiscard]] std::string renderTraceViewPage(const nlohmann::json& model);

}  // namespace accel::tool
