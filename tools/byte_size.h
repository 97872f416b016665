// Byte sizes on the command line: "1048576", "512MiB", "80GiB". Shared by the
// options that take one (memreplay --capacity, --max-input-size).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace accel::tool {

// Bytes, or a whole number followed by B, KiB, MiB, GiB or TiB. Throws
// InvalidArgument naming `option` for anything else, zero, or an overflow.
[[nodiscard]] std::size_t parseByteSize(std::string_view text, std::string_view option);
// The inverse for messages: "1 GiB" when exact in a unit, else "N bytes".
[[nodiscard]] std::string formatByteSize(std::size_t bytes);

}  // namespace accel::tool
