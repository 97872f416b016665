// JSON text that may sit inside an HTML <script type="application/json">
// element: the data of the memviz and trace view pages.
//
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace accel::tool {

// `value` as JSON in which no "</script", "<!--" or line separator can
// appear (the same value when parsed).
[[nodiscard]] std::string scriptSafeJson(const nlohmann::json& value);

}  // namespace accel::tool
