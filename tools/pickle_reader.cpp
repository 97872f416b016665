#include "pickle_reader.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "accel/error.h"

namespace accel::tool {
namespace {

// Opcodes of protocols 2-5 that build plain data (Python's Lib/pickletools.py
// documents each).
enum Opcode : unsigned char {
  kMark = '(',
  kStop = '.',
  kPop = '0',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNone = 'N',
  kBinFloat = 'G',
  kBinUnicode = 'X',
  kEmptyList = ']',
  kAppend = 'a',
  kAppends = 'e',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kSetItems = 'u',
  kEmptyDict = '}',
  kEmptyTuple = ')',
  kProto = 0x80,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kLong4 = 0x8b,
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kMemoize = 0x94,
  kFrame = 0x95,
};

// Values form a graph (the memo lets one object appear in several places and
// containers are filled after they are memoised), so they are built as nodes
// first and turned into JSON once the pickle has been read.
struct Node {
  enum class Kind : std::uint8_t { Scalar, List, Dict } kind = Kind::Scalar;
  nlohmann::json scalar;
  std::vector<std::size_t> items;  // List: values; Dict: key, value, key, value...
};

constexpr std::size_t kMarkOnStack = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kNoneNode = 0, kTrueNode = 1, kFalseNode = 2;

// A snapshot's pickle spends 7 to 30 bytes per value it creates (a dict
// entry's key is a memo reference, a number or string at least 2 bytes); a
// pickle that creates values more densely than this is refused as it is read,
// so that what it expands to stays within a small multiple of its size (each
// value is a Node of ~48 bytes, then a JSON value).
constexpr std::size_t kMinBytesPerValue = 3;

// The bytes of strings a pickle may expand to: a snapshot's strings repeat
// through memo references (a frame's filename and name, every dict's keys),
// 5 to 15 times its size for deep Python stacks; 64 times leaves room and
// still bounds what a hostile pickle makes (64 MiB per MiB read).
constexpr std::size_t kMaxStringExpansion = 64;
constexpr std::size_t kStringBytesAlways = std::size_t{1} << 20;

class PickleReader {
 public:
  PickleReader(std::string_view data, std::string_view name)
      : data_(data), name_(name), max_nodes_(data.size() / kMinBytesPerValue + 4096) {
    // None, True and False are immutable: one node each, shared.
    nodes_.push_back(Node{Node::Kind::Scalar, nullptr, {}});
    nodes_.push_back(Node{Node::Kind::Scalar, true, {}});
    nodes_.push_back(Node{Node::Kind::Scalar, false, {}});
  }

  nlohmann::json read() {
    while (true) {
      if (at_ >= data_.size()) fail("the pickle ends without its STOP opcode");
      opcode_at_ = at_;
      const auto opcode = static_cast<unsigned char>(data_[at_++]);
      if (opcode == kStop) break;
      step(opcode);
    }
    if (stack_.size() != 1 || stack_.back() == kMarkOnStack) {
      fail("the pickle does not end with exactly one value");
    }
    return toJson(stack_.back());
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw InvalidArgument(
        accel::detail::concat(name_, ": pickle offset ", opcode_at_, ": ", what));
  }

  std::string_view take(std::uint64_t count) {
    if (count > data_.size() - at_) fail("the pickle is truncated");
    const std::string_view bytes = data_.substr(at_, static_cast<std::size_t>(count));
    at_ += static_cast<std::size_t>(count);
    return bytes;
  }
  // Pickle integers are little-endian.
  std::uint64_t unsignedLE(int bytes) {
    const std::string_view raw = take(static_cast<std::uint64_t>(bytes));
    std::uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; --i) {
      value = (value << 8) | static_cast<unsigned char>(raw[static_cast<std::size_t>(i)]);
    }
    return value;
  }

