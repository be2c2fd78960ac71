//===- BlockGemmAVX2.cpp - AVX2 micro-kernel of the packed [GEMM1] --------===//
//
// A 6 × 16 output tile: per group of 4 K values, one broadcast of A's 4 bytes
// per row against two vectors of B holding 8 columns × 4 K values each.
// vpmaddubsw multiplies A's unsigned (offset) bytes by B's signed bytes and
// adds adjacent pairs into int16 lanes, two per column. Each lane starts the
// block at its half of the offset correction (PackedGemm.h), so after the
// block it holds an exact partial dot product of at most 144 · 64 in
// magnitude: int16 holds it (vpaddw wraps, and only the final value must
// fit), and vpmaddwd by 1 adds the two halves into the column's int32 p.
// Compiled for AVX2 and FMA through the target attribute and only called when
// the CPU has them (isGemmKernelAvailable).
//
//===----------------------------------------------------------------------===//

#include "PackedGemm.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstring>

namespace fp4train::numerics::packed {

__attribute__((target("avx2"))) void translateCodesAVX2(const uint8_t *codes,
                                                        int64_t count,
                                                        const uint8_t table[16],
                                                        uint8_t *out) {
  __m256i lookup = _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(table)));
  __m256i mask = _mm256_set1_epi8(0x0F);
  int64_t i = 0;
  for (; i + 32 <= count; i += 32) {
    __m256i code = _mm256_and_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(codes + i)), mask);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + i),
                        _mm256_shuffle_epi8(lookup, code));
  }
  translateCodesPortable(codes + i, count - i, table, out + i);
}

__attribute__((target("avx2,fma"))) void microKernelAVX2(const TileTask &task) {
  constexpr int MR = kAVX2MR, NR = kAVX2NR, V = NR / 8;
  const __m256i ones = _mm256_set1_epi16(1);
  const uint8_t *a = task.a, *b = task.b;
  float *total = task.total;
  for (int i = 0; i < MR * NR; ++i)
    total[i] = 0.0f;

  for (int64_t kb = 0; kb < task.kBlocks; ++kb) {
    __m256i acc[MR][V];
    for (int v = 0; v < V; ++v) {
      __m256i correction = _mm256_loadu_si256(
          reinterpret_cast<const __m256i *>(task.correctionB + kb * NR * 2) +
          v);
      for (int i = 0; i < MR; ++i)
        acc[i][v] = correction;
    }
    for (int64_t g = 0; g < task.groupsPerBlock;
         ++g, a += MR * 4, b += NR * 4) {
      __m256i bv[V];
      for (int v = 0; v < V; ++v)
        bv[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b) + v);
      for (int i = 0; i < MR; ++i) {
        int32_t word;
        std::memcpy(&word, a + 4 * i, 4);
        __m256i av = _mm256_set1_epi32(word);
        for (int v = 0; v < V; ++v)
          acc[i][v] =
              _mm256_add_epi16(acc[i][v], _mm256_maddubs_epi16(av, bv[v]));
      }
    }

    const float *ha = task.scaleA + kb * MR, *hb = task.scaleB + kb * NR;
    if (isFastBlock(task.rangeA[kb], task.rangeB[kb])) {
      for (int i = 0; i < MR; ++i) {
        __m256 scaleA = _mm256_set1_ps(ha[i]);
        for (int v = 0; v < V; ++v) {
          __m256 scale = _mm256_mul_ps(scaleA, _mm256_loadu_ps(hb + 8 * v));
          __m256 p = _mm256_cvtepi32_ps(_mm256_madd_epi16(acc[i][v], ones));
          float *t = total + i * NR + 8 * v;
          _mm256_storeu_ps(t, _mm256_fmadd_ps(p, scale, _mm256_loadu_ps(t)));
        }
      }
    } else {
      int32_t p[MR * NR];
      for (int i = 0; i < MR; ++i)
        for (int v = 0; v < V; ++v)
          _mm256_storeu_si256(reinterpret_cast<__m256i *>(p + i * NR + 8 * v),
                              _mm256_madd_epi16(acc[i][v], ones));
      addExactBlockTerms(p, ha, hb, MR, NR, total);
    }
  }
}

/// The FP8 micro-kernel (PackedGemm.h): a 6 × 8 tile of double accumulators,
/// per K value one broadcast of A per row against two vectors of B's 8
/// columns. A block's exact products fold into the f32 totals as
/// f32(P · (sa·sb)), four columns per conversion.
__attribute__((target("avx2,fma"))) void
microKernelFP8AVX2(const FP8TileTask &task) {
  constexpr int MR = kFP8AVX2MR, NR = kFP8AVX2NR, V = NR / 4;
  const double *a = task.a, *b = task.b;
  float *total = task.total;
  for (int64_t kb = 0; kb < task.kBlocks; ++kb) {
    const double *sa = task.scaleA + kb * MR, *sb = task.scaleB + kb * NR;
    if (!isFastFP8Block(task.rangeA[kb], task.rangeB[kb], task.blockLog2)) {
      addExactFP8BlockTerms(a, b, MR, NR, task.blockSize, sa, sb, total);
      a += task.blockSize * MR;
      b += task.blockSize * NR;
      continue;
    }
    __m256d acc[MR][V];
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < V; ++v)
        acc[i][v] = _mm256_setzero_pd();
    for (int64_t l = 0; l < task.blockSize; ++l, a += MR, b += NR) {
      __m256d bv[V];
      for (int v = 0; v < V; ++v)
        bv[v] = _mm256_loadu_pd(b + 4 * v);
      for (int i = 0; i < MR; ++i) {
        __m256d av = _mm256_broadcast_sd(a + i);
        for (int v = 0; v < V; ++v)
          acc[i][v] = _mm256_fmadd_pd(av, bv[v], acc[i][v]);
      }
    }
    for (int i = 0; i < MR; ++i) {
      __m256d scaleA = _mm256_broadcast_sd(sa + i);
      for (int v = 0; v < V; ++v) {
        __m256d scale = _mm256_mul_pd(scaleA, _mm256_loadu_pd(sb + 4 * v));
        __m128 term = _mm256_cvtpd_ps(_mm256_mul_pd(acc[i][v], scale));
        float *t = total + i * NR + 4 * v;
        _mm_storeu_ps(t, _mm_add_ps(_mm_loadu_ps(t), term));
      }
    }
  }
}

} // namespace fp4train::numerics::packed

#endif // defined(__x86_64__)
