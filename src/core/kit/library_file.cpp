#include "accel/kit/library_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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

ReadOnlyFile::ReadOnlyFile(const std::string& path) noexcept {
  do {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) {
    error_ = errno;
    return;
  }
  if (::fstat(fd_, &status_) != 0) {
    error_ = errno;
    ::close(fd_);
    fd_ = -1;
    status_ = {};
  }
}

ReadOnlyFile::~ReadOnlyFile() {
  if (fd_ >= 0) ::close(fd_);
}

const char* ReadOnlyFile::kind() const noexcept {
  return opened() && !regular() ? kindOf(status_.st_mode) : "";
}

std::string ReadOnlyFile::firstLine() const {
  if (!regular()) return {};
  std::string text(4096, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n =
        ::pread(fd_, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  if (const std::size_t end = text.find('\n'); end != std::string::npos) text.resize(end);
  while (!text.empty() &&
         (text.back() == '\r' || text.back() == ' ' || text.back() == '\t'))
    text.pop_back();
  return text;
}

std::string nonRegularFileKind(const std::string& path) {
  return ReadOnlyFile(path).kind();
}

std::string libraryFileProblem(const std::string& path) {
  const ReadOnlyFile file(path);
  if (!file.opened()) return {};  // dlopen says "not found" (or why it cannot read it)
  if (!file.regular()) {
    return detail::concat(path, " is ", file.kind(),
                          ", not a regular file; a shared library is a file (opening "
                          "anything else could block forever)");
  }
  std::string problem = detail::elfImageProblem(file.fd(), file.status().st_size);
  if (problem.empty()) return {};
  return detail::concat(path, ": ", problem);
}

}  // namespace accel::kit
