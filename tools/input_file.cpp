#include "input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "accel/error.h"
#include "byte_size.h"

namespace accel::tool {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{64} << 10;

[[noreturn]] void tooLarge(const std::string& path, const InputFileOptions& options) {
  throw InvalidArgument(accel::detail::concat(
      options.command, ": '", path, "' is larger than the input limit of ",
      formatByteSize(options.max_bytes), "; raise it with --max-input-size SIZE (e.g. ",
      formatByteSize(options.max_bytes * 4), ") if the file is really ",
      options.expected));
}

[[noreturn]] void systemError(const std::string& path, const InputFileOptions& options,
                              std::string_view what, int error) {
  throw InvalidArgument(accel::detail::concat(options.command, ": ", what, " '", path,
                                              "': ", std::strerror(error), "; give ",
                                              options.expected));
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string readInputFile(const std::string& path, const InputFileOptions& options) {
  // O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise, for
  // ever when there is none. What the file is shows only once it is open.
  const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (file.get() < 0) {
    const int error = errno;
    // A socket cannot be opened at all (ENXIO, "No such device or address",
    // which does not say what is wrong): name what it is instead.
    struct stat status {};
    ACCEL_CHECK(::stat(path.c_str(), &status) != 0 || !S_ISSOCK(status.st_mode),
                InvalidArgument, options.command, ": '", path,
                "' is a socket, not a file; give ", options.expected);
    systemError(path, options, "cannot open", error);
  }
  struct stat status {};
  if (::fstat(file.get(), &status) != 0) systemError(path, options, "cannot stat", errno);
  ACCEL_CHECK(!S_ISDIR(status.st_mode), InvalidArgument, options.command, ": '", path,
              "' is a directory; give ", options.expected);
  const bool pipe = S_ISFIFO(status.st_mode);
  ACCEL_CHECK(S_ISREG(status.st_mode) || pipe || S_ISCHR(status.st_mode), InvalidArgument,
              options.command, ": '", path,
              "' is not a regular file, a pipe or a character device (a socket or "
              "a block device); give ",
              options.expected);
  // A regular file's size is known: refuse before reading any of it.
  if (S_ISREG(status.st_mode) &&
      static_cast<std::uint64_t>(status.st_size) > options.max_bytes)
    tooLarge(path, options);
  // Reads may wait from here on, for a writer's data: a pipe without writers
  // reads as its end at once.
  const int flags = ::fcntl(file.get(), F_GETFL);
  if (flags < 0 || ::fcntl(file.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    systemError(path, options, "cannot read", errno);
  std::string content;
  bool checked = false;
  while (true) {
    const std::size_t at = content.size();
    content.resize(at + kChunkBytes);
    const ssize_t got = ::read(file.get(), content.data() + at, kChunkBytes);
    const int error = errno;
    content.resize(at + static_cast<std::size_t>(std::max<ssize_t>(got, 0)));
    if (got < 0 && error == EINTR) continue;
    if (got < 0) systemError(path, options, "reading", error);
    if (got == 0) break;
    if (content.size() > options.max_bytes) tooLarge(path, options);
    if (!checked && options.check_start && content.size() >= kChunkBytes) {
      options.check_start(content);
      checked = true;
    }
  }
  ACCEL_CHECK(!pipe || !content.empty(), InvalidArgument, options.command, ": '", path,
              "' is a pipe with nothing written to it (no writer, or one that closed "
              "it at once); give ",
              options.expected);
  if (!checked && options.check_start) options.check_start(content);
  return content;
}

}  // namespace accel::tool
