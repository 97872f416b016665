/* alloc_shim.c: an LD_PRELOAD library that records PyTorch's CPU tensor
 * allocations as an `accel memreplay` trace (docs/memory.md).
 *
 * c10's CPU allocator takes every tensor's storage from posix_memalign with
 * a 64-byte alignment and gives it back with free(). This library wraps
 * those two calls: while recording is on (trace_start), each posix_memalign
 * of that alignment becomes "alloc ID SIZE", and the free of such a block
 * "free ID". Other allocations (Python objects, the libraries' own
 * bookkeeping) go through untouched: they are not tensor memory and would
 * not reach a device allocator.
 *
 * It must not allocate inside the calls it wraps, so the live blocks sit in
 * a fixed open-addressed table and the text in a fixed buffer that is
 * written out with write(2). A spin lock orders the events of PyTorch's
 * intra-op threads.
 *
 * Built and loaded by record_training_trace.py; not part of the library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { kTensorAlignment = 64, kSlots = 1 << 20, kBufferBytes = 1 << 16 };

typedef int (*memalign_fn)(void**, size_t, size_t);
typedef void (*free_fn)(void*);

static atomic_flag lock = ATOMIC_FLAG_INIT;
static atomic_int recording;
static int out_fd = -1;
static uintptr_t keys[kSlots];  /* live traced blocks: address ... */
static unsigned values[kSlots]; /* ... and their trace id */
static unsigned next_id;
static char buffer[kBufferBytes];
static size_t used;

static void acquire(void) {
  while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire)) {
  }
}
static void release(void) { atomic_flag_clear_explicit(&lock, memory_order_release); }

static void flush(void) {
  size_t done = 0;
  while (done < used) {
    ssize_t n = write(out_fd, buffer + done, used - done);
    if (n <= 0) break;
    done += (size_t)n;
  }
  used = 0;
}

static void emit(const char* line) {
  size_t n = strlen(line);
  if (used + n > sizeof buffer) flush();
  memcpy(buffer + used, line, n);
  used += n;
}

static size_t slotOf(uintptr_t key) {
  return (size_t)((key >> 6) * 0x9E3779B97F4A7C15ull >> 44) & (kSlots - 1);
}

/* Linear probing with backward-shift deletion: no tombstones. */
static void put(uintptr_t key, unsigned id) {
  size_t i = slotOf(key);
  while (keys[i] != 0) i = (i + 1) & (kSlots - 1);
  keys[i] = key;
  values[i] = id;
}

static int take(uintptr_t key, unsigned* id) {
  size_t i = slotOf(key);
  while (keys[i] != key) {
    if (keys[i] == 0) return 0;
    i = (i + 1) & (kSlots - 1);
  }
  *id = values[i];
  keys[i] = 0;
  for (size_t j = (i + 1) & (kSlots - 1); keys[j] != 0; j = (j + 1) & (kSlots - 1)) {
    size_t home = slotOf(keys[j]);
    /* Move j back to the hole i unless its home lies in (i, j]. */
    int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      keys[i] = keys[j];
      values[i] = values[j];
      keys[j] = 0;
      i = j;
    }
  }
  return 1;
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  static memalign_fn real;
  if (real == NULL) real = (memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
  int result = real(out, alignment, size);
  if (result == 0 && alignment == kTensorAlignment &&
      atomic_load_explicit(&recording, memory_order_relaxed)) {
    char line[64];
    acquire();
    unsigned id = next_id++;
    put((uintptr_t)*out, id);
    snprintf(line, sizeof line, "alloc %u %zu\n", id, size);
    emit(line);
    release();
  }
  return result;
}

void free(void* ptr) {
  static free_fn real;
  if (real == NULL) real = (free_fn)dlsym(RTLD_NEXT, "free");
  if (ptr != NULL && atomic_load_explicit(&recording, memory_order_relaxed)) {
    unsigned id;
    acquire();
    if (take((uintptr_t)ptr, &id)) {
      char line[32];
      snprintf(line, sizeof line, "free %u\n", id);
      emit(line);
    }
    release();
  }
  real(ptr);
}

/* Starts recording into `path` (appending after what is there). */
int trace_start(const char* path) {
  out_fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (out_fd < 0) return -1;
  atomic_store(&recording, 1);
  return 0;
}

/* Stops recording; blocks still live stay unmatched (no free line). Returns
 * the number of allocations recorded. */
unsigned trace_stop(void) {
  atomic_store(&recording, 0);
  acquire();
  flush();
  close(out_fd);
  out_fd = -1;
  release();
  return next_id;
}
