/* The layout of the plugin ABI as one build of layout/abi_layout.c saw it:
 * the offset and size of every struct member, and the value of every
 * constant, by name. Compiled once per frozen header and once against the
 * current one, so that plugin_abi_layout_test.cpp can check that each
 * version only ever appended to the last. Plain C, for C and C++. */
#ifndef ABI_LAYOUT_H
#define ABI_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct abi_layout_member {
  const char* name; /* "accel_graph_fns.replay" */
  size_t offset;
  size_t size;
} abi_layout_member;

typedef struct abi_layout_constant {
  const char* name; /* "ACCEL_ERROR_VERSION" */
  uint64_t value;
} abi_layout_constant;

typedef struct abi_layout {
  uint32_t version; /* ACCEL_PLUGIN_ABI_CURRENT of the headers */
  const abi_layout_member* members;
  size_t member_count;
  const abi_layout_constant* constants;
  size_t constant_count;
  const char* entry_name; /* ACCEL_PLUGIN_ENTRY_NAME */
} abi_layout;

extern const abi_layout abi_layout_v1_0;
extern const abi_layout abi_layout_v1_1;
extern const abi_layout abi_layout_v1_2;
extern const abi_layout abi_layout_v1_3;
extern const abi_layout abi_layout_v1_4;
extern const abi_layout abi_layout_current;

#ifdef __cplusplus
}
#endif

#endif /* ABI_LAYOUT_H */
