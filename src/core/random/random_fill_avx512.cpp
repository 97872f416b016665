// The AVX-512 random fill: random_fill_simd.h over 512-bit vectors, using
// AVX-512F only. Compiled with -mavx512f (see simd_flags.cmake) and called
// only when the CPU has AVX-512F; without the flag this file is empty.
#if defined(__AVX512F__)

#include "random/random_fill_simd.h"

namespace accel::detail {
namespace {

struct Avx512 {
  using I = __m512i;
  using F = __m512;
  using D = __m512d;
  using MF = __mmask16;
  using MD = __mmask8;
  static constexpr std::size_t kLanes = 16;
  // Lane 4L + e (128-bit lane L, element e) computes block e * 4 + L, so that
  // after the in-lane 4x4 transpose vector e holds blocks 4e .. 4e + 3 whole.
  static constexpr std::uint32_t kBlockOfLane[kLanes] = {0, 4, 8,  12, 1, 5, 9,  13,
                                                         2, 6, 10, 14, 3, 7, 11, 15};

  static I blockOfLane() {
    return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  }
  static I zero() { return _mm512_setzero_si512(); }
  static I set1(std::uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }
  static I set1_64(std::uint64_t x) {
    return _mm512_set1_epi64(static_cast<long long>(x));
  }
  static I loadu(const std::uint32_t* p) { return _mm512_loadu_si512(p); }
  static I add32(I a, I b) { return _mm512_add_epi32(a, b); }
  static I sub32(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I add64(I a, I b) { return _mm512_add_epi64(a, b); }
  static I sub64(I a, I b) { return _mm512_sub_epi64(a, b); }
  static I band(I a, I b) { return _mm512_and_si512(a, b); }
  static I bor(I a, I b) { return _mm512_or_si512(a, b); }
  static I bxor(I a, I b) { return _mm512_xor_si512(a, b); }
  // a ^ b ^ c in one instruction (0x96 is the truth table of a three-way xor).
  static I xor3(I a, I b, I c) { return _mm512_ternarylogic_epi32(a, b, c, 0x96); }
  template <int N>
  static I srli32(I a) {
    return _mm512_srli_epi32(a, N);
  }
  template <int N>
  static I slli32(I a) {
    return _mm512_slli_epi32(a, N);
  }
  template <int N>
  static I srli64(I a) {
    return _mm512_srli_epi64(a, N);
  }
  template <int N>
  static I slli64(I a) {
    return _mm512_slli_epi64(a, N);
  }

  // hi:lo = a * m per 32-bit lane (m has the same value in every lane).
  static void mulhilo(I a, I m, I& hi, I& lo) {
    const I even = _mm512_mul_epu32(a, m);
    const I odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
    // The odd lanes of hi (even lanes of lo) are already in place in odd (even);
    // one masked in-lane shuffle moves the other halves in.
    hi = _mm512_mask_shuffle_epi32(odd, 0x5555, even,
                                   static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(3, 3, 1, 1)));
    lo = _mm512_mask_shuffle_epi32(even, 0xAAAA, odd,
                                   static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(2, 2, 0, 0)));
  }

  // c0..c3 hold words 0..3 of 16 blocks; writes their 64 outputs in order.
  static void transposeStore(I c0, I c1, I c2, I c3, std::uint32_t* dst) {
    const I t0 = _mm512_unpacklo_epi32(c0, c1);
    const I t1 = _mm512_unpackhi_epi32(c0, c1);
    const I t2 = _mm512_unpacklo_epi32(c2, c3);
    const I t3 = _mm512_unpackhi_epi32(c2, c3);
    _mm512_storeu_si512(dst + 0, _mm512_unpacklo_epi64(t0, t2));
    _mm512_storeu_si512(dst + 16, _mm512_unpackhi_epi64(t0, t2));
    _mm512_storeu_si512(dst + 32, _mm512_unpacklo_epi64(t1, t3));
    _mm512_storeu_si512(dst + 48, _mm512_unpackhi_epi64(t1, t3));
  }

