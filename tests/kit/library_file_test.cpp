// libraryFileProblem, nonRegularFileKind and ReadOnlyFile look at the file
// they open, opened without blocking: a path that names a FIFO when it is
// opened is refused at once, even where a stat() of the path a moment
// earlier saw a regular file (a path swapped between the two).
//
// A program of its own: it defines stat() to report a regular file for the
// path the test swaps, which stands for the swap happening right after any
// stat() of it.
#include "accel/kit/library_file.h"
#include "support/forked_child.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {
// The path stat() reports as a regular file of 4096 bytes (empty: none).
std::string g_reported_regular;
}  // namespace

extern "C" __attribute__((visibility("default"))) int stat(
    const char* __restrict path, struct stat* __restrict buf) noexcept {
  using Real = int (*)(const char*, struct stat*);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "stat"));
  if (!g_reported_regular.empty() && g_reported_regular == path) {
    std::memset(buf, 0, sizeof *buf);
    buf->st_mode = S_IFREG | 0644;
    buf->st_size = 4096;
    return 0;
  }
  return real(path, buf);
}

namespace accel::kit {
namespace {

class LibraryFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/accel_library_file_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fifo_ = dir_ + "/libdriver.so";
    ASSERT_EQ(::mkfifo(fifo_.c_str(), 0600), 0);  // no writer ever opens it
  }
  void TearDown() override {
    g_reported_regular.clear();
    ::unlink(fifo_.c_str());
    ::unlink((dir_ + "/vendor.icd").c_str());
    ::rmdir(dir_.c_str());
  }
  std::string dir_;
  std::string fifo_;
};

TEST_F(LibraryFileTest, ALibraryThatIsAFifoWhenOpenedIsRefusedWithoutBlocking) {
  g_reported_regular = fifo_;
  const std::string fifo = fifo_;
  const int code = accel::testing::runInChildBounded([fifo] {
    const std::string problem = libraryFileProblem(fifo);
    return problem.find("a FIFO (named pipe), not a regular file") != std::string::npos
               ? 0
               : 1;
  });
  EXPECT_EQ(code, 0) << "1: not refused as a FIFO; 124: the check blocked opening it";
}

TEST_F(LibraryFileTest, AFileThatIsAFifoWhenOpenedIsNamedAsOne) {
  g_reported_regular = fifo_;
  const std::string fifo = fifo_;
  const int code = accel::testing::runInChildBounded([fifo] {
    const ReadOnlyFile file(fifo);
    const bool refused =
        file.opened() && !file.regular() && file.fd() == -1 && file.firstLine().empty();
    return refused && nonRegularFileKind(fifo) == "a FIFO (named pipe)" ? 0 : 1;
  });
  EXPECT_EQ(code, 0) << "1: taken for a regular file; 124: opening it blocked";
}

TEST_F(LibraryFileTest, TheFirstLineIsReadFromTheOpenedFile) {
  const std::string icd = dir_ + "/vendor.icd";
  std::ofstream(icd) << "/opt/vendor/libdriver.so \r\nsecond line\n";
  const ReadOnlyFile file(icd);
  ASSERT_TRUE(file.regular());
  EXPECT_GE(file.fd(), 0);
  EXPECT_EQ(file.firstLine(), "/opt/vendor/libdriver.so");
  EXPECT_EQ(nonRegularFileKind(icd), "");
  const ReadOnlyFile missing(dir_ + "/none.so");
  EXPECT_FALSE(missing.opened());
  EXPECT_EQ(std::string(missing.kind()), "");
  EXPECT_EQ(libraryFileProblem(dir_ + "/none.so"), "");
}

}  // namespace
}  // namespace accel::kit
