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
// Thread-safety: thread-safe (reads the file, touches no shared state).
#pragma once

#include <string>

#include "accel/export.h"

namespace accel::kit {

// Why the file at `path` must not be dlopened ("/x/libOpenCL.so is a FIFO
// (named pipe), not a regular file; ...", "/x/libdrv.so: the file is
// truncated or damaged: ..."), or empty when it looks loadable or does not
// exist (dlopen then reports "not found" in its own words). `path` should
// contain a '/': a bare soname is looked up by dlopen and not checked here.
// Never throws except std::bad_alloc.
ACCEL_API std::string libraryFileProblem(const std::string& path);

// The same words for a file the caller only reads (a driver's configuration
// file): empty for a regular file or none at all, else what it is ("a FIFO
// (named pipe)"). Never throws except std::bad_alloc.
ACCEL_API std::string nonRegularFileKind(const std::string& path);

}  // namespace accel::kit
