//===- Runtime.h - CPU runtime entry points of the fp4train ops -*- C++ -*-===//
//
// The C ABI that `fp4train-to-runtime` lowers fp4train ops to: one entry
// point per op, taking tensors as unranked memref descriptors (the C
// interface of MLIR's func-to-llvm lowering for functions marked
// `llvm.emit_c_interface`, hence the `_mlir_ciface_` prefix) and the op's
// static attributes as scalars. Every entry point forwards to the numerics
// library (BlockQuant.h, Hadamard.h, BlockGemm.h), which stays the single
// source of truth: the runtime path and the `fp4train-expand` path agree bit
// for bit because both agree with it.
//
// Block-scaled tensors use the layout of the expansion (FP4TrainToStandard.h):
// element codes stored as [PK1] says (fp4train/Numerics/Storage.h: E2M1 two
// per byte along the last dimension, FP8 one per byte), an i8 tensor of
// shape [..., ceil(n/2)] or of the logical shape; block scale codes as an
// i8 tensor of shape `shape / block`, and an f32 global decode scale (S_dec of
// [NV1]) passed by value.
//
// The runtime is plain C++ with no MLIR library dependency (only the memref
// descriptor structs of CRunnerUtils.h), so it can be linked into a JIT host,
// or into a shared library for mlir-runner.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_RUNTIME_RUNTIME_H
#define FP4TRAIN_RUNTIME_RUNTIME_H

#include "fp4train/Numerics/BlockQuant.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstdint>
#include <optional>
#include <vector>

/// Block formats, the `format` argument of the entry points.
enum Fp4trainRtFormat : int32_t {
  FP4TRAIN_RT_MXFP4 = 0,
  FP4TRAIN_RT_NVFP4 = 1,
  FP4TRAIN_RT_MXFP8_E4M3 = 2,
  FP4TRAIN_RT_MXFP8_E5M2 = 3,
};

/// Bits of the `flags` argument describing a block-scaled tensor and how it
/// is quantized.
enum Fp4trainRtFlags : int32_t {
  /// 16x16 tiles over the last two dimensions instead of 1-D blocks.
  FP4TRAIN_RT_TWO_D = 1 << 0,
  /// [MX2] rceil scales instead of [MX1] floor.
  FP4TRAIN_RT_RCEIL = 1 << 1,
  /// [SR1] stochastic rounding with the `seed` argument.
  FP4TRAIN_RT_STOCHASTIC = 1 << 2,
  /// [NV1] amax_tensor is the `amax` argument (delayed scaling).
  FP4TRAIN_RT_SUPPLIED_AMAX = 1 << 3,
  /// NVFP4 without a global scale: S_enc = S_dec = 1.
  FP4TRAIN_RT_NO_GLOBAL = 1 << 4,
};

/// Where the sign vector of a Hadamard rotation comes from ([H1]).
enum Fp4trainRtSigns : int32_t {
  FP4TRAIN_RT_SIGNS_NONE = 0,
  /// The library's default fixed vector for the size.
  FP4TRAIN_RT_SIGNS_FIXED = 1,
  /// Drawn from Philox(seed, step).
  FP4TRAIN_RT_SIGNS_RANDOM = 2,
  /// The `signs` argument (a fixed vector spelled out in the attribute).
  FP4TRAIN_RT_SIGNS_EXPLICIT = 3,
};

