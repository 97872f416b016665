// Internal: a look at a plugin file's ELF headers before dlopen maps it.
//
// dlopen maps each loadable segment of a shared library straight from the
// file and then reads the mapped memory (the dynamic section, relocations).
// A file cut short after its headers (an interrupted copy, a full disk)
// still passes dlopen's own header checks, and the first read past the end
// of the file is a SIGBUS that kills the process. So the loader checks,
// before dlopen, that every part of the file the program headers point at
// lies inside the file.
//
// Only what leads to a crash is judged here: a file that is not ELF, or ELF
// for another machine or class, is left to dlopen, whose own message names
// the problem (and which reads those headers with read(), safely).
//
// The check and the dlopen are not atomic: a file truncated between the two
// still crashes. It guards against files damaged at rest, not against a
// writer racing the loader (autoload trusts only files no other user can write).
//
// Thread-safety: thread-safe (reads the file, touches no shared state).
#pragma once

#include <string>

namespace accel::detail {

// Why the ELF file at `path`, `file_size` bytes long, cannot be mapped
// safely ("truncated: ..."), or empty when nothing the program headers
// point at lies past its end, or when the file is not a native ELF file
// (dlopen reports that). Never throws except std::bad_alloc.
std::string elfImageProblem(const std::string& path, long long file_size);

}  // namespace accel::detail