  // Outputs of pairs, de-interleaved within 128-bit lanes (the order
  // unpacklo/unpackhi undo).
  static I evens32(I a, I b) {
    return _mm512_castps_si512(_mm512_shuffle_ps(
        _mm512_castsi512_ps(a), _mm512_castsi512_ps(b), _MM_SHUFFLE(2, 0, 2, 0)));
  }
  static I odds32(I a, I b) {
    return _mm512_castps_si512(_mm512_shuffle_ps(
        _mm512_castsi512_ps(a), _mm512_castsi512_ps(b), _MM_SHUFFLE(3, 1, 3, 1)));
  }
  static I unpacklo64(I a, I b) { return _mm512_unpacklo_epi64(a, b); }
  static I unpackhi64(I a, I b) { return _mm512_unpackhi_epi64(a, b); }

  // x < t per unsigned 32-bit lane, as all-ones lanes.
  static I lessU32(I x, I t) {
    return _mm512_maskz_set1_epi32(_mm512_cmplt_epu32_mask(x, t), -1);
  }
  // Writes 16 bytes, 1 where `hit` is all-ones and 0 where it is zero.
  static void storeBytes01(std::uint8_t* dst, I hit) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                     _mm512_cvtepi32_epi8(_mm512_and_si512(hit, _mm512_set1_epi32(1))));
  }

  static F set1F(float x) { return _mm512_set1_ps(x); }
  static void storeF(float* p, F x) { _mm512_storeu_ps(p, x); }
  static F addF(F a, F b) { return _mm512_add_ps(a, b); }
  static F subF(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mulF(F a, F b) { return _mm512_mul_ps(a, b); }
  static F divF(F a, F b) { return _mm512_div_ps(a, b); }
  static F sqrtF(F a) { return _mm512_sqrt_ps(a); }
  static F minF(F a, F b) { return _mm512_min_ps(a, b); }
  static F cvtF(I a) { return _mm512_cvtepi32_ps(a); }
  static F castIF(I a) { return _mm512_castsi512_ps(a); }
  static I castFI(F a) { return _mm512_castps_si512(a); }
  static MF gtF(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static MF oddF(I a) { return _mm512_test_epi32_mask(a, _mm512_set1_epi32(1)); }
  static F selectF(MF mask, F ifFalse, F ifTrue) {
    return _mm512_mask_blend_ps(mask, ifFalse, ifTrue);
  }
  static F unpackloF(F a, F b) { return _mm512_unpacklo_ps(a, b); }
  static F unpackhiF(F a, F b) { return _mm512_unpackhi_ps(a, b); }

  static D set1D(double x) { return _mm512_set1_pd(x); }
  static void storeD(double* p, D x) { _mm512_storeu_pd(p, x); }
  static D addD(D a, D b) { return _mm512_add_pd(a, b); }
  static D subD(D a, D b) { return _mm512_sub_pd(a, b); }
  static D mulD(D a, D b) { return _mm512_mul_pd(a, b); }
  static D divD(D a, D b) { return _mm512_div_pd(a, b); }
  static D sqrtD(D a) { return _mm512_sqrt_pd(a); }
  static D minD(D a, D b) { return _mm512_min_pd(a, b); }
  static D castID(I a) { return _mm512_castsi512_pd(a); }
  static I castDI(D a) { return _mm512_castpd_si512(a); }
  static MD gtD(D a, D b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
  static MD oddD(I a) { return _mm512_test_epi64_mask(a, _mm512_set1_epi64(1)); }
  static D selectD(MD mask, D ifFalse, D ifTrue) {
    return _mm512_mask_blend_pd(mask, ifFalse, ifTrue);
  }
  static D unpackloD(D a, D b) { return _mm512_unpacklo_pd(a, b); }
  static D unpackhiD(D a, D b) { return _mm512_unpackhi_pd(a, b); }
};

}  // namespace

void fillAvx512(const FillJob& job) noexcept { Simd<Avx512>::fill(job); }

}  // namespace accel::detail

#endif  // defined(__AVX512F__)
