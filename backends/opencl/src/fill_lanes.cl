// The random fills of one 32-bit word per element (bits32, uniform float,
// Bernoulli), in OpenCL C; compiled after fill.cl, whose header says how a
// kernel keeps the host fill's bits (constants prepended, contraction off,
// correctly rounded division and sqrt).
//
// Work-item t draws 16 Philox blocks, offset / 4 + 16t .. + 15, whose 64
// words fill elements 64t - offset % 4 .. + 63. Where all 64 lie inside the
// output it takes the vector path below; the work-items at the two ends
// take a scalar one that stores word by word where the output has room.

// ---- The vector path ----
//
// Vectorised by hand in OpenCL vector types: 16 blocks side by side in
// uint16 lanes (one AVX-512 register on pocl, two AVX2 ones), transposed
// with shuffles into 64 consecutive outputs, stored as four 16-wide vectors
// (the host fill's AVX-512 path, random_fill_avx512.cpp, in OpenCL C). pocl's
// own vectoriser (LLVM's loop vectoriser over a work-group's work-items)
// does not get there from a scalar kernel of one block per work-item: its
// four adjacent stores are merged by the SLP vectoriser into one 4-wide
// store before the work-item loop exists, and a loop holding a vector store
// is not vectorised; with the stores kept apart it vectorises them as
// scatters (vscatterqps), 2.5 GB/s here against 9 GB/s for the host fill.
// POCL_VECTORIZER_REMARKS=1 shows both. Helpers and bodies are inlined by
// force (ACCEL_INLINE, fill.cl).
#define ACCEL_LANES 16  // Philox blocks per work-item

// Vectors that may sit at any element boundary: an output starts wherever
// the caller's pointer and the stream's offset put it. (vstore16 does the
// same, but pocl lowers it to four 128-bit stores.)
typedef uint16 __attribute__((aligned(4))) unaligned_uint16;
typedef float16 __attribute__((aligned(4))) unaligned_float16;
typedef uchar16 __attribute__((aligned(1))) unaligned_uchar16;

// hi:lo = a * m per 32-bit lane, written so that it compiles to the host
// fill's instructions (random_fill_avx512.cpp): two 32x32->64 multiplies of
// the even and odd lanes (vpmuludq) and lane-wise masks, no cross-lane
// packing (a ulong16 product and convert_uint16 cost twice as much here).
ACCEL_INLINE void mul_hi_lo(uint16 a, uint m, uint16* hi, uint16* lo) {
  const ulong8 pairs = as_ulong8(a);
  const ulong8 even = (pairs & 0xFFFFFFFFul) * m;
  const ulong8 odd = (pairs >> 32) * m;
  *lo = as_uint16((even & 0xFFFFFFFFul) | (odd << 32));
  *hi = as_uint16((even >> 32) | (odd & 0xFFFFFFFF00000000ul));
}

