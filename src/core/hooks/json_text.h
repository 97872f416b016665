// Internal: a JSON string literal, written once for every JSON document the
// core writes (the memory snapshot, the trace): quotes and backslashes
// escaped, \n \r \t by name, other control characters as \u00XX, everything
// else (UTF-8 included) as it is.
//
//   std::string out;
//   appendJsonString(out, "a \"b\"\n");   // "a \"b\"\n", quoted and escaped
//
// Thread-safety: a pure function of its arguments; writes only `out`.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace accel::detail {

inline void appendJsonString(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace accel::detail
