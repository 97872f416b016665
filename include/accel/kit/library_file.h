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
