//===- KernelEmulationTestUtils.h - Kernels vs numerics: shared helpers ---===//
//
// What the gfx950 and NVIDIA kernel emulation tests share: compiling test
// IR with a kernel pipeline, emulating @main on a chip, the input data
// (quantize inputs over many binades with special values, GEMM element and
// scale codes that are or are not exact in f32) and the comparison of a
// GEMM kernel's result with [GEMM1] (bit for bit, or within the f32
// reassociation bound stated at compareWithGemm), and the quantize,
// Hadamard and GEMM checks with the cases every NVIDIA chip runs.
//
// The declarations of the FP4TrainEmulationTestSupport library:
// KernelEmulationTestUtils.cpp (the fixture, the input data and the
// comparisons), QuantizeKernelChecks.cpp, HadamardKernelChecks.cpp (with the
// fused Hadamard + quantize kernels) and GemmKernelChecks.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_UNITTESTS_EMULATION_KERNELEMULATIONTESTUTILS_H
#define FP4TRAIN_UNITTESTS_EMULATION_KERNELEMULATIONTESTUTILS_H

#include "fp4train/Emulation/GPUEmulator.h"
#include "fp4train/Numerics/BlockGemm.h"
#include "fp4train/Numerics/BlockQuant.h"
#include "fp4train/Numerics/Formats.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace fp4train::emulation_test {

namespace emulation = mlir::fp4train::emulation;

/// Whether this binary runs under AddressSanitizer (make test-sanitize),
/// where the emulator runs about ten times slower. Cases that only repeat
/// what others run there are skipped (the normal build runs them): a chip
/// that runs another's kernels under another name, exact-data GEMMs whose
/// kernel and shape also run with full-range data (the same code and memory
/// accesses over a wider range of values), and checks of what the compiled
/// IR means rather than of how the emulator runs it.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FP4TRAIN_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FP4TRAIN_UNDER_ASAN 1
#endif
#ifdef FP4TRAIN_UNDER_ASAN
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

/// The message of a case skipped under ASan because full-range data runs
/// the same kernel and shape there.
inline constexpr const char *kFullRangeCoversExactUnderASan =
    "under ASan the full-range case runs this kernel and shape";

/// Compiles test IR (a kernel pipeline for one chip).
using CompileFn =
    llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>(const std::string &)>;
/// Emulates @main of a compiled module on one chip.
using RunFn = llvm::function_ref<std::vector<std::vector<uint8_t>>(
    mlir::ModuleOp, std::vector<emulation::EmulatorArgument>,
    emulation::EmulatorStats *)>;

/// `values` in decimal, separated by `separator`.
std::string join(const std::vector<int64_t> &values, const char *separator);
/// The number of elements of `shape`.
int64_t product(const std::vector<int64_t> &shape);
/// The bytes of `values`.
std::vector<uint8_t> asBytes(const std::vector<float> &values);
/// `name` with every character that is not a letter or digit replaced by
/// '_' (a gtest parameter name).
std::string sanitizeTestName(std::string name);

/// Parses `source` and lowers it with the passes `buildPipeline` adds.
mlir::OwningOpRef<mlir::ModuleOp>
compile(mlir::MLIRContext &context, const std::string &source,
        llvm::function_ref<void(mlir::OpPassManager &)> buildPipeline);

/// A context with every fp4train dialect loaded, and @main emulated on a
/// chip.
class KernelEmulationFixture : public ::testing::Test {
protected:
  KernelEmulationFixture();
  static mlir::DialectRegistry makeRegistry();

  /// Emulates @main of `module` on `arguments` on `chip`.
  std::vector<std::vector<uint8_t>>
  run(mlir::ModuleOp module,
      std::vector<mlir::fp4train::emulation::EmulatorArgument> arguments,
      llvm::StringRef chip,
      mlir::fp4train::emulation::EmulatorStats *stats = nullptr);

  mlir::MLIRContext context;
};

//===----------------------------------------------------------------------===//
// Quantize inputs and results (KernelEmulationTestUtils.cpp)
//===----------------------------------------------------------------------===//

/// `x` rounded to bf16 (nearest even, APFloat: independent of the kernels).
float roundToBF16(float x);

/// Values over many binades, rounded to `input`'s precision (f32, bf16,
/// f16); with `specials` (and at least 256 values), a zero block,
/// subnormals, ties, ±Inf and NaN, and values that floor scales push past
/// the largest element.
std::vector<float> makeQuantizeData(int64_t count, const std::string &input,
                                    bool specials, uint32_t seed);

/// The bytes of `data` as a tensor of `input` (exact: the data is already
/// rounded to it).
std::vector<uint8_t> encodeInput(const std::vector<float> &data,
                                 const std::string &input);

/// Counts the bytes where `kernel` and `library` differ, reporting the first
/// few as "`what` I: kernel K, library L".
int compareCodes(const std::vector<uint8_t> &kernel,
                 const std::vector<uint8_t> &library, const char *what,
                 const std::vector<float> *inputs = nullptr);

