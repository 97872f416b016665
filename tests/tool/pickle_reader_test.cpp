// The pickle reader on what Python writes: fixed bytes from Python 3.11's
// pickle (so the test needs no Python), the pickles of the installed Python
// for every protocol it writes (when /usr/bin/python3 or python3 is there),
// and hostile pickles: truncated, code-running opcodes, non-str keys, deep
// nesting, shared references that expand exponentially.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "accel/error.h"
#include "memory/run_command.h"
#include "pickle_reader.h"
#include "support/error_of.h"

namespace accel::tool {
namespace {

std::string fromHex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

std::string pickleErrorOf(const std::string& data) {
  return testing::errorOf<InvalidArgument>(
      [&] { (void)readPickle(data, "snap.pickle"); });
}

// pickle.dumps(obj, protocol) in Python 3.11 for this obj:
//   shared = [1, 2]
//   {"segments": [{"address": 2**40, "size": 4096, "big": 2**64-1, "neg": -5,
//     "min": -2**63, "i31": 2**31, "f": 1.5, "t": True, "no": False,
//     "none": None, "pool": (0, 0), "one": (7,), "three": (1, "a", None),
//     "four": (1, 2, 3, 4), "empty": (), "name": "é\u00e9 ü€",
//     "long": "x" * 300, "a": shared, "b": shared}]}
constexpr std::string_view kProtocol2Hex =
    "80027d710058080000007365676d656e747371015d71027d71032858070000006164647265737371"
    "048a06000000000001580400000073697a6571054d0010580300000062696771068a09ffffffffff"
    "ffffff0058030000006e656771074afbffffff58030000006d696e71088a08000000000000008058"
    "0300000069333171098a050000008000580100000066710a473ff800000000000058010000007471"
    "0b8858020000006e6f710c8958040000006e6f6e65710d4e5804000000706f6f6c710e4b004b0086"
    "710f58030000006f6e6571104b078571115805000000746872656571124b0158010000006171134e"
    "8771145804000000666f75727115284b014b024b034b047471165805000000656d70747971172958"
    "040000006e616d657118580a000000c3a9c3a920c3bce282ac711958040000006c6f6e67711a582c"
    "01000078787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "7878787878787878787878787878787878787878787878711b68135d711c284b014b026558010000"
    "0062711d681c7561732e";
constexpr std::string_view kProtocol4Hex =
    "8004952b020000000000007d948c087365676d656e7473945d947d94288c0761646472657373948a"
    "060000000000018c0473697a65944d00108c03626967948a09ffffffffffffffff008c036e656794"
    "4afbffffff8c036d696e948a0800000000000000808c03693331948a0500000080008c016694473f"
    "f80000000000008c017494888c026e6f94898c046e6f6e65944e8c04706f6f6c944b004b0086948c"
    "036f6e65944b0785948c057468726565944b018c0161944e87948c04666f757294284b014b024b03"
    "4b0474948c05656d70747994298c046e616d65948c0ac3a9c3a920c3bce282ac948c046c6f6e6794"
    "582c0100007878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "78787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "787878787878787878787878787878787878787878787878789468135d94284b014b02658c016294"
    "681c7561732e";

nlohmann::json expected() {
  nlohmann::json segment{{"address", std::uint64_t{1} << 40},
                         {"size", 4096},
                         {"big", ~std::uint64_t{0}},
                         {"neg", -5},
                         {"min", INT64_MIN},
                         {"i31", std::uint64_t{1} << 31},
                         {"f", 1.5},
                         {"t", true},
                         {"no", false},
                         {"none", nullptr},
                         {"pool", {0, 0}},
                         {"one", {7}},
                         {"three", {1, "a", nullptr}},
                         {"four", {1, 2, 3, 4}},
                         {"empty", nlohmann::json::array()},
                         {"name", "\xc3\xa9\xc3\xa9 \xc3\xbc\xe2\x82\xac"},
                         {"long", std::string(300, 'x')},
                         {"a", {1, 2}},
                         {"b", {1, 2}}};
  return nlohmann::json{{"segments", {segment}}};
}

TEST(PickleReader, ReadsWhatPythonWritesWithProtocol2) {
  EXPECT_EQ(readPickle(fromHex(kProtocol2Hex), "p2"), expected());
}

TEST(PickleReader, ReadsWhatPythonWritesWithProtocol4) {
  EXPECT_EQ(readPickle(fromHex(kProtocol4Hex), "p4"), expected());
}

TEST(PickleReader, ReadsEveryProtocolOfTheInstalledPython) {
  int status = -1;
  std::string python = memory::testing::runCommand(
      "command -v /usr/bin/python3 || command -v python3", status);
  while (!python.empty() && python.back() == '\n') python.pop_back();
  if (status != 0 || python.empty()) GTEST_SKIP() << "no python3 to write pickles";
  const std::string dir = ::testing::TempDir();
  const std::string script = dir + "pickle_reader_write.py";
  // A snapshot-shaped dict, as accel.memory._snapshot() returns it.
  std::ofstream(script) << R"PY(
import json, pickle, sys
frames = [{"filename": "train.py", "line": 12, "name": "step"}]
snapshot = {"segments": [{"device": 0, "address": 1 << 44, "total_size": 2097152,
                          "allocated_size": 512, "segment_pool_id": (0, 0),
                          "is_expandable": False, "frames": [],
                          "blocks": [{"address": 1 << 44, "size": 512, "state": "active_allocated",
                                      "frames": frames}]}],
            "device_traces": [[{"action": "alloc", "addr": 1 << 44, "size": 512,
                                "stream": 0, "time_us": 1.5e6, "frames": frames}] * 300]}
out = sys.argv[1]
with open(out + ".json", "w") as f:
    json.dump(snapshot, f)
for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
    with open(out + "." + str(protocol), "wb") as f:
        pickle.dump(snapshot, f, protocol=protocol)
print(pickle.HIGHEST_PROTOCOL)
)PY";
  const std::string base = dir + "pickle_reader_snapshot";
  const std::string highest =
      memory::testing::runCommand(python + " " + script + " " + base, status);
  ASSERT_EQ(status, 0) << highest;
  std::ifstream json_file(base + ".json");
  const nlohmann::json want = nlohmann::json::parse(json_file);
  const int last = std::stoi(highest);
  for (int protocol = 2; protocol <= last; ++protocol) {
    std::ifstream in(base + "." + std::to_string(protocol), std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(readPickle(data, "snapshot"), want) << "protocol " << protocol;
  }
}

TEST(PickleReader, RefusesWhatIsNotPlainDataNamingTheOpcode) {
  // Protocol 0's GLOBAL: how a pickle names a callable to run on load.
  EXPECT_NE(pickleErrorOf("\x80\x02"
                          "cos\nsystem\n")
                .find("opcode 0x63 'c' is not read"),
            std::string::npos);
  // Bytes (SHORT_BINBYTES), not a snapshot's type.
  EXPECT_NE(pickleErrorOf(std::string("\x80\x03"
                                      "C\x01x.",
                                      6))
                .find("opcode 0x43"),
            std::string::npos);
  EXPECT_NE(pickleErrorOf(std::string("\x80\x01N.", 4)).find("protocol 1 is not read"),
            std::string::npos);
}

TEST(PickleReader, TruncatedAndMalformedPicklesAreClearErrors) {
  const std::string whole = fromHex(kProtocol4Hex);
  for (std::size_t cut : {std::size_t{1}, std::size_t{2}, std::size_t{20},
                          whole.size() / 2, whole.size() - 1}) {
    const std::string message = pickleErrorOf(whole.substr(0, cut));
    EXPECT_NE(message.find("snap.pickle: pickle offset"), std::string::npos) << cut;
  }
  EXPECT_NE(pickleErrorOf(std::string("\x80\x02}K\x01K\x02s.", 9))
                .find("a dict key is not a str"),
            std::string::npos);
  EXPECT_NE(pickleErrorOf(std::string("\x80\x02K\x01K\x02.", 7))
                .find("does not end with exactly one value"),
            std::string::npos);
  EXPECT_NE(pickleErrorOf(std::string("\x80\x02h\x05.", 5)).find("memo entry 5 is unset"),
            std::string::npos);
  EXPECT_NE(
      pickleErrorOf(std::string("\x80\x02K\x01\x61.", 6)).find("APPEND without a list"),
      std::string::npos);
}

TEST(PickleReader, DeepNestingIsRefusedWithoutRecursion) {
  std::string data = "\x80\x02";
  for (int i = 0; i < 100000; ++i) data += "]q\x01";  // EMPTY_LIST, BINPUT 1
  data += std::string(99999, 'a');  // APPEND: each list into the one below
  data += '.';
  EXPECT_NE(pickleErrorOf(data).find("nest deeper than 64 levels"), std::string::npos);
}

// Values created far more densely than a snapshot's (1 byte each: empty
// lists, a 130-fold expansion in memory) are refused as they are read, while
// None, True and False cost nothing however often they appear.
TEST(PickleReader, ValuesDenserThanASnapshotsAreRefused) {
  constexpr std::size_t kValues = 200000;
  const std::string lists =
      "\x80\x04](" + std::string(kValues, ']') + "e.";  // [[], [], ...]
  EXPECT_NE(pickleErrorOf(lists).find("creates more than one value per 3 bytes"),
            std::string::npos);
  const std::string nones = "\x80\x04](" + std::string(kValues, 'N') + "e.";
  const nlohmann::json read = readPickle(nones, "snap.pickle");
  ASSERT_EQ(read.size(), kValues);
  EXPECT_TRUE(read.back().is_null());
  // Dicts of small integers (2 bytes each) under keys written once and then
  // referred to by memo, as Python writes them: as dense as a snapshot
  // without stacks gets (4 bytes a value here), and read.
  using namespace std::string_view_literals;
  // "a" as memo 0 and "b" as memo 1, both popped; then a list of dicts.
  std::string entries(
      "\x80\x04\x8c\x01"
      "a\x94\x8c\x01"
      "b\x94"
      "00](");
  for (int i = 0; i < 20000; ++i) entries += "}(h\x00K\x01h\x01K\x02u"sv;
  entries += "e.";
  EXPECT_EQ(readPickle(entries, "snap.pickle").size(), 20000u);
}

TEST(PickleReader, SharedReferencesCannotExpandWithoutBound) {
  // l0 = [1]; l(k+1) = [lk, lk]: 2^60 values from a few hundred bytes.
  std::string data = "\x80\x02]K\x01\x61\x94";  // [1], memo 0
  for (int k = 0; k < 60; ++k) {
    data += "0]";                           // POP the previous list; a new one
    data += "h" + std::string(1, char(k));  // BINGET k
    data += "a";
    data += "h" + std::string(1, char(k));
    data += "a\x94";  // MEMOIZE as k + 1
  }
  data += '.';
  EXPECT_NE(pickleErrorOf(data).find("expand to far more values"), std::string::npos);
}

// A string is copied wherever a memo reference names it (JSON cannot share):
// a 16 KiB str named 10,000 times by 2-byte BINGETs would be 160 MiB of
// strings from a 36 KiB pickle. Strings may repeat into 64 times the
// pickle's size (plus 1 MiB), as a snapshot's filenames and keys do; past
// that the pickle is refused before the copies are made.
TEST(PickleReader, SharedStringsCannotExpandFarBeyondThePickle) {
  using namespace std::string_view_literals;
  const auto listOfReferences = [](std::size_t string_bytes, int references) {
    std::string data("\x80\x04\x8d"sv);  // PROTO 4, BINUNICODE8
    for (int i = 0; i < 8; ++i)
      data += static_cast<char>((string_bytes >> (8 * i)) & 0xff);
    data += std::string(string_bytes, 'x');
    data +=
        "\x94"
        "0](";  // MEMOIZE as 0, POP; an empty list, MARK
    for (int i = 0; i < references; ++i) data += "h\x00"sv;  // BINGET 0
    data += "e.";
    return data;
  };
  const std::string hostile = listOfReferences(std::size_t{16} << 10, 10000);
  ASSERT_LT(hostile.size(), std::size_t{40} << 10);
  EXPECT_NE(
      pickleErrorOf(hostile).find("shared references repeat strings into more than"),
      std::string::npos);
  // A filename named by every frame of a long trace is read.
  const nlohmann::json frames = readPickle(listOfReferences(80, 100000), "snap.pickle");
  ASSERT_EQ(frames.size(), 100000u);
  EXPECT_EQ(frames.back(), std::string(80, 'x'));
}

}  // namespace
}  // namespace accel::tool
