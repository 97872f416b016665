#include "snapshot_fields.h"

#include <cmath>
#include <vector>

#include "accel/error.h"

namespace accel::tool {
namespace {

// A value as a message shows it: scalars written out (long strings cut),
// containers by kind only.
std::string describe(const nlohmann::json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  if (value.is_null()) return "null";
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return (value.is_string() ? "the string " : "") + text;
}

}  // namespace

std::string FieldPath::text() const {
  std::vector<const FieldPath*> links;
  for (const FieldPath* at = this; at != nullptr && at->parent_ != nullptr;
       at = at->parent_) {
    links.push_back(at);
  }
  if (links.empty()) return "the document";
  std::string out;
  for (auto it = links.rbegin(); it != links.rend(); ++it) {
    const FieldPath& link = **it;
    if (link.key_.empty()) {
      out += '[' + std::to_string(link.index_) + ']';
    } else {
      if (!out.empty()) out += '.';
      out += link.key_;
    }
  }
  return out;
}

void SnapshotFields::fail(const FieldPath& path, std::string_view what) const {
  throw InvalidArgument(accel::detail::concat(source_, ": ", path.text(), ' ', what));
}

void SnapshotFields::wrongKind(const nlohmann::json& value, const FieldPath& path,
                               std::string_view expected) const {
  fail(path, accel::detail::concat("is ", describe(value), "; expected ", expected));
}

const nlohmann::json& SnapshotFields::object(const nlohmann::json& value,
                                             const FieldPath& path) const {
  if (!value.is_object()) wrongKind(value, path, "an object");
  return value;
}

const nlohmann::json& SnapshotFields::array(const nlohmann::json& value,
                                            const FieldPath& path) const {
  if (!value.is_array()) wrongKind(value, path, "an array");
  return value;
}

const nlohmann::json& SnapshotFields::member(const nlohmann::json& object,
                                             const FieldPath& path,
                                             std::string_view key) const {
  const nlohmann::json* found = optionalMember(object, key);
  if (found == nullptr) {
    fail(path, accel::detail::concat("has no \"", key, "\""));
  }
  return *found;
}

const nlohmann::json* SnapshotFields::optionalMember(const nlohmann::json& object,
                                                     std::string_view key) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return nullptr;
  return &*found;
}

std::uint64_t SnapshotFields::byteCount(const nlohmann::json& value,
                                        const FieldPath& path) const {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  }
  wrongKind(value, path, "a byte count (an integer >= 0)");
}

std::int64_t SnapshotFields::integer(const nlohmann::json& value,
                                     const FieldPath& path) const {
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    return value.get<std::int64_t>();
  }
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(value.get<std::uint64_t>());
  }
  wrongKind(value, path, "an integer");
}

double SnapshotFields::nonNegativeNumber(const nlohmann::json& value,
                                         const FieldPath& path) const {
  if (value.is_number()) {
    const double number = value.get<double>();
    if (std::isfinite(number) && number >= 0) return number;
  }
  wrongKind(value, path, "a number >= 0");
}

const std::string& SnapshotFields::string(const nlohmann::json& value,
                                          const FieldPath& path) const {
  if (!value.is_string()) wrongKind(value, path, "a string");
  return value.get_ref<const std::string&>();
}

bool SnapshotFields::boolean(const nlohmann::json& value, const FieldPath& path) const {
  if (!value.is_boolean()) wrongKind(value, path, "true or false");
  return value.get<bool>();
}

}  // namespace accel::tool