/// [PK1] A kernel's stored codes of a tensor of `shape` and element `type`,
/// one code per byte again; a size mismatch is a failure (and gives the
/// stored bytes unchanged, so that the comparison reports it).
std::vector<uint8_t> loadStoredCodes(const std::vector<uint8_t> &stored,
                                     numerics::ElementType type,
                                     const std::vector<int64_t> &shape);
/// loadStoredCodes of a quantize kernel's codes, in `expected`'s format.
std::vector<uint8_t> loadStoredCodes(const std::vector<uint8_t> &stored,
                                     const numerics::QuantizedTensor &expected);

/// Counts the elements where the f32 bytes `kernel` and `library` differ
/// in their bits, reporting the first few as "`what` I: kernel K, library L".
int compareFloatBits(const std::vector<uint8_t> &kernel,
                     const std::vector<float> &library, const char *what);

/// The library's configuration of a quantize with 1-D blocks along the last
/// dimension (16 for NVFP4, 32 otherwise), [SR1] with `seed` when
/// `stochastic`, and an NVFP4 amax_tensor `amax` when supplied.
numerics::QuantConfig getLibraryConfig(numerics::Format format, bool stochastic,
                                       uint64_t seed,
                                       std::optional<float> amax);

/// Compares a quantize op's results (codes, scales[, S_dec]) with the
/// library's `expected`, of `inputs`; returns the number of mismatches.
int compareQuantized(const std::vector<std::vector<uint8_t>> &results,
                     const numerics::QuantizedTensor &expected,
                     const std::vector<float> &inputs);

//===----------------------------------------------------------------------===//
// Quantize kernels (QuantizeKernelChecks.cpp)
//===----------------------------------------------------------------------===//

enum class Amax { None, Computed, Supplied };

struct QuantizeCase {
  std::vector<int64_t> shape;
  numerics::Format format;
  std::string input; // f32, bf16
  bool rceil;
  bool specials;
  bool stochastic = false;
  /// NVFP4 only: how amax_tensor is obtained.
  Amax amax = Amax::None;
  /// NVFP4 only: 16x16 blocks over the last two dimensions.
  bool twoD = false;
};

/// The MLIR element type of `format`'s codes (f4E2M1FN, f8E4M3FN, f8E5M2).
std::string getElementName(numerics::Format format);
std::string getQuantizeTestName(const QuantizeCase &c);
void PrintTo(const QuantizeCase &c, std::ostream *os);

/// Compiles an fp4train.quantize of `c` with `compileSource`, emulates it
/// with `run` and compares codes, scales and the NVFP4 S_dec bit for bit
/// with numerics::quantize.
/// `fp4Conversions`: the chip converts to E2M1 in hardware (not sm_90a).
void checkQuantizeKernel(const QuantizeCase &c, CompileFn compileSource,
                         RunFn run, bool fp4Conversions = true);

/// The quantize cases every NVIDIA chip runs.
std::vector<QuantizeCase> getQuantizeCases();

//===----------------------------------------------------------------------===//
// Hadamard and fused Hadamard + quantize kernels (HadamardKernelChecks.cpp)
//===----------------------------------------------------------------------===//

struct HadamardCase {
  std::vector<int64_t> shape;
  int64_t size;
  int64_t axis;
  std::string signs; // none, fixed, random
  bool inverse;
};

void PrintTo(const HadamardCase &c, std::ostream *os);
std::string getHadamardTestName(const HadamardCase &c);

/// Compiles an fp4train.hadamard of `c` with `compileSource`, emulates it
/// with `run` and compares the rotated tensor bit for bit with
/// numerics::hadamardRotate (random signs: the same seed and step).
void checkHadamardKernel(const HadamardCase &c, CompileFn compileSource,
                         RunFn run);

/// `%r = fp4train.hadamard %x ... along <last>` then `fp4train.quantize %r`
/// with 1-D blocks along the last dimension (the Wgrad form of the Hadamard
/// recipes).
struct HadamardQuantizeCase {
  std::vector<int64_t> shape;
  int64_t size;
  std::string signs; // none, fixed, random
  numerics::Format format;
  std::string input = "f32"; // f32, or bf16 through arith.extf
  bool stochastic = false;
  /// NVFP4: amax_tensor computed from the rotated tensor (else supplied).
  bool computedAmax = true;
  /// @main also returns the rotation (a use the fused kernel does not take).
  bool returnRotation = false;
  bool inverse = false;
};

std::string getHadamardQuantizeTestName(const HadamardQuantizeCase &c);
void PrintTo(const HadamardQuantizeCase &c, std::ostream *os);

