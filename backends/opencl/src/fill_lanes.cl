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
// Vectorised by hand in OpenCL vector types: 16 blocks side by side, each
// Philox word in the low half of a ulong16 lane (two AVX-512 registers on
// pocl), shuffled into 64 consecutive outputs, stored as four 16-wide
// vectors. pocl's own vectoriser (LLVM's loop vectoriser over a
// work-group's work-items) does not get there from a scalar kernel of one
// block per work-item: its four adjacent stores are merged by the SLP
// vectoriser into one 4-wide store before the work-item loop exists, and a
// loop holding a vector store is not vectorised; with the stores kept apart
// it vectorises them as scatters (vscatterqps), 2.5 GB/s here against 9 GB/s
// for the host fill. POCL_VECTORIZER_REMARKS=1 shows both. Called functions
// and loop bodies are inlined by force (ACCEL_INLINE, fill.cl).
#define ACCEL_LANES 16  // Philox blocks per work-item

// Vectors that may sit at any element boundary: an output starts wherever
// the caller's pointer and the stream's offset put it. (vstore16 does the
// same, but pocl lowers it to four 128-bit stores.)
typedef uint16 __attribute__((aligned(4))) unaligned_uint16;
typedef float16 __attribute__((aligned(4))) unaligned_float16;
typedef uchar16 __attribute__((aligned(1))) unaligned_uchar16;

// The 16 Philox4x32-10 blocks block0 + 0 .. block0 + 15 under key `seed`:
// word j of block b in the low 32 bits of lane b of *wj; the high 32 bits
// are left over from the arithmetic and mean nothing.
//
// A round is then, per register of 8 blocks, two 32x32->64 multiplies
// (vpmuludq reads only the low halves, so nothing is masked), two shifts
// that bring the high products down and two three-way xors (vpternlog): 12
// vector instructions for the 16 blocks, 4 of them multiplies. With the
// words packed in uint16 lanes (as the host fill's AVX-512 path keeps
// them), the even and odd lanes are multiplied apart and put back together
// every round: 14 instructions, 6 of them multiplies (LLVM takes a 64x64
// vpmullq for the odd lanes' low products) and 2 cross-lane permutes; that
// kernel took 1.5x as long here (docs/performance.md). The words are
// packed once, in stream_order.
ACCEL_INLINE void philox_lanes(ulong seed, ulong block0, ulong16* w0, ulong16* w1,
                               ulong16* w2, ulong16* w3) {
  const ulong16 counter =
      (ulong16)(block0) + (ulong16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  ulong16 c0 = counter, c1 = counter >> 32;
  ulong16 c2 = (ulong16)(0), c3 = (ulong16)(0);
  uint k0 = (uint)seed, k1 = (uint)(seed >> 32);
#pragma unroll
  for (int round = 0; round < ACCEL_PHILOX_ROUNDS; ++round) {
    const ulong16 product0 = (c0 & 0xFFFFFFFFul) * (ulong)ACCEL_PHILOX_M0;
    const ulong16 product1 = (c2 & 0xFFFFFFFFul) * (ulong)ACCEL_PHILOX_M1;
    c0 = (product1 >> 32) ^ c1 ^ (ulong)k0;
    c1 = product1;
    c2 = (product0 >> 32) ^ c3 ^ (ulong)k1;
    c3 = product0;
    k0 += ACCEL_PHILOX_W0;
    k1 += ACCEL_PHILOX_W1;
  }
  *w0 = c0;
  *w1 = c1;
  *w2 = c2;
  *w3 = c3;
}

// Two-source shuffles. With clang (pocl's compiler, and most vendors') they
// are written with __builtin_shufflevector: pocl lowers shuffle2 element by
// element, which costs here as much as the Philox rounds.
#if defined(__clang__)
#define ACCEL_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define ACCEL_SHUFFLE(a, b, ...) shuffle2(a, b, (uint16)(__VA_ARGS__))
#endif

// The low halves of a's and b's 8 lanes, interleaved: a0 b0 a1 b1 ...
#define ACCEL_LOW_HALVES 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
// Pairs 0..3 (then 4..7) of a and b, alternating: a0 a1 b0 b1 a2 a3 ...
#define ACCEL_PAIRS_0_3 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23
#define ACCEL_PAIRS_4_7 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31

// Blocks 0..7 of philox_lanes' layout (their words j in w<j>) in stream
// order: block 0 words 0..3, block 1 ... in *first (blocks 0..3) and
// *second (blocks 4..7).
ACCEL_INLINE void stream_order8(ulong8 w0, ulong8 w1, ulong8 w2, ulong8 w3,
                                uint16* first, uint16* second) {
  const uint16 words01 = ACCEL_SHUFFLE(as_uint16(w0), as_uint16(w1), ACCEL_LOW_HALVES);
  const uint16 words23 = ACCEL_SHUFFLE(as_uint16(w2), as_uint16(w3), ACCEL_LOW_HALVES);
  *first = ACCEL_SHUFFLE(words01, words23, ACCEL_PAIRS_0_3);
  *second = ACCEL_SHUFFLE(words01, words23, ACCEL_PAIRS_4_7);
}

// The 64 words of philox_lanes in stream order: stream word 16k + n in
// lane n of *qk.
ACCEL_INLINE void stream_order(ulong16 w0, ulong16 w1, ulong16 w2, ulong16 w3,
                               uint16* q0, uint16* q1, uint16* q2, uint16* q3) {
  stream_order8(w0.lo, w1.lo, w2.lo, w3.lo, q0, q1);
  stream_order8(w0.hi, w1.hi, w2.hi, w3.hi, q2, q3);
}

// The element that work-item t's first word fills (negative for the
// work-item the fill starts inside of).
ACCEL_INLINE long first_element(ulong t, ulong offset) {
  return (long)(4 * ACCEL_LANES * t) - (long)(offset % 4);
}

// Work-item t's 64 words in stream order.
ACCEL_INLINE void lane_words(ulong seed, ulong offset, ulong t, uint16* q0, uint16* q1,
                             uint16* q2, uint16* q3) {
  ulong16 w0, w1, w2, w3;
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

// The uniform mapping of 16 words, without and with a range. The caller
// tests `ranged` once for its four vectors: tested per vector, LLVM made
// each test a branch and sank the Philox rounds of the vectors after the
// first past it, so the two halves of philox_lanes ran one after the other
// instead of interleaved (10 % slower on pocl here).
ACCEL_INLINE float16 unit_lanes(uint16 bits) {
  return convert_float16(bits >> 8) * 0x1p-24f;
}
ACCEL_INLINE float16 ranged_lanes(uint16 bits, float low, float range, float below_high) {
  const float16 x = unit_lanes(bits) * range + low;
  return x < below_high ? x : (float16)(below_high);
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
    if (ranged) {
      *(global unaligned_float16*)(p + 0) = ranged_lanes(q0, low, range, below_high);
      *(global unaligned_float16*)(p + 16) = ranged_lanes(q1, low, range, below_high);
      *(global unaligned_float16*)(p + 32) = ranged_lanes(q2, low, range, below_high);
      *(global unaligned_float16*)(p + 48) = ranged_lanes(q3, low, range, below_high);
    } else {
      *(global unaligned_float16*)(p + 0) = unit_lanes(q0);
      *(global unaligned_float16*)(p + 16) = unit_lanes(q1);
      *(global unaligned_float16*)(p + 32) = unit_lanes(q2);
      *(global unaligned_float16*)(p + 48) = unit_lanes(q3);
    }
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