// The 16 Philox4x32-10 blocks block0 + 0 .. block0 + 15 under key `seed`,
// lane 4L + e holding block 4e + L (as the host fill's lanes, so that the
// transpose in stream_order stays within 128-bit lanes); word j in *wj.
ACCEL_INLINE void philox_lanes(ulong seed, ulong block0, uint16* w0, uint16* w1,
                               uint16* w2, uint16* w3) {
  const ulong16 counter =
      (ulong16)(block0) + (ulong16)(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  uint16 c0 = convert_uint16(counter), c1 = convert_uint16(counter >> 32);
  uint16 c2 = (uint16)(0), c3 = (uint16)(0);
  uint k0 = (uint)seed, k1 = (uint)(seed >> 32);
#pragma unroll
  for (int round = 0; round < ACCEL_PHILOX_ROUNDS; ++round) {
    uint16 high0, low0, high1, low1;
    mul_hi_lo(c0, ACCEL_PHILOX_M0, &high0, &low0);
    mul_hi_lo(c2, ACCEL_PHILOX_M1, &high1, &low1);
    c0 = high1 ^ c1 ^ k0;
    c1 = low1;
    c2 = high0 ^ c3 ^ k1;
    c3 = low0;
    k0 += ACCEL_PHILOX_W0;
    k1 += ACCEL_PHILOX_W1;
  }
  *w0 = c0;
  *w1 = c1;
  *w2 = c2;
  *w3 = c3;
}

// The 64 words of philox_lanes in stream order (block 0 words 0..3, block
// 1 ...): stream word 16k + n in lane n of *qk. A 4x4 transpose within each
// 128-bit lane (the masks of unpacklo/unpackhi). With clang (pocl's
// compiler, and most vendors') it is written with __builtin_shufflevector:
// pocl lowers shuffle2 element by element, which costs here as much as the
// Philox rounds.
#if defined(__clang__)
#define ACCEL_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define ACCEL_SHUFFLE(a, b, ...) shuffle2(a, b, (uint16)(__VA_ARGS__))
#endif
ACCEL_INLINE void stream_order(uint16 w0, uint16 w1, uint16 w2, uint16 w3, uint16* q0,
                               uint16* q1, uint16* q2, uint16* q3) {
#define ACCEL_LOW32 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29
#define ACCEL_HIGH32 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31
#define ACCEL_LOW64 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define ACCEL_HIGH64 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
  const uint16 t0 = ACCEL_SHUFFLE(w0, w1, ACCEL_LOW32);
  const uint16 t1 = ACCEL_SHUFFLE(w0, w1, ACCEL_HIGH32);
  const uint16 t2 = ACCEL_SHUFFLE(w2, w3, ACCEL_LOW32);
  const uint16 t3 = ACCEL_SHUFFLE(w2, w3, ACCEL_HIGH32);
  *q0 = ACCEL_SHUFFLE(t0, t2, ACCEL_LOW64);
  *q1 = ACCEL_SHUFFLE(t0, t2, ACCEL_HIGH64);
  *q2 = ACCEL_SHUFFLE(t1, t3, ACCEL_LOW64);
  *q3 = ACCEL_SHUFFLE(t1, t3, ACCEL_HIGH64);
}

// The element that work-item t's first word fills (negative for the
// work-item the fill starts inside of).
ACCEL_INLINE long first_element(ulong t, ulong offset) {
  return (long)(4 * ACCEL_LANES * t) - (long)(offset % 4);
}

// Work-item t's 64 words in stream order.
ACCEL_INLINE void lane_words(ulong seed, ulong offset, ulong t, uint16* q0, uint16* q1,
                             uint16* q2, uint16* q3) {
  uint16 w0, w1, w2, w3;
  philox_lanes(seed, offset / 4 + ACCEL_LANES * t, &w0, &w1, &w2, &w3);
  stream_order(w0, w1, w2, w3, q0, q1, q2, q3);
}

// Whether elements first .. first + 63 all lie in [0, count): the
// vectorised path; the work-items at the ends take the scalar one.
ACCEL_INLINE bool whole(long first, ulong count) {
  return first >= 0 && (ulong)first + 4 * ACCEL_LANES <= count;
}

// The scalar path: block `block` in w[0..3] (the work-items at the ends,
// which store word by word where the output has room).
void philox_block(ulong seed, ulong block, uint* w) {
  uint c0 = (uint)block, c1 = (uint)(block >> 32), c2 = 0, c3 = 0;
  uint k0 = (uint)seed, k1 = (uint)(seed >> 32);
  for (int round = 0; round < ACCEL_PHILOX_ROUNDS; ++round) {
    const ulong product0 = (ulong)ACCEL_PHILOX_M0 * c0;
    const ulong product1 = (ulong)ACCEL_PHILOX_M1 * c2;
    c0 = (uint)(product1 >> 32) ^ c1 ^ k0;
    c1 = (uint)product1;
    c2 = (uint)(product0 >> 32) ^ c3 ^ k1;
    c3 = (uint)product0;
    k0 += ACCEL_PHILOX_W0;
    k1 += ACCEL_PHILOX_W1;
  }
  w[0] = c0;
  w[1] = c1;
  w[2] = c2;
  w[3] = c3;
}

ACCEL_INLINE float uniform_float(uint bits) { return (float)(bits >> 8) * 0x1p-24f; }

ACCEL_INLINE float uniform_in(uint bits, int ranged, float low, float range,
                              float below_high) {
  const float u = uniform_float(bits);
  const float x = u * range + low;
  return ranged ? (x < below_high ? x : below_high) : u;
}

// 1 in the lanes whose word is below `threshold` (a Bernoulli draw), else 0.
ACCEL_INLINE uint16 below(uint16 bits, ulong threshold) {
  return convert_uint16(-(convert_ulong16(bits) < threshold));
}

ACCEL_INLINE float16 uniform_lanes(uint16 bits, int ranged, float low, float range,
                                   float below_high) {
  const float16 u = convert_float16(bits >> 8) * 0x1p-24f;
  const float16 x = u * range + low;
  return ranged ? (x < below_high ? x : (float16)(below_high)) : u;
}

// The scalar tail of a fill kernel: the blocks of thread t that reach into
// [0, count) (none past the end), each element written as CONVERT of its
// Philox word `word`. Expects out, count, seed, offset, t and first in scope.
#define ACCEL_TAIL_BLOCKS(CONVERT)                                           \
  for (int b = 0; b < ACCEL_LANES && first + 4 * b < (long)count; ++b) {    \
    uint w[4];                                                               \
    philox_block(seed, offset / 4 + ACCEL_LANES * t + b, w);                 \
    for (int j = 0; j < 4; ++j) {                                            \
      const long e = first + 4 * b + j;                                      \
      const uint word = w[j];                                                \
      if (e >= 0 && (ulong)e < count) out[e] = CONVERT;                      \
    }                                                                        \
  }

// ---- Bodies ----

ACCEL_INLINE void bits32(global uint* out, ulong count, ulong seed, ulong offset) {
  const ulong t = get_global_id(0);
  const long first = first_element(t, offset);
  if (whole(first, count)) {
    uint16 q0, q1, q2, q3;
    lane_words(seed, offset, t, &q0, &q1, &q2, &q3);
    global uint* p = out + first;
    *(global unaligned_uint16*)(p + 0) = q0;
    *(global unaligned_uint16*)(p + 16) = q1;
    *(global unaligned_uint16*)(p + 32) = q2;
    *(global unaligned_uint16*)(p + 48) = q3;
    return;
  }
  ACCEL_TAIL_BLOCKS(word);
}

ACCEL_INLINE void uniform_f32(global float* out, ulong count, ulong seed, ulong offset,
                              int ranged, float low, float range, float below_high) {
  const ulong t = get_global_id(0);
  const long first = first_element(t, offset);
  if (whole(first, count)) {
    uint16 q0, q1, q2, q3;
    lane_words(seed, offset, t, &q0, &q1, &q2, &q3);
    global float* p = out + first;
    *(global unaligned_float16*)(p + 0) =
        uniform_lanes(q0, ranged, low, range, below_high);
    *(global unaligned_float16*)(p + 16) =
        uniform_lanes(q1, ranged, low, range, below_high);
    *(global unaligned_float16*)(p + 32) =
        uniform_lanes(q2, ranged, low, range, below_high);
    *(global unaligned_float16*)(p + 48) =
        uniform_lanes(q3, ranged, low, range, below_high);
    return;
  }
  ACCEL_TAIL_BLOCKS(uniform_in(word, ranged, low, range, below_high));
}

ACCEL_INLINE void bernoulli_u8(global uchar* out, ulong count, ulong seed, ulong offset,
                               ulong threshold) {
  const ulong t = get_global_id(0);
  const long first = first_element(t, offset);
  if (whole(first, count)) {
    uint16 q0, q1, q2, q3;
    lane_words(seed, offset, t, &q0, &q1, &q2, &q3);
    global uchar* p = out + first;
    *(global unaligned_uchar16*)(p + 0) = convert_uchar16(below(q0, threshold));
    *(global unaligned_uchar16*)(p + 16) = convert_uchar16(below(q1, threshold));
    *(global unaligned_uchar16*)(p + 32) = convert_uchar16(below(q2, threshold));
    *(global unaligned_uchar16*)(p + 48) = convert_uchar16(below(q3, threshold));
    return;
  }
  ACCEL_TAIL_BLOCKS((ulong)word < threshold);
}

ACCEL_INLINE void bernoulli_f32(global float* out, ulong count, ulong seed, ulong offset,
                                ulong threshold) {
  const ulong t = get_global_id(0);
  const long first = first_element(t, offset);
  if (whole(first, count)) {
    uint16 q0, q1, q2, q3;
    lane_words(seed, offset, t, &q0, &q1, &q2, &q3);
    global float* p = out + first;
    *(global unaligned_float16*)(p + 0) = convert_float16(below(q0, threshold));
    *(global unaligned_float16*)(p + 16) = convert_float16(below(q1, threshold));
    *(global unaligned_float16*)(p + 32) = convert_float16(below(q2, threshold));
    *(global unaligned_float16*)(p + 48) = convert_float16(below(q3, threshold));
    return;
  }
  ACCEL_TAIL_BLOCKS((ulong)word < threshold ? 1.0f : 0.0f);
}

// ---- Kernels (two per fill, fill.cl's header says why) ----

kernel void fill_bits32(global uint* out, ulong count, ulong seed, ulong offset) {
  bits32(out, count, seed, offset);
}
kernel void fill_bits32_captured(global uint* out, ulong count,
                                 global const ulong* position, ulong offset) {
  bits32(out, count, position[0], position[1] + offset);
}

kernel void fill_uniform_f32(global float* out, ulong count, ulong seed, ulong offset,
                             int ranged, float low, float range, float below_high) {
  uniform_f32(out, count, seed, offset, ranged, low, range, below_high);
}
kernel void fill_uniform_f32_captured(global float* out, ulong count,
                                      global const ulong* position, ulong offset,
                                      int ranged, float low, float range,
                                      float below_high) {
  uniform_f32(out, count, position[0], position[1] + offset, ranged, low, range,
              below_high);
}

kernel void fill_bernoulli_u8(global uchar* out, ulong count, ulong seed, ulong offset,
                              ulong threshold) {
  bernoulli_u8(out, count, seed, offset, threshold);
}
kernel void fill_bernoulli_u8_captured(global uchar* out, ulong count,
                                       global const ulong* position, ulong offset,
                                       ulong threshold) {
  bernoulli_u8(out, count, position[0], position[1] + offset, threshold);
}

kernel void fill_bernoulli_f32(global float* out, ulong count, ulong seed, ulong offset,
                               ulong threshold) {
  bernoulli_f32(out, count, seed, offset, threshold);
}
kernel void fill_bernoulli_f32_captured(global float* out, ulong count,
                                        global const ulong* position, ulong offset,
                                        ulong threshold) {
  bernoulli_f32(out, count, position[0], position[1] + offset, threshold);
}
