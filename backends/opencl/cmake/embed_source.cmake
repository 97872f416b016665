# cmake -DINPUT=file.cl -DOUTPUT=file.h -DSYMBOL=name -P embed_source.cmake
#
# Writes OUTPUT, a header holding INPUT's bytes as
#   inline constexpr char SYMBOL[] = {..., 0};
# so that kernel sources live in their own files and are still part of the
# plugin (no file to find at run time).
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
# 16 bytes a line keeps the generated file readable in a debugger.
string(REGEX REPLACE "(('[^']+',){16})" "\\1\n  " bytes "${bytes}")
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${name} by embed_source.cmake; do not edit.\n"
  "#pragma once\n\n"
  "namespace accel::opencl::detail {\n\n"
  "inline constexpr char ${SYMBOL}[] = {\n  ${bytes}'\\0'};\n\n"
  "}  // namespace accel::opencl::detail\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
