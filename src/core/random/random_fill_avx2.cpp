// The AVX2 random fill: random_fill_simd.h over 256-bit vectors. Compiled with
// -mavx2 (see simd_flags.cmake) and called only when the CPU has AVX2; without
// the flag (another architecture or compiler) this file is empty.
#if defined(__AVX2__)

#include "random/random_fill_simd.h"

namespace accel::detail {
namespace {

struct Avx2 {
  using I = __m256i;
  using F = __m256;
  using D = __m256d;
  using MF = __m256;  // all-ones lanes where true
  using MD = __m256d;
  static constexpr std::size_t kLanes = 8;
  // Lane 4L + e (128-bit lane L, element e) computes block e * 2 + L, so that
  // after the in-lane 4x4 transpose vector e holds blocks 2e and 2e + 1 whole.
  static constexpr std::uint32_t kBlockOfLane[kLanes] = {0, 2, 4, 6, 1, 3, 5, 7};

  static I blockOfLane() { return _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7); }
  static I zero() { return _mm256_setzero_si256(); }
  static I set1(std::uint32_t x) { return _mm256_set1_epi32(static_cast<int>(x)); }
  static I set1_64(std::uint64_t x) {
    return _mm256_set1_epi64x(static_cast<long long>(x));
  }
  static I loadu(const std::uint32_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  static I add32(I a, I b) { return _mm256_add_epi32(a, b); }
  static I sub32(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I add64(I a, I b) { return _mm256_add_epi64(a, b); }
  static I sub64(I a, I b) { return _mm256_sub_epi64(a, b); }
  static I band(I a, I b) { return _mm256_and_si256(a, b); }
  static I bor(I a, I b) { return _mm256_or_si256(a, b); }
  static I bxor(I a, I b) { return _mm256_xor_si256(a, b); }
  static I xor3(I a, I b, I c) { return _mm256_xor_si256(_mm256_xor_si256(a, b), c); }
  template <int N>
  static I srli32(I a) {
    return _mm256_srli_epi32(a, N);
  }
  template <int N>
  static I slli32(I a) {
    return _mm256_slli_epi32(a, N);
  }
  template <int N>
  static I srli64(I a) {
    return _mm256_srli_epi64(a, N);
  }
  template <int N>
  static I slli64(I a) {
    return _mm256_slli_epi64(a, N);
  }

  // hi:lo = a * m per 32-bit lane (m has the same value in every lane).
  static void mulhilo(I a, I m, I& hi, I& lo) {
    const I even = _mm256_mul_epu32(a, m);
    const I odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
    lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  }

  // c0..c3 hold words 0..3 of 8 blocks; writes their 32 outputs in order.
  static void transposeStore(I c0, I c1, I c2, I c3, std::uint32_t* dst) {
    const I t0 = _mm256_unpacklo_epi32(c0, c1);
    const I t1 = _mm256_unpackhi_epi32(c0, c1);
    const I t2 = _mm256_unpacklo_epi32(c2, c3);
    const I t3 = _mm256_unpackhi_epi32(c2, c3);
    auto* out = reinterpret_cast<__m256i*>(dst);
    _mm256_storeu_si256(out + 0, _mm256_unpacklo_epi64(t0, t2));
    _mm256_storeu_si256(out + 1, _mm256_unpackhi_epi64(t0, t2));
    _mm256_storeu_si256(out + 2, _mm256_unpacklo_epi64(t1, t3));
    _mm256_storeu_si256(out + 3, _mm256_unpackhi_epi64(t1, t3));
  }

  // Outputs of pairs, de-interleaved within 128-bit lanes (the order
  // unpacklo/unpackhi undo).
  static I evens32(I a, I b) {
    return _mm256_castps_si256(_mm256_shuffle_ps(
        _mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _MM_SHUFFLE(2, 0, 2, 0)));
  }
  static I odds32(I a, I b) {
    return _mm256_castps_si256(_mm256_shuffle_ps(
        _mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _MM_SHUFFLE(3, 1, 3, 1)));
  }
  static I unpacklo64(I a, I b) { return _mm256_unpacklo_epi64(a, b); }
  static I unpackhi64(I a, I b) { return _mm256_unpackhi_epi64(a, b); }

  // x < t per unsigned 32-bit lane, as all-ones lanes.
  static I lessU32(I x, I t) {
    const I sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
    return _mm256_cmpgt_epi32(_mm256_xor_si256(t, sign), _mm256_xor_si256(x, sign));
  }
  // Writes 8 bytes, 1 where `hit` is all-ones and 0 where it is zero.
  static void storeBytes01(std::uint8_t* dst, I hit) {
    const I ones = _mm256_and_si256(hit, _mm256_set1_epi32(1));
    const __m128i words =
        _mm_packus_epi32(_mm256_castsi256_si128(ones), _mm256_extracti128_si256(ones, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), _mm_packus_epi16(words, words));
  }

  static F set1F(float x) { return _mm256_set1_ps(x); }
  static void storeF(float* p, F x) { _mm256_storeu_ps(p, x); }
  static F addF(F a, F b) { return _mm256_add_ps(a, b); }
  static F subF(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mulF(F a, F b) { return _mm256_mul_ps(a, b); }
  static F divF(F a, F b) { return _mm256_div_ps(a, b); }
  static F sqrtF(F a) { return _mm256_sqrt_ps(a); }
  static F minF(F a, F b) { return _mm256_min_ps(a, b); }
  static F cvtF(I a) { return _mm256_cvtepi32_ps(a); }
  static F castIF(I a) { return _mm256_castsi256_ps(a); }
  static I castFI(F a) { return _mm256_castps_si256(a); }
  static MF gtF(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static MF oddF(I a) { return _mm256_castsi256_ps(_mm256_slli_epi32(a, 31)); }
  // ifTrue where mask, else ifFalse (blendv reads each lane's sign bit).
  static F selectF(MF mask, F ifFalse, F ifTrue) {
    return _mm256_blendv_ps(ifFalse, ifTrue, mask);
  }
  static F unpackloF(F a, F b) { return _mm256_unpacklo_ps(a, b); }
  static F unpackhiF(F a, F b) { return _mm256_unpackhi_ps(a, b); }

  static D set1D(double x) { return _mm256_set1_pd(x); }
  static void storeD(double* p, D x) { _mm256_storeu_pd(p, x); }
  static D addD(D a, D b) { return _mm256_add_pd(a, b); }
  static D subD(D a, D b) { return _mm256_sub_pd(a, b); }
  static D mulD(D a, D b) { return _mm256_mul_pd(a, b); }
  static D divD(D a, D b) { return _mm256_div_pd(a, b); }
  static D sqrtD(D a) { return _mm256_sqrt_pd(a); }
  static D minD(D a, D b) { return _mm256_min_pd(a, b); }
  static D castID(I a) { return _mm256_castsi256_pd(a); }
  static I castDI(D a) { return _mm256_castpd_si256(a); }
  static MD gtD(D a, D b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
  static MD oddD(I a) { return _mm256_castsi256_pd(_mm256_slli_epi64(a, 63)); }
  static D selectD(MD mask, D ifFalse, D ifTrue) {
    return _mm256_blendv_pd(ifFalse, ifTrue, mask);
  }
  static D unpackloD(D a, D b) { return _mm256_unpacklo_pd(a, b); }
  static D unpackhiD(D a, D b) { return _mm256_unpackhi_pd(a, b); }
};

}  // namespace

void fillAvx2(const FillJob& job) noexcept { Simd<Avx2>::fill(job); }

}  // namespace accel::detail

#endif  // defined(__AVX2__)
