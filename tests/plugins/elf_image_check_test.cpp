// A plugin file cut short (an interrupted copy, a full disk) is refused
// before dlopen, whose first read past the end of the file would be a SIGBUS
// that kills the process. The truncated copies here are never opened, so the
// good plugin they are cut from stays loadable by other tests.
#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>

#include <algorithm>
#include <cstddef>
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

// A copy of a good test plugin with `value` written over the bytes at `offset`.
template <typename T>
std::string patchedPlugin(const ScratchDir& dir, std::uintmax_t offset, T value) {
  std::string path = dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_patched.so");
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekp(static_cast<std::streamoff>(offset));
  file.write(reinterpret_cast<const char*>(&value), sizeof value);
  EXPECT_TRUE(file.good()) << path;
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

// The header says whether the file can be loaded here at all; dlopen's own
// words for a library of another machine are "No such file or directory".
TEST(ElfImageCheck, LibraryForAnotherMachineIsNamedAsSuch) {
  ScratchDir dir;
  const ElfW(Half) other = goodPluginLayout().header.e_machine == EM_AARCH64
                               ? ElfW(Half){EM_X86_64}
                               : ElfW(Half){EM_AARCH64};
  PluginRecord r =
      loadRefused(patchedPlugin(dir, offsetof(ElfW(Ehdr), e_machine), other));
  EXPECT_EQ(r.status, PluginStatus::OpenFailed) << describePluginRecord(r);
  EXPECT_THAT(r.detail, HasSubstr("built for another platform"));
  EXPECT_THAT(r.detail,
              HasSubstr(other == EM_AARCH64 ? "(the file: AArch64; this process: x86-64)"
                                            : "(the file: x86-64"));
  EXPECT_THAT(r.detail, ::testing::Not(HasSubstr("No such file")));
}

TEST(ElfImageCheck, LibraryOfAnotherClassOrByteOrderIsNamedAsSuch) {
  ScratchDir dir;
  const unsigned char other_class = sizeof(void*) == 8 ? ELFCLASS32 : ELFCLASS64;
  PluginRecord r = loadRefused(patchedPlugin(dir, EI_CLASS, other_class));
  EXPECT_EQ(r.status, PluginStatus::OpenFailed) << describePluginRecord(r);
  EXPECT_THAT(r.detail, HasSubstr("built for another platform"));
  EXPECT_THAT(r.detail,
              HasSubstr(sizeof(void*) == 8 ? "(the file: 32-bit; this process: 64-bit)"
                                           : "(the file: 64-bit"));
  const unsigned char other_data =
      __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2MSB : ELFDATA2LSB;
  r = loadRefused(patchedPlugin(dir, EI_DATA, other_data));
  EXPECT_THAT(r.detail,
              HasSubstr(other_data == ELFDATA2MSB ? "(the file: big-endian"
                                                  : "(the file: little-endian"));
}

TEST(ElfImageCheck, ElfFileThatIsNotASharedLibraryIsNamed) {
  ScratchDir dir;
  PluginRecord r =
      loadRefused(patchedPlugin(dir, offsetof(ElfW(Ehdr), e_type), ElfW(Half){ET_REL}));
  EXPECT_EQ(r.status, PluginStatus::OpenFailed) << describePluginRecord(r);
  EXPECT_THAT(r.detail, HasSubstr("an object file (.o), not a shared library"));
}

TEST(ElfImageCheck, InsaneHeaderFieldsAreRefusedAsDamaged) {
  ScratchDir dir;
  PluginRecord r =
      loadRefused(patchedPlugin(dir, offsetof(ElfW(Ehdr), e_phentsize), ElfW(Half){40}));
  EXPECT_THAT(r.detail, HasSubstr("damaged: its ELF header gives program headers of 40"));
  r = loadRefused(patchedPlugin(dir, offsetof(ElfW(Ehdr), e_phnum), ElfW(Half){0}));
  EXPECT_THAT(r.detail, HasSubstr("lists no program headers"));
  // An offset whose sum with the table's size overflows is past the end too.
  r = loadRefused(patchedPlugin(dir, offsetof(ElfW(Ehdr), e_phoff), ~ElfW(Off){0} - 8));
  EXPECT_THAT(r.detail, HasSubstr("truncated or damaged: its program header table"));
}

TEST(ElfImageCheck, LibraryWithoutALoadableSegmentIsRefusedAsDamaged) {
  ScratchDir dir;
  GoodPluginLayout layout = goodPluginLayout();
  std::string path = dir.copyPlugin("libaccel_plugtest_good.so", "libaccel_patched.so");
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  for (std::size_t i = 0; i < layout.segments.size(); ++i) {
    if (layout.segments[i].p_type != PT_LOAD) continue;
    const ElfW(Word) null_type = PT_NULL;
    file.seekp(static_cast<std::streamoff>(
        layout.header.e_phoff + i * sizeof(ElfW(Phdr)) + offsetof(ElfW(Phdr), p_type)));
    file.write(reinterpret_cast<const char*>(&null_type), sizeof null_type);
  }
  file.close();
  PluginRecord r = loadRefused(path);
  EXPECT_EQ(r.status, PluginStatus::OpenFailed) << describePluginRecord(r);
  EXPECT_THAT(r.detail, HasSubstr("lists no loadable segment"));
}

}  // namespace
}  // namespace accel
