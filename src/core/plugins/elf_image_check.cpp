// The ELF program-header check behind elfImageProblem (see the header for why).
#include "plugins/elf_image_check.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "accel/error.h"

namespace accel::detail {
namespace {

// Reads exactly `size` bytes at `offset`; false on a short read or error.
bool readAt(int fd, void* out, std::size_t size, off_t offset) {
  auto* bytes = static_cast<char*>(out);
  while (size > 0) {
    ssize_t n = ::pread(fd, bytes, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
  return true;
}

// Closes the descriptor on every way out.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

constexpr unsigned char kNativeClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char kNativeData = ELFDATA2LSB;
#else
constexpr unsigned char kNativeData = ELFDATA2MSB;
#endif

std::string truncated(long long file_size, const std::string& what,
                      unsigned long long needed) {
  return concat("the file is truncated or damaged: ", what, " reaches byte ", needed,
                " but the file has ", file_size,
                " bytes; opening it would crash the process (SIGBUS), so it is not "
                "opened (copy or rebuild the plugin again)");
}

}  // namespace

std::string elfImageProblem(const std::string& path, long long file_size) {
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return {};  // dlopen reports why it cannot be read

  ElfW(Ehdr) header{};
  if (file_size < static_cast<long long>(sizeof header) ||
      !readAt(file.fd, &header, sizeof header, 0)) {
    return {};  // too short for an ELF header: dlopen reads it and says so
  }
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != kNativeClass ||
      header.e_ident[EI_DATA] != kNativeData ||
      header.e_phentsize != sizeof(ElfW(Phdr)) || header.e_phnum == 0 ||
      header.e_phnum == PN_XNUM) {
    return {};  // not a native shared library; dlopen names the problem
  }

  const unsigned long long table_end =
      static_cast<unsigned long long>(header.e_phoff) +
      static_cast<unsigned long long>(header.e_phnum) * sizeof(ElfW(Phdr));
  if (table_end > static_cast<unsigned long long>(file_size)) {
    return truncated(file_size, "its program header table", table_end);
  }
  std::vector<ElfW(Phdr)> segments(header.e_phnum);
  if (!readAt(file.fd, segments.data(), segments.size() * sizeof(ElfW(Phdr)),
              static_cast<off_t>(header.e_phoff))) {
    return {};
  }
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const ElfW(Phdr)& segment = segments[i];
    if (segment.p_filesz == 0) continue;
    const unsigned long long end = static_cast<unsigned long long>(segment.p_offset) +
                                   static_cast<unsigned long long>(segment.p_filesz);
    // An overflowing sum wraps below p_offset: past the end all the same.
    if (end < segment.p_offset || end > static_cast<unsigned long long>(file_size)) {
      const char* kind = segment.p_type == PT_LOAD      ? "loadable segment"
                         : segment.p_type == PT_DYNAMIC ? "dynamic segment"
                                                        : "segment";
      return truncated(file_size, concat("its ", kind, " (program header ", i, ")"),
                       end < segment.p_offset ? ~0ULL : end);
    }
  }
  return {};
}

}  // namespace accel::detail
