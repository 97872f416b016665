// The random fill kernels of the opencl backend, in OpenCL C.
//
// Each kernel is the host fill (accel/random_fill_elements.h: fillElements
// and the mappings it calls) rewritten in OpenCL C, operation for operation,
// so that a device fill gives the host fill's bits for the same (seed,
// offset).
//
// The fills of one 32-bit word per element (bits32, uniform float,
// Bernoulli) are in fill_lanes.cl, vectorised by hand. The fills here (64-bit
// elements, normal pairs, which straddle Philox blocks at odd offsets) read
// the stream in order: work-item c writes elements [c * E, (c + 1) * E),
// E = 16 outputs' worth of elements (the CUDA backend's split), so normal
// pairs stay in one work-item. The host prepends the constants (ACCEL_PHILOX_*, the
// normal mapping's polynomials ACCEL_LOG_F/ACCEL_SIN_F/..., written from
// accel/philox.h and random_fill_elements.h) and builds with
// -cl-fp32-correctly-rounded-divide-sqrt: every +, -, *, / and sqrt is then
// correctly rounded and, with contraction off, rounded on its own, as on the
// host (-ffp-contract=off).
//
// Every fill has two kernels over one body: NAME takes its Philox position
// by value (a fill enqueued at once); NAME_captured, recorded by a graph
// capture, reads the seed and the base offset from `position` (device
// memory each replay writes first, src/captured_philox.h) and adds its own
// offset inside the graph, so that every replay draws new numbers. Their
// arguments have the same indices.
#pragma OPENCL FP_CONTRACT OFF

// Bodies and helpers are inlined by force: pocl does not inline a call
// over LLVM's threshold, and a body called from two kernels is one.
#define ACCEL_INLINE __attribute__((always_inline))

#define READER_BLOCKS 4

// ---- The Philox4x32-10 stream, read in order (StreamReader) ----

typedef struct {
  ulong seed;
  ulong block;
  int next;
  uint words[4 * READER_BLOCKS];
} Reader;

void philox_blocks(ulong seed, ulong first, uint* out) {
  uint c0[READER_BLOCKS], c1[READER_BLOCKS], c2[READER_BLOCKS], c3[READER_BLOCKS];
  for (int j = 0; j < READER_BLOCKS; ++j) {
    c0[j] = (uint)(first + j);
    c1[j] = (uint)((first + j) >> 32);
    c2[j] = 0;
    c3[j] = 0;
  }
  uint k0 = (uint)seed;
  uint k1 = (uint)(seed >> 32);
  for (int round = 0; round < ACCEL_PHILOX_ROUNDS; ++round) {
    for (int j = 0; j < READER_BLOCKS; ++j) {
      const ulong product0 = (ulong)ACCEL_PHILOX_M0 * c0[j];
      const ulong product1 = (ulong)ACCEL_PHILOX_M1 * c2[j];
      c0[j] = (uint)(product1 >> 32) ^ c1[j] ^ k0;
      c1[j] = (uint)product1;
      c2[j] = (uint)(product0 >> 32) ^ c3[j] ^ k1;
      c3[j] = (uint)product0;
    }
    k0 += ACCEL_PHILOX_W0;
    k1 += ACCEL_PHILOX_W1;
  }
  for (int j = 0; j < READER_BLOCKS; ++j) {
    out[4 * j + 0] = c0[j];
    out[4 * j + 1] = c1[j];
    out[4 * j + 2] = c2[j];
    out[4 * j + 3] = c3[j];
  }
}

void reader_init(Reader* r, ulong seed, ulong position) {
  r->seed = seed;
  r->block = position / 4;
  r->next = (int)(position % 4);
  philox_blocks(seed, r->block, r->words);
}

uint reader_next(Reader* r) {
  if (r->next == 4 * READER_BLOCKS) {
    r->block += READER_BLOCKS;
    philox_blocks(r->seed, r->block, r->words);
    r->next = 0;
  }
  return r->words[r->next++];
}

// ---- Chunks ----

// The first element and the element count of this work-item's chunk of
// `per` elements; false when the chunk lies past the end.
bool chunk_range(ulong count, ulong per, ulong* first, ulong* n) {
  const ulong chunk = get_global_id(0);
  *first = chunk * per;
  if (*first >= count) return false;
  const ulong left = count - *first;
  *n = left < per ? left : per;
  return true;
}

// ---- Mappings ----

float log_float(float u) {
  const uint bits = as_uint(u);
  const int exponent = (int)(bits >> 23) - 127;
  float m = as_float((bits & 0x007FFFFFu) | 0x3F800000u);
  const bool big = m > ACCEL_SQRT2_F;
  if (big) m = m * 0.5f;
  const float e = (float)exponent + (big ? 1.0f : 0.0f);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float poly = ACCEL_LOG_F3;
  poly = ACCEL_LOG_F2 + z * poly;
  poly = ACCEL_LOG_F1 + z * poly;
  poly = ACCEL_LOG_F0 + z * poly;
  poly = z * poly;
  const float two_s = s + s;
  const float logm = two_s + two_s * poly;
  return e * ACCEL_LN2_F + logm;
}

