#include "accel/kit/library_file.h"

#include <sys/auxv.h>
#include <sys/stat.h>

#include <cstdlib>

#include "accel/error.h"
#include "plugins/elf_image_check.h"

namespace accel::kit {
namespace {

const char* kindOf(mode_t mode) noexcept {
  return S_ISFIFO(mode)   ? "a FIFO (named pipe)"
         : S_ISSOCK(mode) ? "a socket"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISDIR(mode)  ? "a directory"
                          : "not a regular file";
}

}  // namespace

std::string nonRegularFileKind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
  return kindOf(st.st_mode);
}

std::string libraryFileDlopenFinds(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
    // The multiarch directory of this build, where Debian and Ubuntu keep
    // their libraries (and drivers such as libpocl.so.2).
#if defined(__x86_64__)
  constexpr const char* kMultiarch = "x86_64-linux-gnu";
#elif defined(__aarch64__)
  constexpr const char* kMultiarch = "aarch64-linux-gnu";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  constexpr const char* kMultiarch = "powerpc64le-linux-gnu";
#else
  constexpr const char* kMultiarch = nullptr;
#endif
  std::string directories;
  const char* configured = std::getenv("LD_LIBRARY_PATH");
  if (configured != nullptr && ::getauxval(AT_SECURE) == 0) directories = configured;
  if (kMultiarch != nullptr) {
    directories += detail::concat(":/lib/", kMultiarch, ":/usr/lib/", kMultiarch);
  }
  directories += ":/lib64:/usr/lib64:/lib:/usr/lib:/usr/local/lib";
  std::size_t start = 0;
  while (start <= directories.size()) {
    std::size_t end = directories.find(':', start);
    if (end == std::string::npos) end = directories.size();
    // An empty entry of LD_LIBRARY_PATH is the current directory.
    std::string directory = directories.substr(start, end - start);
    std::string candidate =
        (directory.empty() ? std::string(".") : directory) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

std::string libraryFileProblem(const std::string& name) {
  const std::string path = libraryFileDlopenFinds(name);
  if (path.empty()) return {};  // dlopen says "not found"
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};  // dlopen says "not found"
  if (!S_ISREG(st.st_mode)) {
    return detail::concat(path, " is ", kindOf(st.st_mode),
                          ", not a regular file; a shared library is a file (opening "
                          "anything else could block forever)");
  }
  std::string problem = detail::elfImageProblem(path, st.st_size);
  if (problem.empty()) return {};
  return detail::concat(path, ": ", problem);
}

}  // namespace accel::kit
