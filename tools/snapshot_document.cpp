#include "snapshot_document.h"

#include <cctype>
#include <cstdio>

#include "accel/error.h"
#include "json_depth.h"
#include "pickle_reader.h"

namespace accel::tool {

SnapshotForm snapshotFormOf(std::string_view first_bytes) noexcept {
  if (looksLikePickle(first_bytes)) return SnapshotForm::Pickle;
  for (char c : first_bytes) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    return c == '{' ? SnapshotForm::Json : SnapshotForm::Other;
  }
  return SnapshotForm::Other;
}

nlohmann::json parseSnapshotDocument(std::string_view text, std::string_view name,
                                     std::string_view command) {
  switch (snapshotFormOf(text.substr(0, 4096))) {
    case SnapshotForm::Pickle:
      try {
        return readPickle(text, name);
      } catch (const InvalidArgument& error) {
        throw InvalidArgument(accel::detail::concat(command, ": ", error.message()));
      }
    case SnapshotForm::Json:
      // Counted first (json_depth.h): the deep value is never built.
      if (jsonNestsDeeperThan(text, kMaxSnapshotDepth)) {
        throw InvalidArgument(accel::detail::concat(
            command, ": ", name, " nests arrays or objects deeper than ",
            kMaxSnapshotDepth, " levels; a memory snapshot needs 6"));
      }
      try {
        return nlohmann::json::parse(text);
      } catch (const nlohmann::json::exception& error) {
        throw InvalidArgument(accel::detail::concat(
            command, ": ", name, " is not valid JSON: ", error.what()));
      }
    case SnapshotForm::Other:
      break;
  }
  char first[8] = "empty";
  if (!text.empty()) {
    std::snprintf(first, sizeof first, "0x%02x", static_cast<unsigned char>(text[0]));
  }
  throw InvalidArgument(accel::detail::concat(
      command, ": ", name,
      " is neither a snapshot's JSON (an object, '{') nor a pickle (protocol 2 or "
      "later); its first byte is ",
      first, ". Write it with memorySnapshotToJson() or accel.memory._dump_snapshot()"));
}

}  // namespace accel::tool
