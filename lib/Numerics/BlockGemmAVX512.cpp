//===- BlockGemmAVX512.cpp - AVX-512 VNNI micro-kernel of [GEMM1] ---------===//
//
// An 8 × 32 output tile: per group of 4 K values, one broadcast of A's 4 bytes
// per row against two vectors of B holding 16 columns × 4 K values each.
// vpdpbusd multiplies A's unsigned (offset) bytes by B's signed bytes and adds
// the four products of each column straight into its int32 lane, so a block
// costs one instruction per 64 multiply-adds. Compiled for AVX-512 through the
// target attribute and only called when the CPU has it
// (isGemmKernelAvailable).
//
//===----------------------------------------------------------------------===//

#include "PackedGemm.h"

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstring>

namespace fp4train::numerics::packed {

__attribute__((target("avx512f,avx512bw,avx512vnni"))) void
microKernelAVX512VNNI(const TileTask &task) {
  constexpr int MR = kAVX512MR, NR = kAVX512NR, V = NR / 16;
  const uint8_t *a = task.a, *b = task.b;
  float *total = task.total;
  for (int i = 0; i < MR * NR; ++i)
    total[i] = 0.0f;

  const __m512i ones = _mm512_set1_epi16(1);
  for (int64_t kb = 0; kb < task.kBlocks; ++kb) {
    // Each column's accumulator starts at its offset correction, the sum of
    // the two int16 halves PackedGemm.h stores.
    __m512i acc[MR][V];
    for (int v = 0; v < V; ++v) {
      __m512i correction = _mm512_madd_epi16(
          _mm512_loadu_si512(task.correctionB + (kb * NR + 16 * v) * 2), ones);
      for (int i = 0; i < MR; ++i)
        acc[i][v] = correction;
    }
    for (int64_t g = 0; g < task.groupsPerBlock;
         ++g, a += MR * 4, b += NR * 4) {
      __m512i bv[V];
      for (int v = 0; v < V; ++v)
        bv[v] = _mm512_loadu_si512(b + 64 * v);
      for (int i = 0; i < MR; ++i) {
        int32_t word;
        std::memcpy(&word, a + 4 * i, 4);
        __m512i av = _mm512_set1_epi32(word);
        for (int v = 0; v < V; ++v)
          acc[i][v] = _mm512_dpbusd_epi32(acc[i][v], av, bv[v]);
      }
    }

    const float *ha = task.scaleA + kb * MR, *hb = task.scaleB + kb * NR;
    if (isFastBlock(task.rangeA[kb], task.rangeB[kb])) {
      for (int i = 0; i < MR; ++i) {
        __m512 scaleA = _mm512_set1_ps(ha[i]);
        for (int v = 0; v < V; ++v) {
          __m512 scale = _mm512_mul_ps(scaleA, _mm512_loadu_ps(hb + 16 * v));
          __m512 p = _mm512_cvtepi32_ps(acc[i][v]);
          float *t = total + i * NR + 16 * v;
          _mm512_storeu_ps(t, _mm512_fmadd_ps(p, scale, _mm512_loadu_ps(t)));
        }
      }
    } else {
      int32_t p[MR * NR];
      for (int i = 0; i < MR; ++i)
        for (int v = 0; v < V; ++v)
          _mm512_storeu_si512(p + i * NR + 16 * v, acc[i][v]);
      addExactBlockTerms(p, ha, hb, MR, NR, total);
    }
  }
}

/// The FP8 micro-kernel (PackedGemm.h): a 12 × 16 tile of double
/// accumulators (24 of the 32 registers), per K value one broadcast of A per
/// row against two vectors of B's 16 columns. A block's exact products fold
/// into the f32 totals as f32(P · (sa·sb)), eight columns per conversion.
/// Needs AVX-512F only; it serves the avx512-vnni kernel set.
__attribute__((target("avx512f"))) void
microKernelFP8AVX512(const FP8TileTask &task) {
  constexpr int MR = kFP8AVX512MR, NR = kFP8AVX512NR, V = NR / 8;
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
    __m512d acc[MR][V];
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < V; ++v)
        acc[i][v] = _mm512_setzero_pd();
    for (int64_t l = 0; l < task.blockSize; ++l, a += MR, b += NR) {
      __m512d bv[V];
      for (int v = 0; v < V; ++v)
        bv[v] = _mm512_loadu_pd(b + 8 * v);
      for (int i = 0; i < MR; ++i) {
        __m512d av = _mm512_set1_pd(a[i]);
        for (int v = 0; v < V; ++v)
          acc[i][v] = _mm512_fmadd_pd(av, bv[v], acc[i][v]);
      }
    }
    for (int i = 0; i < MR; ++i) {
      __m512d scaleA = _mm512_set1_pd(sa[i]);
      for (int v = 0; v < V; ++v) {
        __m512d scale = _mm512_mul_pd(scaleA, _mm512_loadu_pd(sb + 8 * v));
        __m256 term = _mm512_cvtpd_ps(_mm512_mul_pd(acc[i][v], scale));
        float *t = total + i * NR + 8 * v;
        _mm256_storeu_ps(t, _mm256_add_ps(_mm256_loadu_ps(t), term));
      }
    }
  }
}

} // namespace fp4train::numerics::packed

#endif // defined(__x86_64__)
