// A command's input file read whole, within a size limit: `accel memviz` and
// `accel memreplay` hold their input in memory, so an input that never ends
// (/dev/zero, a pipe left open) or a mistaken multi-gigabyte file must stop
// with a message instead of exhausting memory. The limit is an option
// (--max-input-size) because real snapshots can be large.
//
// Thread-safety: reentrant; reads only the named file.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace accel::tool {

// The default of --max-input-size: a recorded 100,000-event snapshot with
// stacks is a few hundred MiB; the parsed form takes several times more.
inline constexpr std::size_t kDefaultMaxInputBytes = std::size_t{1} << 30;

struct InputFileOptions {
  std::string_view command;   // "memviz": the messages' prefix
  std::string_view expected;  // what the file should be, for messages
  std::size_t max_bytes = kDefaultMaxInputBytes;
  // Called once with the first bytes read (up to 64 KiB, fewer for a shorter
  // file) so that a command can refuse a file of the wrong kind before
  // reading all of it; throws to refuse.
  std::function<void(std::string_view first_bytes)> check_start;
};

// The file's content: a regular file, a pipe or a character device
// (/dev/zero stops at the limit). Opening never waits: a FIFO is opened
// without waiting for a writer, and one without a writer reads as empty and
// is refused. Throws InvalidArgument when the file cannot be opened or read,
// is a directory, a socket or a block device, is a pipe nothing was written
// to, or is longer than max_bytes (naming the limit and the option that
// raises it).
[[nodiscard]] std::string readInputFile(const std::string& path,
                                        const InputFileOptions& options);

}  // namespace accel::tool
