// Internal: a look at a plugin file's ELF headers before dlopen maps it.
//
// dlopen maps each loadable segment of a shared library straight from the
// file and then reads the mapped memory (the dynamic section, relocations).
// A file cut short after its headers (an interrupted copy, a full disk)
// still passes dlopen's own header checks, and the first read past the end
// of the file is a SIGBUS that kills the process. So the loader checks,
// before dlopen, that the ELF header is sane and that every part of the file
// the program headers point at lies inside the file.
//
// The same header says whether the file can be loaded here at all, and
// dlopen's own words for that are poor (a library for another machine is
// "cannot open shared object file: No such file or directory"), so an ELF
// file of another class, byte order or machine, or one that is not a shared
// library, is refused here too, with what it is and what this process is.
// A file that is not ELF at all is left to dlopen, which reads its first
// bytes with read() (safely) and says "invalid ELF header".
//
// The check and the dlopen are not atomic: a file truncated between the two
// still crashes. It guards against files damaged at rest, not against a
// writer racing the loader (autoload trusts only files no other user can write).
//
// Written by hand over <elf.h>: the core depends on nothing but the C++
// standard library, pthreads and dl.
//
// Thread-safety: thread-safe (reads the file, touches no shared state).
#pragma once

#include <string>

namespace accel::detail {

// Why the ELF file open as `fd` (a regular file, opened without blocking:
// kit::ReadOnlyFile), `file_size` bytes long, cannot be loaded
// safely into this process ("the file is truncated or damaged: ...", "it
// is built for another platform: ..."), or empty when its headers are sane,
// it suits this process and nothing they point at lies past its end, or
// when it is not an ELF file (dlopen reports that). Never throws except
// std::bad_alloc.
std::string elfImageProblem(int fd, long long file_size);

}  // namespace accel::detail
