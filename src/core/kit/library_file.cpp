#include "accel/kit/library_file.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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
  // LD_LIBRARY_PATH first, as it is (an empty entry there is the current
  // directory), then the system's directories.
  std::string directories;
  const char* configured = std::getenv("LD_LIBRARY_PATH");
  if (configured != nullptr && *configured != '\0' && ::getauxval(AT_SECURE) == 0)
    directories = detail::concat(configured, ":");
  if (kMultiarch != nullptr) {
    directories += detail::concat("/lib/", kMultiarch, ":/usr/lib/", kMultiarch, ":");
  }
  directories += "/lib64:/usr/lib64:/lib:/usr/lib:/usr/local/lib";
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
