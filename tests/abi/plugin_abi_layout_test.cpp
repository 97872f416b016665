// The plugin ABI only ever appends within a major version: every member of
// each frozen version (tests/abi/v1.x) keeps its offset and size in the
// current header, and every constant its value. layout/abi_layout.c is
// compiled once per header; this compares what each build saw.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "abi_layout.h"
#include "accel/plugin_abi.h"

namespace {

std::string versionText(std::uint32_t version) {
  return std::to_string(ACCEL_PLUGIN_ABI_MAJOR_OF(version)) + "." +
         std::to_string(ACCEL_PLUGIN_ABI_MINOR_OF(version));
}

void expectAppendedTo(const abi_layout& older, const abi_layout& newer) {
  SCOPED_TRACE("from " + versionText(older.version) + " to " +
               versionText(newer.version));
  ASSERT_EQ(ACCEL_PLUGIN_ABI_MAJOR_OF(older.version),
            ACCEL_PLUGIN_ABI_MAJOR_OF(newer.version))
      << "a new major version may change anything; compare within one";
  EXPECT_LE(older.version, newer.version);
  std::map<std::string, std::pair<std::size_t, std::size_t>> members;
  for (std::size_t i = 0; i < newer.member_count; ++i) {
    members[newer.members[i].name] = {newer.members[i].offset, newer.members[i].size};
  }
  for (std::size_t i = 0; i < older.member_count; ++i) {
    const abi_layout_member& member = older.members[i];
    auto found = members.find(member.name);
    ASSERT_NE(found, members.end()) << member.name << " was removed";
    EXPECT_EQ(found->second.first, member.offset) << member.name << " moved";
    EXPECT_EQ(found->second.second, member.size) << member.name << " changed size";
  }
  std::map<std::string, std::uint64_t> constants;
  for (std::size_t i = 0; i < newer.constant_count; ++i) {
    constants[newer.constants[i].name] = newer.constants[i].value;
  }
  for (std::size_t i = 0; i < older.constant_count; ++i) {
    const abi_layout_constant& constant = older.constants[i];
    auto found = constants.find(constant.name);
    ASSERT_NE(found, constants.end()) << constant.name << " was removed";
    EXPECT_EQ(found->second, constant.value) << constant.name << " changed its value";
  }
  EXPECT_STREQ(older.entry_name, newer.entry_name) << "the entry's name";
}

TEST(PluginAbiLayout, FirstCReleaseIsAPrefixOfTheCurrentHeader) {
  expectAppendedTo(abi_layout_v1_0, abi_layout_current);
}

TEST(PluginAbiLayout, EachFrozenVersionIsAPrefixOfTheNext) {
  expectAppendedTo(abi_layout_v1_0, abi_layout_v1_1);
  expectAppendedTo(abi_layout_v1_1, abi_layout_v1_2);
  expectAppendedTo(abi_layout_v1_2, abi_layout_v1_3);
  expectAppendedTo(abi_layout_v1_3, abi_layout_v1_4);
  expectAppendedTo(abi_layout_v1_4, abi_layout_current);
}

// The newest frozen copy is the current header: a version is frozen when it
// ships, before the next one changes anything.
TEST(PluginAbiLayout, NewestFrozenVersionIsTheCurrentOne) {
  EXPECT_EQ(abi_layout_v1_4.version, abi_layout_current.version)
      << "the header is at " << versionText(abi_layout_current.version)
      << ": add its frozen copy (tests/abi/README.md)";
  EXPECT_EQ(abi_layout_current.version, ACCEL_PLUGIN_ABI_CURRENT);
  EXPECT_EQ(abi_layout_v1_0.version, ACCEL_PLUGIN_ABI_VERSION(1, 0));
}

}  // namespace
