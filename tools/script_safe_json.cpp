#include "script_safe_json.h"

namespace accel::tool {

// JSON for a <script type="application/json"> element. Inside a script
// element the HTML parser looks for "</script" and, after "<!--", for
// "<script" too; none can form without '<'. '<', '>' and '&' only occur
// inside JSON strings, where the \u form is the same value. U+2028 and U+2029
// (also only inside strings) are escaped too: they end a line in JavaScript
// source, so the data stays safe if a reader ever pastes it into a script.
std::string scriptSafeJson(const nlohmann::json& value) {
  const std::string text =
      value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      case '\xe2':
        // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
        if (i + 2 < text.size() && text[i + 1] == '\x80' &&
            (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
          out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
          i += 2;
          break;
        }
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace accel::tool