extern "C" {

/// Quantizes `input` (f32, any shape and strides) into `codes` (i8, the
/// [PK1] stored shape) and `scales` (i8, the scale shape) with 1-D blocks of
/// `blockSize` along `axis`, or 16x16 tiles (FP4TRAIN_RT_TWO_D). `seed` is used
/// with FP4TRAIN_RT_STOCHASTIC and `amax` with FP4TRAIN_RT_SUPPLIED_AMAX.
/// `part` (i64) is empty for a whole tensor, or holds the origin and then
/// the logical shape of a part of a larger tensor ([SH3], 2 x rank entries).
/// Returns the global decode scale S_dec (1 for the MX formats and for NVFP4
/// with FP4TRAIN_RT_NO_GLOBAL).
float _mlir_ciface_fp4train_rt_quantize(UnrankedMemRefType<float> *input,
                                        UnrankedMemRefType<int8_t> *codes,
                                        UnrankedMemRefType<int8_t> *scales,
                                        int32_t format, int64_t blockSize,
                                        int64_t axis, int32_t flags,
                                        int64_t seed, float amax,
                                        UnrankedMemRefType<int64_t> *part);

/// Decodes `codes` and `scales` (the layout `quantize` writes) with the
/// global decode scale `globalDecode` into `result` (f32), whose shape is
/// the logical one.
void _mlir_ciface_fp4train_rt_dequantize(UnrankedMemRefType<int8_t> *codes,
                                         UnrankedMemRefType<int8_t> *scales,
                                         UnrankedMemRefType<float> *result,
                                         int32_t format, int64_t blockSize,
                                         int64_t axis, int32_t flags,
                                         float globalDecode);

/// Rotates blocks of `size` elements of `input` along `dim` into `result`
/// ([H1]); `signs` is read with FP4TRAIN_RT_SIGNS_EXPLICIT only (otherwise
/// it may be empty), `seed` and `step` with FP4TRAIN_RT_SIGNS_RANDOM only.
void _mlir_ciface_fp4train_rt_hadamard(UnrankedMemRefType<float> *input,
                                       UnrankedMemRefType<float> *result,
                                       UnrankedMemRefType<float> *signs,
                                       int64_t size, int64_t dim,
                                       int32_t signMode, int64_t seed,
                                       int64_t step, int32_t inverse);

/// [GEMM1] result = acc + g · lhs · rhsᵀ for lhs [batch..., M, K] and rhs
/// [batch..., N, K], both blocked along K by `blockSize` (1-D, or 16x16 tiles
/// with FP4TRAIN_RT_TWO_D in the operand's flags). K is that of the scales
/// (their last dimension times `blockSize`).
void _mlir_ciface_fp4train_rt_scaled_matmul(
    UnrankedMemRefType<int8_t> *lhsCodes, UnrankedMemRefType<int8_t> *lhsScales,
    UnrankedMemRefType<int8_t> *rhsCodes, UnrankedMemRefType<int8_t> *rhsScales,
    UnrankedMemRefType<float> *acc, UnrankedMemRefType<float> *result,
    int32_t lhsFormat, int32_t lhsFlags, float lhsGlobalDecode,
    int32_t rhsFormat, int32_t rhsFlags, float rhsGlobalDecode,
    int64_t blockSize);

/// [IDX1] Records that check `site` of fp4train-check-indices failed: index
/// `index` of dimension `dim` is outside [0, `size`). The first failure of
/// a call on this thread is kept until takeIndexError.
void fp4train_rt_index_error(int64_t site, int64_t dim, int64_t index,
                             int64_t size);

} // extern "C"

namespace fp4train::runtime {

/// The names `fp4train-to-runtime` declares (without the `_mlir_ciface_`
/// prefix that func-to-llvm adds to the C interface).
inline constexpr const char *kQuantizeFunction = "fp4train_rt_quantize";
inline constexpr const char *kDequantizeFunction = "fp4train_rt_dequantize";
inline constexpr const char *kHadamardFunction = "fp4train_rt_hadamard";
inline constexpr const char *kScaledMatmulFunction =
    "fp4train_rt_scaled_matmul";

/// The library configuration the quantize and dequantize entry points use
/// for these arguments (not yet validated against a shape: see
/// `numerics::validateConfig`). The lowering calls it at compile time to
/// reject what the runtime would.
numerics::QuantConfig makeQuantConfig(int32_t format, int64_t blockSize,
                                      int64_t axis, int32_t flags, int64_t seed,
                                      float amax);

/// The name fp4train-check-indices calls when a check fails.
inline constexpr const char *kIndexErrorFunction = "fp4train_rt_index_error";

/// A failed check of fp4train-check-indices.
struct IndexError {
  int64_t site, dim, index, size;
};

/// The first check that failed on this thread since the last call, if any;
/// clears it. A JIT host calls it after each call of a checked function.
std::optional<IndexError> takeIndexError();

/// A symbol a JIT must resolve to run lowered code in this process.
struct Symbol {
  const char *name;
  void *address;
};

/// Every C-interface entry point with its address, and the `memrefCopy` that
/// lowered copies call, for JITs that resolve symbols in process (e.g.
/// `ExecutionEngine::registerSymbols`).
std::vector<Symbol> getSymbols();

} // namespace fp4train::runtime

#endif // FP4TRAIN_RUNTIME_RUNTIME_H