/// Compiles `c` with `compileSource`, emulates it with `run` and compares
/// the codes, scales and NVFP4 S_dec bit for bit with numerics::
/// hadamardRotate followed by numerics::quantize on the same data (the same
/// seeds), and the rotation itself when @main returns it. Expects one
/// launch (the fused kernel), two for NVFP4 with a computed amax (the
/// rotate+amax kernel first), one more for a returned rotation (the
/// Hadamard kernel).
void checkHadamardQuantizeKernel(const HadamardQuantizeCase &c,
                                 CompileFn compileSource, RunFn run);

/// The Hadamard cases every NVIDIA chip runs.
std::vector<HadamardCase> getHadamardCases();

//===----------------------------------------------------------------------===//
// GEMM operands, the comparison with [GEMM1] and GEMM kernels
// (GemmKernelChecks.cpp)
//===----------------------------------------------------------------------===//

/// The element type of an MLIR element type name (f4E2M1FN, f8E4M3FN,
/// anything else: f8E5M2).
numerics::ElementType getElementType(const std::string &element);

/// Random element codes: `exact` draws from values whose products and sums
/// stay exact in f32 (E2M1: all codes; FP8: magnitudes in [0.5, 4) or 0),
/// otherwise from every finite code.
std::vector<uint8_t> makeCodes(int64_t count, const std::string &element,
                               bool exact, std::mt19937 &rng);

/// E8M0 scale codes: 2^-1..2^1 when `exact`, else 2^-20..2^20.
std::vector<uint8_t> makeScales(int64_t count, bool exact, std::mt19937 &rng);

/// Decodes a GEMM result of `count` elements: f32, or bf16 widened.
std::vector<float> decodeGemmResult(const std::vector<uint8_t> &bytes,
                                    size_t count, bool bf16);

/// Compares `kernel` (a.rows x b.rows, row-major; bf16 values widened when
/// `bf16`) with [GEMM1] of `a` x `b` on `acc` (numerics::blockScaledGemm,
/// rounded to bf16 nearest even when `bf16`):
///  - `exact`: bit for bit;
///  - otherwise within the f32 reassociation bound of the two orders. The
///    kernel rounds once per MMA instruction (each covers one or more K
///    blocks) plus twice in the epilogue (g · T, + acc), [GEMM1] once per
///    block plus twice, so with nb = K / blockSize blocks
///      |kernel - library| <= 2 (nb + 2) 2^-24 (g Σ_b |term_b| + |acc|)
///                            + 2^-149,
///    term_b = sa sb Σ_{k∈b} |a b|, g the product of the global decode
///    scales; bf16 adds one bf16 ulp.
/// Returns the number of mismatches, the first few reported with `where`.
int compareWithGemm(const numerics::GemmOperand &a,
                    const numerics::GemmOperand &b, const float *acc,
                    const float *kernel, bool exact, bool bf16,
                    const std::string &where, bool report = true);

/// An operand's format: mxfp4, nvfp4 (1-D blocks of 16), nvfp4-2d (16x16
/// blocks, the weight layout), e4m3, e5m2 (MXFP8).
struct GemmCase {
  int64_t batch, m, n, k;
  std::string formatA, formatB;
  /// The result's only use is an arith.truncf to bf16 (the kernel's bf16
  /// epilogue); compared with the library's result rounded to bf16.
  bool bf16 = false;
};

std::string getGemmTestName(const GemmCase &c);
void PrintTo(const GemmCase &c, std::ostream *os);

/// The operand data checkGemmKernel draws (makeGemmInput and the scale
/// generators are in GemmKernelChecks.cpp).
enum class GemmData {
  /// Every partial sum exact in f32 (makeGemmInput's `exact`).
  Exact,
  /// Every finite element code, scales 2^-20..2^20 (E8M0) or every finite
  /// nonzero UE4M3.
  FullRange,
  /// FullRange elements with makeExtremeScales.
  ExtremeScales,
  /// FullRange elements with makeMixedScales.
  MixedScales,
  /// FullRange elements with makeFoldScales.
  FoldScales,
  /// FullRange elements with makeWindowEdgeScales.
  WindowEdgeScales,
};

/// Compiles an fp4train.scaled_matmul of `c` with `compileSource`, applies
/// `mutate` (when given) to the lowered module, emulates it with `run` on
/// `data` and compares with [GEMM1] (compareWithGemm: bit for bit when
/// `bitForBit`, else within the reassociation bound).
/// Returns the number of mismatching elements, or -1 when the module did
/// not compile or the run gave no result; with `report` false nothing is
/// reported as a failure (the negative checks expect mismatches).
int checkGemmKernel(const GemmCase &c, GemmData data, bool bitForBit,
                    CompileFn compileSource, RunFn run,
                    llvm::function_ref<void(mlir::ModuleOp)> mutate = {},
                    bool report = true);

} // namespace fp4train::emulation_test

#endif // FP4TRAIN_UNITTESTS_EMULATION_KERNELEMULATIONTESTUTILS_H
