#include "accel/kit/library_file.h"

#include <sys/stat.h>

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

std::string libraryFileProblem(const std::string& path) {
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
