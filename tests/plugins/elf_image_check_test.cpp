// A plugin file cut short (an interrupted copy, a full disk) is refused
// before dlopen, whose first read past the end of the file would be a SIGBUS
// that kills the process. The truncated copies here are never opened, so the
// good plugin they are cut from stays loadable by other tests.
#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "accel/hooks_table.h"
#include "accel/plugin.h"
#include "plugin_test_support.h"

namespace accel {
namespace {

using plugtest::ScratchDir;
using ::testing::HasSubstr;

// A copy of a good test plugin, cut to its first `size` bytes.
std::string truncatedPlugin(const ScratchDir& dir, std::uintmax_t size) {
  std::string path = dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_cut.so");
  std::filesystem::resize_file(path, size);
  return path;
}

// The good plugin's ELF header and program headers.
struct GoodPluginLayout {
  ElfW(Ehdr) header{};
  std::vector<ElfW(Phdr)> segments;
};

GoodPluginLayout goodPluginLayout() {
  GoodPluginLayout layout;
  std::ifstream in(plugtest::testPluginPath("libaccel_plugtest_good.so"),
                   std::ios::binary);
  in.read(reinterpret_cast<char*>(&layout.header), sizeof layout.header);
  layout.segments.resize(layout.header.e_phnum);
  in.seekg(static_cast<std::streamoff>(layout.header.e_phoff));
  in.read(reinterpret_cast<char*>(layout.segments.data()),
          static_cast<std::streamsize>(layout.segments.size() * sizeof(ElfW(Phdr))));
  EXPECT_TRUE(in.good());
  return layout;
}

// The size of the ELF header plus the program header table: a cut there
// keeps every header dlopen checks by read() and loses every segment.
std::uintmax_t headersSize() {
  GoodPluginLayout layout = goodPluginLayout();
  return layout.header.e_phoff +
         std::uintmax_t{layout.header.e_phnum} * sizeof(ElfW(Phdr));
}

// Where the last byte that dlopen maps ends; what follows (debug
// information, the section headers) is never mapped.
std::uintmax_t loadableEnd() {
  std::uintmax_t end = 0;
  for (const ElfW(Phdr) & segment : goodPluginLayout().segments) {
    end = std::max<std::uintmax_t>(end, segment.p_offset + segment.p_filesz);
  }
  return end;
}

PluginRecord loadRefused(const std::string& path) {
  try {
    PluginRecord r = loadBackend(path);
    ADD_FAILURE() << "loaded: " << describePluginRecord(r);
    return r;
  } catch (const PluginLoadError& e) {
    return e.record();
  }
}

TEST(ElfImageCheck, PluginCutAfterItsHeadersIsRefusedNotCrashingTheProcess) {
  ScratchDir dir;
  PluginRecord r = loadRefused(truncatedPlugin(dir, headersSize()));
  EXPECT_EQ(r.status, PluginStatus::OpenFailed) << describePluginRecord(r);
  EXPECT_THAT(r.detail, HasSubstr("truncated"));
  EXPECT_THAT(r.detail, HasSubstr(std::to_string(headersSize()) + " bytes"));
  EXPECT_THAT(r.detail, HasSubstr("loadable segment"));
  EXPECT_TRUE(r.registered.empty());
}

TEST(ElfImageCheck, PluginCutInsideItsSegmentsIsRefused) {
  ScratchDir dir;
  PluginRecord r = loadRefused(truncatedPlugin(dir, loadableEnd() - 1));
  EXPECT_EQ(r.status, PluginStatus::OpenFailed) << describePluginRecord(r);
  EXPECT_THAT(r.detail, HasSubstr("truncated"));
}

TEST(ElfImageCheck, PluginCutInsideItsProgramHeaderTableNamesTheTable) {
  ScratchDir dir;
  PluginRecord r = loadRefused(truncatedPlugin(dir, sizeof(ElfW(Ehdr)) + 8));
  EXPECT_EQ(r.status, PluginStatus::OpenFailed) << describePluginRecord(r);
  EXPECT_THAT(r.detail, HasSubstr("program header table"));
}

TEST(ElfImageCheck, FileShorterThanAnElfHeaderIsLeftToDlopensOwnMessage) {
  ScratchDir dir;
  PluginRecord r = loadRefused(truncatedPlugin(dir, 10));
  EXPECT_EQ(r.status, PluginStatus::OpenFailed) << describePluginRecord(r);
  EXPECT_THAT(r.detail, HasSubstr("dlopen failed"));
}

TEST(ElfImageCheck, PluginCutAfterItsMappedPartLoads) {
  // The check refuses only what dlopen would read past the end: a file
  // that lost its debug information and section headers still loads.
  ScratchDir dir;
  std::uintmax_t end = loadableEnd();
  ASSERT_LT(end, std::filesystem::file_size(
                     plugtest::testPluginPath("libaccel_plugtest_good.so")));
  PluginRecord r = loadBackend(truncatedPlugin(dir, end));
  EXPECT_EQ(r.status, PluginStatus::Loaded) << describePluginRecord(r);
  EXPECT_EQ(getHooks(*findDeviceType("plugtest_good")).deviceCount(), 2);
}

}  // namespace
}  // namespace accel
