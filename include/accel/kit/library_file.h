// libraryFileProblem: whether a shared library file is safe to hand to
// dlopen, for backends that open a driver library themselves.
//
// dlopen of something that is not a regular file can block for good (a FIFO
// with no writer), and dlopen of an ELF file cut short after its headers (an
// interrupted copy, a full disk) kills the process with SIGBUS when the
// loader reads past the end of the mapping. The plugin loader checks its
// plugins this way (src/core/plugins/elf_image_check.h); a backend checks
// its driver library, or a library a driver's configuration names, with the
// same rules before anything opens it.
//
// Every check opens the path once, without blocking (ReadOnlyFile), and
// looks at and reads the open file: a path swapped for a FIFO between a
// stat() and an open() could otherwise block the open for good.
//
// Thread-safety: thread-safe (reads the file, touches no shared state);
// one ReadOnlyFile is used by one thread at a time.
#pragma once

#include <sys/stat.h>

#include <string>

#include "accel/export.h"

namespace accel::kit {

// The file at a path, opened for reading with O_RDONLY | O_NONBLOCK |
// O_CLOEXEC (a FIFO with no writer opens at once instead of blocking the
// open) and looked at with fstat() of the descriptor, so that what is read
// is the file that was looked at. Only a regular file may be read. The
// descriptor is closed by the destructor. Never throws.
class ACCEL_API ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::string& path) noexcept;
  ~ReadOnlyFile();
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  // Whether the path could be opened; else error() is open()'s errno.
  [[nodiscard]] bool opened() const noexcept { return fd_ >= 0; }
  [[nodiscard]] int error() const noexcept { return error_; }
  [[nodiscard]] bool regular() const noexcept {
    return opened() && S_ISREG(status_.st_mode);
  }
  // What an opened file that is not a regular file is ("a FIFO (named
  // pipe)", "a directory", ...); empty for a regular file or none.
  [[nodiscard]] const char* kind() const noexcept;
  // fstat() of the descriptor (zeroes when not opened).
  [[nodiscard]] const struct stat& status() const noexcept { return status_; }
  // The descriptor of a regular file, -1 otherwise (not to be closed).
  [[nodiscard]] int fd() const noexcept { return regular() ? fd_ : -1; }
  // The first line of a regular file, without its line end and trailing
  // blanks, read from the descriptor (at most 4096 bytes); empty for any
  // other file. Throws only std::bad_alloc.
  [[nodiscard]] std::string firstLine() const;

 private:
  int fd_ = -1;
  int error_ = 0;
  struct stat status_ {};
};

// Why the file at `path` must not be dlopened ("/x/libOpenCL.so is a FIFO
// (named pipe), not a regular file; ...", "/x/libdrv.so: the file is
// truncated or damaged: ..."), or empty when it looks loadable or does not
// exist (dlopen then reports "not found" in its own words). A bare name
// (no '/', as libOpenCL.so.1 or an ICD file's libpocl.so.2) is checked
// where dlopen finds it first: libraryFileDlopenFinds below.
// Never throws except std::bad_alloc.
ACCEL_API std::string libraryFileProblem(const std::string& path);

// The file dlopen(`name`) opens: `name` itself when it contains a '/';
// else the first one of that name in LD_LIBRARY_PATH's directories (unless
// the process runs set-user-ID, where the dynamic linker ignores it), then
// in the system's library directories (/lib/<multiarch>, /usr/lib/<multiarch>,
// /lib64, /usr/lib64, /lib, /usr/lib, /usr/local/lib). Directories the
// dynamic linker knows only from /etc/ld.so.conf, or a caller's RUNPATH, are
// not searched. Empty when none is found. Never throws except std::bad_alloc.
ACCEL_API std::string libraryFileDlopenFinds(const std::string& name);

// The same words for a file the caller only reads (a driver's configuration
// file): empty for a regular file or none at all, else what it is ("a FIFO
// (named pipe)"). Never throws except std::bad_alloc.
ACCEL_API std::string nonRegularFileKind(const std::string& path);

}  // namespace accel::kit
