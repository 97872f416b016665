// The HTML page of `accel memviz`: the template, style sheet and script in
// tools/memviz/ (embedded at build time) around a model from memviz_model.h.
// One self-contained file: no network, works from file://.
//
// Thread-safety: pure function.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace accel::tool {

// The page for `model`. Snapshot strings cannot end or comment out the
// script element that holds the model: '<', '>', '&', U+2028 and U+2029 are
// written as JSON \u escapes, so no "</script", "<!--" or "<script" reaches
// the HTML parser, and invalid UTF-8 becomes U+FFFD.
[[nodiscard]] std::string renderMemvizPage(const nlohmann::json& model);

}  // namespace accel::tool