void normal_float_pair(uint first, uint second, float* z0, float* z1) {
  const float u1 = (float)((first >> 8) + 1) * 0x1p-24f;
  const float radius = sqrt(-2.0f * log_float(u1));
  const uint turn = second >> 8;
  const uint quadrant = (turn + (1u << 21)) >> 22;
  const int reduced = (int)(turn - (quadrant << 22));
  const float r = (float)reduced * 0x1p-22f;
  const float rr = r * r;
  float sin_poly = ACCEL_SIN_F4;
  sin_poly = ACCEL_SIN_F3 + rr * sin_poly;
  sin_poly = ACCEL_SIN_F2 + rr * sin_poly;
  sin_poly = ACCEL_SIN_F1 + rr * sin_poly;
  sin_poly = ACCEL_SIN_F0 + rr * sin_poly;
  const float sin_r = r * sin_poly;
  float cos_poly = ACCEL_COS_F4;
  cos_poly = ACCEL_COS_F3 + rr * cos_poly;
  cos_poly = ACCEL_COS_F2 + rr * cos_poly;
  cos_poly = ACCEL_COS_F1 + rr * cos_poly;
  cos_poly = ACCEL_COS_F0 + rr * cos_poly;
  const float cos_r = 1.0f + rr * cos_poly;
  const bool swap = (quadrant & 1) != 0;
  const uint sin_sign = (quadrant & 2) << 30;
  const uint cos_sign = ((quadrant + 1) & 2) << 30;
  const float sin_t = as_float(as_uint(swap ? cos_r : sin_r) ^ sin_sign);
  const float cos_t = as_float(as_uint(swap ? sin_r : cos_r) ^ cos_sign);
  *z0 = radius * cos_t;
  *z1 = radius * sin_t;
}

// ---- Kernels of 32-bit element types ----

ACCEL_INLINE void bits64(global ulong* out, ulong count, ulong seed, ulong offset) {
  ulong first, n;
  if (!chunk_range(count, 8, &first, &n)) return;
  Reader in;
  reader_init(&in, seed, offset + 2 * first);
  for (ulong i = first; i < first + n; ++i) {
    const uint low = reader_next(&in);
    out[i] = ((ulong)reader_next(&in) << 32) | low;
  }
}

ACCEL_INLINE void normal_f32(global float* out, ulong count, ulong seed, ulong offset,
                             float mean, float stddev) {
  ulong first, n;
  if (!chunk_range(count, 16, &first, &n)) return;
  Reader in;
  reader_init(&in, seed, offset + first);
  const ulong end = first + n;
  for (ulong i = first; i < end; i += 2) {
    const uint w0 = reader_next(&in);
    float z0, z1;
    normal_float_pair(w0, reader_next(&in), &z0, &z1);
    out[i] = z0 * stddev + mean;
    if (i + 1 < end) out[i + 1] = z1 * stddev + mean;
  }
}

kernel void fill_bits64(global ulong* out, ulong count, ulong seed, ulong offset) {
  bits64(out, count, seed, offset);
}
kernel void fill_bits64_captured(global ulong* out, ulong count,
                                 global const ulong* position, ulong offset) {
  bits64(out, count, position[0], position[1] + offset);
}

kernel void fill_normal_f32(global float* out, ulong count, ulong seed, ulong offset,
                            float mean, float stddev) {
  normal_f32(out, count, seed, offset, mean, stddev);
}
kernel void fill_normal_f32_captured(global float* out, ulong count,
                                     global const ulong* position, ulong offset,
                                     float mean, float stddev) {
  normal_f32(out, count, position[0], position[1] + offset, mean, stddev);
}

// ---- Kernels of 64-bit floating point (devices with cl_khr_fp64) ----
#ifdef ACCEL_HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

double log_double(double u) {
  const ulong bits = as_ulong(u);
  const long exponent = (long)(bits >> 52) - 1023;
  double m = as_double((bits & 0x000FFFFFFFFFFFFFul) | 0x3FF0000000000000ul);
  const bool big = m > ACCEL_SQRT2_D;
  if (big) m = m * 0.5;
  const double e = (double)exponent + (big ? 1.0 : 0.0);
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double poly = ACCEL_LOG_D10;
  poly = ACCEL_LOG_D9 + z * poly;
  poly = ACCEL_LOG_D8 + z * poly;
  poly = ACCEL_LOG_D7 + z * poly;
  poly = ACCEL_LOG_D6 + z * poly;
  poly = ACCEL_LOG_D5 + z * poly;
  poly = ACCEL_LOG_D4 + z * poly;
  poly = ACCEL_LOG_D3 + z * poly;
  poly = ACCEL_LOG_D2 + z * poly;
  poly = ACCEL_LOG_D1 + z * poly;
  poly = ACCEL_LOG_D0 + z * poly;
  poly = z * poly;
  const double two_s = s + s;
  const double logm = two_s + two_s * poly;
  return e * ACCEL_LN2_D + logm;
}

