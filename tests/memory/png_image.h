// A PNG file read into RGB pixels (libpng's simplified API), for tests that
// look at what a browser drew.
//
// Thread-safety: a value type; reading is reentrant.
#pragma once

#include <png.h>

#include <cstdint>
#include <string>
#include <vector>

namespace accel::memory::testing {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

struct PngImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;  // row after row, 3 bytes a pixel
  std::string error;              // set when the file could not be read

  [[nodiscard]] Rgb at(int x, int y) const {
    const std::size_t i = (static_cast<std::size_t>(y) * width + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

inline PngImage readPng(const std::string& path) {
  PngImage out;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0) {
    out.error = image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGB;
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  if (png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr) == 0) {
    out.error = image.message;
    out.rgb.clear();
    return out;
  }
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  return out;
}

}  // namespace accel::memory::testing
