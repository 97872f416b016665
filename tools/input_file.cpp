#include "input_file.h"

#include <filesystem>
#include <fstream>
#include <system_error>

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

}  // namespace

std::string readInputFile(const std::string& path, const InputFileOptions& options) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  ACCEL_CHECK(!std::filesystem::is_directory(status), InvalidArgument, options.command,
              ": '", path, "' is a directory; give ", options.expected);
  // A regular file's size is known: refuse before reading any of it.
  if (std::filesystem::is_regular_file(status)) {
    const auto size = std::filesystem::file_size(path, error);
    if (!error && size > options.max_bytes) tooLarge(path, options);
  }
  std::ifstream in(path, std::ios::binary);
  ACCEL_CHECK(in.is_open(), InvalidArgument, options.command, ": cannot open '", path,
              "'; give ", options.expected);
  std::string content;
  bool checked = false;
  while (in) {
    const std::size_t at = content.size();
    content.resize(at + kChunkBytes);
    in.read(content.data() + at, static_cast<std::streamsize>(kChunkBytes));
    content.resize(at + static_cast<std::size_t>(in.gcount()));
    if (content.size() > options.max_bytes) tooLarge(path, options);
    if (!checked && options.check_start && (content.size() >= kChunkBytes || !in)) {
      options.check_start(content);
      checked = true;
    }
  }
  ACCEL_CHECK(in.eof(), InvalidArgument, options.command, ": reading '", path,
              "' failed");
  return content;
}

}  // namespace accel::tool
