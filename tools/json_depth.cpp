#include "json_depth.h"

namespace accel::tool {

bool jsonNestsDeeperThan(std::string_view text, int max_depth) noexcept {
  int depth = 0;  // arrays and objects open around the current character
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote included
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case ' ':
      case '\t':
      case '\n':
      case '\r':
      case ',':
      case ':':
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      case '[':
      case '{':
        if (depth > max_depth) return true;
        ++depth;
        break;
      case '"':
        if (depth > max_depth) return true;
        in_string = true;
        break;
      default:  // a number's or a literal's characters
        if (depth > max_depth) return true;
        break;
    }
  }
  return false;
}

}  // namespace accel::tool