  std::size_t add(Node node) {
    if (nodes_.size() >= max_nodes_) {
      fail(accel::detail::concat(
          "the pickle creates more than one value per ", kMinBytesPerValue,
          " bytes, far denser than a memory snapshot; it is not read further"));
    }
    nodes_.push_back(std::move(node));
    return nodes_.size() - 1;
  }
  std::size_t addScalar(nlohmann::json value) {
    return add(Node{Node::Kind::Scalar, std::move(value), {}});
  }
  void push(std::size_t node) { stack_.push_back(node); }
  std::size_t pop() {
    if (stack_.empty() || stack_.back() == kMarkOnStack) fail("a value is missing");
    const std::size_t node = stack_.back();
    stack_.pop_back();
    return node;
  }
  // The values above the topmost MARK, which is removed.
  std::vector<std::size_t> popToMark() {
    std::size_t mark = stack_.size();
    while (mark > 0 && stack_[mark - 1] != kMarkOnStack) --mark;
    if (mark == 0) fail("MARK is missing");
    std::vector<std::size_t> values(stack_.begin() + static_cast<std::ptrdiff_t>(mark),
                                    stack_.end());
    stack_.resize(mark - 1);
    return values;
  }
  Node& container(Node::Kind kind) {
    if (stack_.empty() || stack_.back() == kMarkOnStack ||
        nodes_[stack_.back()].kind != kind) {
      fail(kind == Node::Kind::List ? "APPEND without a list under it"
                                    : "SETITEM without a dict under it");
    }
    return nodes_[stack_.back()];
  }
  void appendTo(Node::Kind kind, const std::vector<std::size_t>& values) {
    if (kind == Node::Kind::Dict && values.size() % 2 != 0) {
      fail("SETITEMS with a key and no value");
    }
    Node& target = container(kind);
    target.items.insert(target.items.end(), values.begin(), values.end());
  }
  void pushTuple(std::vector<std::size_t> values) {
    push(add(Node{Node::Kind::List, {}, std::move(values)}));
  }
  void memoPut(std::uint64_t key) {
    if (stack_.empty() || stack_.back() == kMarkOnStack) fail("nothing to memoise");
    memo_[key] = stack_.back();
  }
  void memoGet(std::uint64_t key) {
    const auto found = memo_.find(key);
    if (found == memo_.end())
      fail(accel::detail::concat("memo entry ", key, " is unset"));
    push(found->second);
  }
  void pushInteger(std::string_view raw) {
    // LONG1/LONG4: two's complement, little-endian, as many bytes as needed.
    if (raw.size() > 9 || (raw.size() == 9 && raw[8] != 0)) {
      fail("an integer does not fit in 64 bits");
    }
    std::uint64_t value = 0;
    for (std::size_t i = std::min<std::size_t>(raw.size(), 8); i-- > 0;) {
      value = (value << 8) | static_cast<unsigned char>(raw[i]);
    }
    const bool negative = raw.size() <= 8 && !raw.empty() &&
                          (static_cast<unsigned char>(raw.back()) & 0x80) != 0;
    if (negative) {
      if (raw.size() < 8) value |= ~std::uint64_t{0} << (raw.size() * 8);
      push(addScalar(static_cast<std::int64_t>(value)));
    } else {
      push(addScalar(value));
    }
  }
  void pushString(std::string_view bytes) { push(addScalar(std::string(bytes))); }

