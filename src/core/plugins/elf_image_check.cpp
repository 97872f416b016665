// The ELF header and program-header checks behind elfImageProblem (see the
// header for why).
#include "plugins/elf_image_check.h"

#include <elf.h>
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

constexpr unsigned char kNativeClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char kNativeData = ELFDATA2LSB;
#else
constexpr unsigned char kNativeData = ELFDATA2MSB;
#endif
// The e_machine this process was built for; EM_NONE where it is not listed
// here, and then the machine is left to dlopen.
#if defined(__x86_64__)
constexpr unsigned kNativeMachine = EM_X86_64;
#elif defined(__i386__)
constexpr unsigned kNativeMachine = EM_386;
#elif defined(__aarch64__)
constexpr unsigned kNativeMachine = EM_AARCH64;
#elif defined(__arm__)
constexpr unsigned kNativeMachine = EM_ARM;
#elif defined(__powerpc64__)
constexpr unsigned kNativeMachine = EM_PPC64;
#elif defined(__riscv)
constexpr unsigned kNativeMachine = EM_RISCV;
#elif defined(__s390x__)
constexpr unsigned kNativeMachine = EM_S390;
#else
constexpr unsigned kNativeMachine = EM_NONE;
#endif

std::string machineName(unsigned machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86-64";
    case EM_386:
      return "x86 (32-bit)";
    case EM_AARCH64:
      return "AArch64";
    case EM_ARM:
      return "ARM (32-bit)";
    case EM_PPC64:
      return "POWER (ppc64)";
    case EM_PPC:
      return "PowerPC (32-bit)";
    case EM_RISCV:
      return "RISC-V";
    case EM_S390:
      return "s390";
    default:
      return concat("ELF machine ", machine);
  }
}

std::string className(unsigned char elf_class) {
  return elf_class == ELFCLASS64   ? "64-bit"
         : elf_class == ELFCLASS32 ? "32-bit"
                                   : concat("class ", unsigned{elf_class});
}

std::string dataName(unsigned char data) {
  return data == ELFDATA2LSB   ? "little-endian"
         : data == ELFDATA2MSB ? "big-endian"
                               : concat("byte order ", unsigned{data});
}

std::string typeName(unsigned type) {
  switch (type) {
    case ET_EXEC:
      return "an executable (not position-independent)";
    case ET_REL:
      return "an object file (.o)";
    case ET_CORE:
      return "a core dump";
    default:
      return concat("of ELF type ", type);
  }
}

std::string truncated(long long file_size, const std::string& what,
                      unsigned long long needed) {
  return concat("the file is truncated or damaged: ", what, " reaches byte ", needed,
                " but the file has ", file_size,
                " bytes; opening it would crash the process (SIGBUS), so it is not "
                "opened (copy or rebuild the plugin again)");
}

std::string foreign(const std::string& file_is, const std::string& process_is) {
  return concat("it is built for another platform (the file: ", file_is,
                "; this process: ", process_is,
                "); use a build of the plugin for this platform");
}

std::string damaged(const std::string& what) {
  return concat("the file is damaged: its ELF header ", what,
                ", which no linker writes (copy or rebuild the plugin again)");
}

// Where [offset, offset + size) ends; the largest value when the sum
// overflows (past the end of any file all the same).
unsigned long long endOf(unsigned long long offset, unsigned long long size) {
  return size > ~0ULL - offset ? ~0ULL : offset + size;
}

// The header fields that say whether the file suits this process.
std::string headerProblem(const ElfW(Ehdr) & header) {
  if (header.e_type != ET_DYN) {
    return concat("it is ", typeName(header.e_type),
                  ", not a shared library; a plugin is linked with -shared");
  }
  if (kNativeMachine != EM_NONE && header.e_machine != kNativeMachine) {
    return foreign(machineName(header.e_machine), machineName(kNativeMachine));
  }
  if (header.e_version != EV_CURRENT) {
    return damaged(concat("says ELF version ", header.e_version));
  }
  if (header.e_phentsize != sizeof(ElfW(Phdr))) {
    return damaged(concat("gives program headers of ", header.e_phentsize,
                          " bytes instead of ", sizeof(ElfW(Phdr))));
  }
  if (header.e_phnum == 0) return damaged("lists no program headers");
  return {};
}

}  // namespace

std::string elfImageProblem(int fd, long long file_size) {
  if (fd < 0) return {};  // dlopen reports why it cannot be read

  unsigned char ident[EI_NIDENT] = {};
  if (file_size < EI_NIDENT || !readAt(fd, ident, sizeof ident, 0) ||
      std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return {};  // not ELF: dlopen reads the start with read() and says so
  }
  if (ident[EI_CLASS] != kNativeClass) {
    return foreign(className(ident[EI_CLASS]), className(kNativeClass));
  }
  if (ident[EI_DATA] != kNativeData) {
    return foreign(dataName(ident[EI_DATA]), dataName(kNativeData));
  }
  if (ident[EI_VERSION] != EV_CURRENT) {
    return damaged(concat("says ELF version ", unsigned{ident[EI_VERSION]}));
  }

  ElfW(Ehdr) header{};
  if (file_size < static_cast<long long>(sizeof header)) {
    return truncated(file_size, "its ELF header", sizeof header);
  }
  if (!readAt(fd, &header, sizeof header, 0)) return {};
  if (std::string problem = headerProblem(header); !problem.empty()) return problem;

  const unsigned long long table_size =
      static_cast<unsigned long long>(header.e_phnum) * sizeof(ElfW(Phdr));
  const auto size = static_cast<unsigned long long>(file_size);
  if (unsigned long long end = endOf(header.e_phoff, table_size); end > size) {
    return truncated(file_size, "its program header table", end);
  }
  std::vector<ElfW(Phdr)> segments(header.e_phnum);
  if (!readAt(fd, segments.data(), table_size, static_cast<off_t>(header.e_phoff))) {
    return {};
  }
  bool loadable = false;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const ElfW(Phdr)& segment = segments[i];
    loadable = loadable || segment.p_type == PT_LOAD;
    if (segment.p_filesz == 0) continue;
    if (unsigned long long end = endOf(segment.p_offset, segment.p_filesz); end > size) {
      const char* kind = segment.p_type == PT_LOAD      ? "loadable segment"
                         : segment.p_type == PT_DYNAMIC ? "dynamic segment"
                                                        : "segment";
      return truncated(file_size, concat("its ", kind, " (program header ", i, ")"), end);
    }
  }
  if (!loadable) return damaged("lists no loadable segment");
  return {};
}

}  // namespace accel::detail
