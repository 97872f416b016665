// Typed reads of a parsed snapshot's fields that name the field when its
// value is missing or of the wrong kind: "memviz: snap.json:
// segments[2].blocks[0].size is -5; expected a byte count (an integer >= 0)".
// The commands read snapshots written by other programs, so every value is
// checked where it is read rather than trusted.
//
// Thread-safety: FieldPath and SnapshotFields are immutable values.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace accel::tool {

// Where a value lies in the document ("device_traces[0][17].addr"), kept as a
// chain of stack-allocated links so that reading a field costs no string
// until an error needs the text. A path points at its parent: name the parent
// (a local) for as long as its children are used, e.g.
//   const FieldPath block_at = blocks_at.element(j);
//   fields.byteCount(value, block_at.member("size"));  // a temporary is fine here
class FieldPath {
 public:
  FieldPath() = default;
  [[nodiscard]] FieldPath member(std::string_view key) const { return {this, key, 0}; }
  [[nodiscard]] FieldPath element(std::size_t index) const { return {this, {}, index}; }
  [[nodiscard]] std::string text() const;

 private:
  FieldPath(const FieldPath* parent, std::string_view key, std::size_t index)
      : parent_(parent), key_(key), index_(index) {}
  const FieldPath* parent_ = nullptr;  // nullptr: the document itself
  std::string_view key_;               // empty: an array element
  std::size_t index_ = 0;
};

class SnapshotFields {
 public:
  // `source` prefixes every message: "memviz: snap.json".
  explicit SnapshotFields(std::string source) : source_(std::move(source)) {}

  // Each throws InvalidArgument naming the path and what was expected.
  const nlohmann::json& object(const nlohmann::json& value, const FieldPath& path) const;
  const nlohmann::json& array(const nlohmann::json& value, const FieldPath& path) const;
  // A required member of an object.
  const nlohmann::json& member(const nlohmann::json& object, const FieldPath& path,
                               std::string_view key) const;
  // An optional member: nullptr when absent (or null).
  static const nlohmann::json* optionalMember(const nlohmann::json& object,
                                              std::string_view key);
  // An integer >= 0 (sizes, addresses); a fraction or a negative is an error.
  std::uint64_t byteCount(const nlohmann::json& value, const FieldPath& path) const;
  std::int64_t integer(const nlohmann::json& value, const FieldPath& path) const;
  // Any finite number >= 0 (times).
  double nonNegativeNumber(const nlohmann::json& value, const FieldPath& path) const;
  const std::string& string(const nlohmann::json& value, const FieldPath& path) const;
  bool boolean(const nlohmann::json& value, const FieldPath& path) const;

  [[noreturn]] void fail(const FieldPath& path, std::string_view what) const;

 private:
  [[noreturn]] void wrongKind(const nlohmann::json& value, const FieldPath& path,
                              std::string_view expected) const;
  std::string source_;
};

}  // namespace accel::tool