void normal_double_pair(ulong first, ulong second, double* z0, double* z1) {
  const double u1 = (double)((first >> 11) + 1) * 0x1p-53;
  const double radius = sqrt(-2.0 * log_double(u1));
  const ulong turn = second >> 11;
  const ulong quadrant = (turn + (1ul << 50)) >> 51;
  const long reduced = (long)(turn - (quadrant << 51));
  const double r = (double)reduced * 0x1p-51;
  const double rr = r * r;
  double sin_poly = ACCEL_SIN_D8;
  sin_poly = ACCEL_SIN_D7 + rr * sin_poly;
  sin_poly = ACCEL_SIN_D6 + rr * sin_poly;
  sin_poly = ACCEL_SIN_D5 + rr * sin_poly;
  sin_poly = ACCEL_SIN_D4 + rr * sin_poly;
  sin_poly = ACCEL_SIN_D3 + rr * sin_poly;
  sin_poly = ACCEL_SIN_D2 + rr * sin_poly;
  sin_poly = ACCEL_SIN_D1 + rr * sin_poly;
  sin_poly = ACCEL_SIN_D0 + rr * sin_poly;
  const double sin_r = r * sin_poly;
  double cos_poly = ACCEL_COS_D8;
  cos_poly = ACCEL_COS_D7 + rr * cos_poly;
  cos_poly = ACCEL_COS_D6 + rr * cos_poly;
  cos_poly = ACCEL_COS_D5 + rr * cos_poly;
  cos_poly = ACCEL_COS_D4 + rr * cos_poly;
  cos_poly = ACCEL_COS_D3 + rr * cos_poly;
  cos_poly = ACCEL_COS_D2 + rr * cos_poly;
  cos_poly = ACCEL_COS_D1 + rr * cos_poly;
  cos_poly = ACCEL_COS_D0 + rr * cos_poly;
  const double cos_r = 1.0 + rr * cos_poly;
  const bool swap = (quadrant & 1) != 0;
  const ulong sin_sign = (quadrant & 2) << 62;
  const ulong cos_sign = ((quadrant + 1) & 2) << 62;
  const double sin_t = as_double(as_ulong(swap ? cos_r : sin_r) ^ sin_sign);
  const double cos_t = as_double(as_ulong(swap ? sin_r : cos_r) ^ cos_sign);
  *z0 = radius * cos_t;
  *z1 = radius * sin_t;
}

ACCEL_INLINE void uniform_f64(global double* out, ulong count, ulong seed, ulong offset,
                              int ranged, double low, double range, double below_high) {
  ulong first, n;
  if (!chunk_range(count, 8, &first, &n)) return;
  Reader in;
  reader_init(&in, seed, offset + 2 * first);
  for (ulong i = first; i < first + n; ++i) {
    const uint w0 = reader_next(&in);
    const ulong word = ((ulong)reader_next(&in) << 32) | w0;
    const double u = (double)(word >> 11) * 0x1p-53;
    const double x = u * range + low;
    out[i] = ranged ? (x < below_high ? x : below_high) : u;
  }
}

ACCEL_INLINE void normal_f64(global double* out, ulong count, ulong seed, ulong offset,
                             double mean, double stddev) {
  ulong first, n;
  if (!chunk_range(count, 8, &first, &n)) return;
  Reader in;
  reader_init(&in, seed, offset + 2 * first);
  const ulong end = first + n;
  for (ulong i = first; i < end; i += 2) {
    const uint w0 = reader_next(&in);
    const uint w1 = reader_next(&in);
    const uint w2 = reader_next(&in);
    const uint w3 = reader_next(&in);
    double z0, z1;
    normal_double_pair(((ulong)w1 << 32) | w0, ((ulong)w3 << 32) | w2, &z0, &z1);
    out[i] = z0 * stddev + mean;
    if (i + 1 < end) out[i + 1] = z1 * stddev + mean;
  }
}

kernel void fill_uniform_f64(global double* out, ulong count, ulong seed, ulong offset,
                             int ranged, double low, double range, double below_high) {
  uniform_f64(out, count, seed, offset, ranged, low, range, below_high);
}
kernel void fill_uniform_f64_captured(global double* out, ulong count,
                                      global const ulong* position, ulong offset,
                                      int ranged, double low, double range,
                                      double below_high) {
  uniform_f64(out, count, position[0], position[1] + offset, ranged, low, range,
              below_high);
}

kernel void fill_normal_f64(global double* out, ulong count, ulong seed, ulong offset,
                            double mean, double stddev) {
  normal_f64(out, count, seed, offset, mean, stddev);
}
kernel void fill_normal_f64_captured(global double* out, ulong count,
                                     global const ulong* position, ulong offset,
                                     double mean, double stddev) {
  normal_f64(out, count, position[0], position[1] + offset, mean, stddev);
}
#endif