  void step(unsigned char opcode) {
    switch (opcode) {
      case kProto: {
        const auto protocol = static_cast<unsigned char>(take(1)[0]);
        if (protocol < 2 || protocol > 5) {
          fail(accel::detail::concat("pickle protocol ", int(protocol),
                                     " is not read; protocols 2 to 5 are"));
        }
        return;
      }
      case kFrame:
        (void)unsignedLE(8);
        return;
      case kMark:
        stack_.push_back(kMarkOnStack);
        return;
      case kPop:
        (void)pop();
        return;
      case kNone:
        push(kNoneNode);
        return;
      case kNewTrue:
        push(kTrueNode);
        return;
      case kNewFalse:
        push(kFalseNode);
        return;
      case kBinInt:
        push(addScalar(
            static_cast<std::int32_t>(static_cast<std::uint32_t>(unsignedLE(4)))));
        return;
      case kBinInt1:
        push(addScalar(unsignedLE(1)));
        return;
      case kBinInt2:
        push(addScalar(unsignedLE(2)));
        return;
      case kLong1: {
        const auto length = unsignedLE(1);
        pushInteger(take(length));
        return;
      }
      case kLong4: {
        const auto length = unsignedLE(4);
        pushInteger(take(length));
        return;
      }
      case kBinFloat: {
        // Big-endian IEEE 754, unlike the integers.
        const std::string_view raw = take(8);
        std::uint64_t bits = 0;
        for (char byte : raw) bits = (bits << 8) | static_cast<unsigned char>(byte);
        double value = 0;
        std::memcpy(&value, &bits, sizeof value);
        push(addScalar(value));
        return;
      }
      case kShortBinUnicode:
        pushString(take(unsignedLE(1)));
        return;
      case kBinUnicode:
        pushString(take(unsignedLE(4)));
        return;
      case kBinUnicode8:
        pushString(take(unsignedLE(8)));
        return;
      case kEmptyList:
        push(add(Node{Node::Kind::List, {}, {}}));
        return;
      case kEmptyDict:
        push(add(Node{Node::Kind::Dict, {}, {}}));
        return;
      case kEmptyTuple:
        pushTuple({});
        return;
      case kAppend: {
        const std::size_t value = pop();
        container(Node::Kind::List).items.push_back(value);
        return;
      }
      case kAppends:
        appendTo(Node::Kind::List, popToMark());
        return;
      case kSetItem: {
        const std::size_t value = pop();
        const std::size_t key = pop();
        appendTo(Node::Kind::Dict, {key, value});
        return;
      }
      case kSetItems:
        appendTo(Node::Kind::Dict, popToMark());
        return;
      case kTuple:
        pushTuple(popToMark());
        return;
      case kTuple1: {
        const std::size_t a = pop();
        pushTuple({a});
        return;
      }
      case kTuple2: {
        const std::size_t b = pop();
        const std::size_t a = pop();
        pushTuple({a, b});
        return;
      }
      case kTuple3: {
        const std::size_t c = pop();
        const std::size_t b = pop();
        const std::size_t a = pop();
        pushTuple({a, b, c});
        return;
      }
      case kMemoize:
        memoPut(memo_.size());
        return;
      case kBinPut:
        memoPut(unsignedLE(1));
        return;
      case kLongBinPut:
        memoPut(unsignedLE(4));
        return;
      case kBinGet:
        memoGet(unsignedLE(1));
        return;
      case kLongBinGet:
        memoGet(unsignedLE(4));
        return;
      default:
        break;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", opcode);
    fail(accel::detail::concat(
        "opcode ", hex,
        (opcode >= 0x20 && opcode < 0x7f ? std::string(" '") + char(opcode) + "'" : ""),
        " is not read: a snapshot pickle holds only dicts, lists, tuples, str, int, "
        "float, bool and None (write the snapshot with accel.memory._dump_snapshot, or "
        "as JSON)"));
  }

  // Iterative, so that nesting costs heap rather than stack. A JSON value
  // cannot share, so a shared node is copied wherever it appears: the copies
  // are bounded by two budgets tied to the pickle's size, one on values (a
  // list referred to twice in each of 60 lists is 2^60 values) and one on
  // the bytes of strings (a 1 MiB str referred to 20,000 times by 2-byte
  // BINGETs is 20 GB from a 1 MB pickle).
  nlohmann::json toJson(std::size_t root) {
    std::size_t budget = 4 * data_.size() + 4096;
    std::size_t string_budget = kMaxStringExpansion * data_.size() + kStringBytesAlways;
    const auto chargeString = [&](const std::string& text) {
      if (text.size() > string_budget) {
        fail(accel::detail::concat(
            "shared references repeat strings into more than ",
            kMaxStringExpansion * data_.size() + kStringBytesAlways,
            " bytes, far more than a snapshot of this size holds (", kMaxStringExpansion,
            " times its ", data_.size(), " bytes)"));
      }
      string_budget -= text.size();
    };
    struct Pending {
      std::size_t node;
      nlohmann::json* out;
      int depth;
    };
    nlohmann::json result;
    std::vector<Pending> work{{root, &result, 0}};
    while (!work.empty()) {
      const Pending item = work.back();
      work.pop_back();
      if (budget-- == 0) {
        fail("shared references expand to far more values than the pickle holds");
      }
      const Node& node = nodes_[item.node];
      if (node.kind == Node::Kind::Scalar) {
        if (node.scalar.is_string()) {
          chargeString(node.scalar.get_ref<const std::string&>());
        }
        *item.out = node.scalar;
        continue;
      }
      if (item.depth >= kMaxPickleDepth) {
        fail(accel::detail::concat("values nest deeper than ", kMaxPickleDepth,
                                   " levels; a snapshot needs 6"));
      }
      if (node.kind == Node::Kind::List) {
        *item.out = nlohmann::json::array();
        auto& array = item.out->get_ref<nlohmann::json::array_t&>();
        array.resize(node.items.size());
        for (std::size_t i = 0; i < node.items.size(); ++i) {
          work.push_back({node.items[i], &array[i], item.depth + 1});
        }
        continue;
      }
      *item.out = nlohmann::json::object();
      auto& object = item.out->get_ref<nlohmann::json::object_t&>();
      for (std::size_t i = 0; i + 1 < node.items.size(); i += 2) {
        const Node& key = nodes_[node.items[i]];
        if (key.kind != Node::Kind::Scalar || !key.scalar.is_string()) {
          fail("a dict key is not a str");
        }
        const std::string& name = key.scalar.get_ref<const std::string&>();
        chargeString(name);
        // std::map keeps its nodes in place, so the pointer stays valid.
        nlohmann::json& slot = object[name];
        work.push_back({node.items[i + 1], &slot, item.depth + 1});
      }
    }
    return result;
  }

  std::string_view data_;
  std::string_view name_;
  std::size_t at_ = 0;
  std::size_t opcode_at_ = 0;
  std::size_t max_nodes_;
  std::vector<Node> nodes_;
  std::vector<std::size_t> stack_;
  std::unordered_map<std::uint64_t, std::size_t> memo_;
};

// Protocols 0 and 1 have no PROTO opcode: a pickle of a container begins by
// building it (MARK then DICT/LIST in protocol 0, EMPTY_DICT and the like in
// 1) and ends with STOP. No trace line and no JSON document begins with these
// bytes, so the first byte and the last one tell a pickle from text.
bool startsLikeProtocol0Or1(std::string_view data) noexcept {
  switch (static_cast<unsigned char>(data[0])) {
    case kMark:
    case kEmptyDict:
    case kEmptyList:
    case kEmptyTuple:
      return true;
    default:
      return false;
  }
}

}  // namespace

nlohmann::json readPickle(std::string_view data, std::string_view name) {
  if (!data.empty() && static_cast<unsigned char>(data[0]) != kProto) {
    throw InvalidArgument(accel::detail::concat(
        name,
        ": pickle offset 0: a pickle without the PROTO opcode is of protocol 0 or 1, "
        "which is not read; protocols 2 to 5 are (write it with pickle.dump(obj, f, "
        "protocol=2) or later, or with accel.memory._dump_snapshot)"));
  }
  return PickleReader(data, name).read();
}

bool looksLikePickle(std::string_view data) noexcept {
  // PROTO alone (a pickle cut after its first byte) is a pickle too: read as
  // one, it is refused as truncated rather than as a text trace or "neither".
  if (!data.empty() && static_cast<unsigned char>(data[0]) == kProto) return true;
  return data.size() >= 2 && startsLikeProtocol0Or1(data);
}

}  // namespace accel::tool
