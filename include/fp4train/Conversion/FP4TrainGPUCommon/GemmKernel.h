//===- GemmKernel.h - The shared block-scaled GEMM kernel skeleton -*- C++
//-*-===//
//
// The tiling / staging / epilogue skeleton of the block-scaled GEMM kernels
// of every GPU target (docs/amdgpu.md, docs/nvvm.md have the pictures):
//
//  - the workgroup computes a tileM x tileN tile of C for one batch entry
//    with subgroupsM x subgroupsN subgroups, each owning repM x repN MMA
//    instruction tiles; the grid is (ceil(N / tileN), ceil(M / tileM),
//    batch), and workgroup (x, y) takes the output tile of the grouped
//    order ([RAS1], getGroupedTile: bands of kGemmRasterRows row tiles);
//  - K advances kGemmTileK = 128 elements per step (4 MX blocks of 32 or 8
//    NVFP4 blocks of 16). Each step's A and B^T tiles (codes and block
//    scales) are loaded from global memory once per workgroup (16-byte
//    vectors, coalesced along K; E2M1 codes arrive two per byte, [PK1], the
//    order the staged rows keep), and stored to shared memory, converted on
//    the way where the target stages a wider type
//    (getStagedElementType); two buffers alternate, so the loads of
//    step t + 1 are in flight while step t computes, one barrier per step;
//    the main loop runs two steps, one per buffer, so that every
//    shared-memory offset is a constant;
//  - where the target asks for it (getScaleFold, [WG2] in docs/nvvm.md),
//    B^T's block scales are folded into its staged codes: a kernel per
//    operand ([WG4], buildStagedOperand) writes A and B^T in their staged
//    types before the GEMM, B^T's rows of each tile and block times
//    2^(e - r) with the block's reference r, which the GEMM stages with
//    the codes for the MMAs;
//  - the target's BlockScaledMMATargetInfo loads its fragments from the
//    staged tiles (StagedTiles gives the byte offsets) and issues its MMAs;
//  - f32 accumulators start at zero ([GEMM1]'s T); the epilogue writes
//    acc + g * T (g the NVFP4 global decode scales' product, when present),
//    in f32 or, fused with an RNE truncation that is the result's only use,
//    in bf16. Rows and columns past M/N and K past the last block read as
//    zero codes and scale code 0 (contributing +0); only in-range C is
//    written.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_GEMMKERNEL_H
#define FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_GEMMKERNEL_H

#include "fp4train/Conversion/FP4TrainGPUCommon/KernelUtils.h"
#include "fp4train/Conversion/FP4TrainGPUCommon/TargetInfoBase.h"
#include "fp4train/Dialect/FP4Train/IR/FP4TrainTypes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "mlir/Transforms/DialectConversion.h"

#include <optional>
#include <utility>

namespace mlir::fp4train {
class ScaledMatmulOp;

/// K elements staged per step of the GEMM kernels.
inline constexpr int64_t kGemmTileK = 128;
/// Row tiles per band of the grouped tile order ([RAS1], getGroupedTile).
inline constexpr int64_t kGemmRasterRows = 8;

/// How a workgroup is divided: subgroupsM x subgroupsN subgroups, each with
/// repM x repN instruction tiles.
struct GemmTiling {
  int64_t subgroupsM, subgroupsN, repM, repN;
};

/// One staged K step in shared memory, as the MMA fragment loaders see it.
/// Operand 0 is A (rows of C), operand 1 is B^T (columns of C); both are
/// K-major: row r holds the step's kGemmTileK elements of that row in the
/// staged element type, E2M1 packed two per byte (element 2i in the low
/// nibble of byte i), 8-bit formats one per byte (f16 two bytes), followed
/// by padding, or, for targets whose MMAs read shared memory through matrix
/// descriptors (BlockScaledMMATargetInfo::stagesSwizzledRows), in 128-byte
/// rows without padding in the 128-byte swizzle (16-byte chunk c of row r
/// at chunk c ^ (r % 8), each tile 1024-byte aligned; a row of 256 bytes is
/// two such tiles along K, K bytes 0..127 of every row, then 128..255);
/// each row's block scale codes (one byte per block, kGemmTileK / blockSize
/// of them) are stored separately, unless the staged values carry them
/// (BlockScaledMMATargetInfo::stagesScaledValues).
class StagedTiles {
public:
  /// The shared-memory buffer (memref<bytes x i8, workgroup>).
  Value getMemory() const { return memory; }
  /// Elements per scale block (32 for MX, 16 for NVFP4).
  int64_t getBlockSize() const { return blockSize; }
  int64_t getBlocksPerStep() const { return kGemmTileK / blockSize; }
  /// Element type (f4E2M1FN, f8E4M3FN, f8E5M2) and scale type (f8E8M0FNU,
  /// f8E4M3FN) of `operand`: the values' types.
  Type getElementType(unsigned operand) const { return elements[operand]; }
  Type getScaleType(unsigned operand) const { return scaleTypes[operand]; }
  /// The type whose codes the staged rows hold (getStagedElementType of the
  /// target): the element type, or a wider one holding the same values.
  Type getStagedElementType(unsigned operand) const {
    return stagedElements[operand];
  }
  /// True when the staged codes are E2M1, two per byte.
  bool isPacked(unsigned operand) const;
  /// Bytes of one staged row of codes, without padding.
  int64_t getRowCodeBytes(unsigned operand) const;
  /// Bits a staged element of type `staged` takes (E2M1: 4, [PK1]).
  static int64_t getStagedElementBits(Type staged);

  /// Byte offset (index) of byte `kByte` of the codes of tile row `row` of
  /// `operand` in double buffer `buffer` (0 or 1); with swizzled rows, the
  /// byte's swizzled place (for a row that is a multiple of 8, the start of
  /// a matrix descriptor's K slice: the swizzle leaves it in place).
  Value getCodesOffset(OpBuilder &b, Location loc, unsigned operand,
                       Value buffer, Value row, Value kByte) const;
  /// Byte offset of the scale code of block `block` (within the step) of
  /// tile row `row`.
  Value getScaleOffset(OpBuilder &b, Location loc, unsigned operand,
                       Value buffer, Value row, Value block) const;

  /// True when B^T's block scales are folded into its staged codes
  /// (ScaleFold).
  bool foldsScales() const { return foldBase >= 0; }
  /// With folded scales: byte offset of the step's fold references in
  /// `buffer`, one byte per block of the step: the block's reference scale
  /// code r (B^T's staged codes of that block hold their values times
  /// 2^(e - r), e the row's own scale code), or 0xFF where the block is
  /// staged unfolded. 4-byte aligned.
  Value getFoldReferencesOffset(OpBuilder &b, Location loc, Value buffer) const;

private:
  friend class GemmKernelBuilder;
  Value memory;
  /// With swizzled rows: the bytes (index) from the buffer's start to the
  /// first 1024-byte aligned address, added to every offset.
  Value pad;
  bool swizzled = false;
  int64_t blockSize = 32;
  Type elements[2], scaleTypes[2], stagedElements[2];
  int64_t tileRows[2] = {0, 0};
  int64_t rowBytes[2] = {0, 0};
  int64_t codesBase[2] = {0, 0}, scalesBase[2] = {0, 0};
  int64_t bufferBytes = 0;
  /// With folded scales: the offset, after both buffers, of the two
  /// buffers' references; -1 without.
  int64_t foldBase = -1;
};

/// [WG2] How a target has B^T's block scales folded into B^T's staged
/// codes (docs/nvvm.md; [WG4]: by buildStagedOperand, before the GEMM). Per
/// K step and block, the reference r is the
/// largest scale code of the tile's B^T rows whose codes in the block are
/// not all zero. When every such code e lies in [lo, hi] and r - e <=
/// maxDistance, the block is folded: each row's codes are staged as their
/// values times 2^(e - r), which the target's conversion must hold exactly
/// (convertStagedCodes with the table of distance r - e), so that a row and
/// column's block product is P · 2^(e - r) and the block's column factor is
/// the workgroup-uniform 2^r; the MMAs read r from the staged references
/// (StagedTiles::getFoldReferencesOffset). Otherwise the block is staged as
/// it is, reference 0xFF.
struct ScaleFold {
  uint32_t lo = 0, hi = 0, maxDistance = 0;
  /// The words convertStagedCodes takes for distance d: tables[d *
  /// wordsPerDistance, (d + 1) * wordsPerDistance), for d = 0 ..
  /// maxDistance.
  SmallVector<uint32_t> tables;
  int64_t wordsPerDistance = 0;
};

/// [WG5] One asynchronous copy of a staged tile (BlockScaledMMATargetInfo::
/// buildTileCopies): the box of `map` (buildTileMap) at K byte `kByte`, row
/// `row` and batch entry `batch` (i32 coordinates) to byte `offset` (index)
/// of the staging memory.
struct TileCopy {
  Value map, kByte, row, batch, offset;
};

/// One block-scaled MMA instruction of a target, and how a subgroup feeds it
/// from the staged tiles: `D[m x n] = C + sum_k A[m x k] * B[k x n]` with
/// f32 C/D held as vector<getAccumulatorLength() x f32> per lane.
class BlockScaledMMATargetInfo {
public:
  virtual ~BlockScaledMMATargetInfo();

  virtual const TargetInfoBase &getTarget() const = 0;
  /// The instruction's M, N and K.
  virtual int64_t getM() const = 0;
  virtual int64_t getN() const = 0;
  virtual int64_t getK() const = 0;
  /// How the workgroup tile is divided among subgroups and instructions.
  virtual GemmTiling getTiling() const = 0;

  /// Number of f32 accumulator values each lane holds per instruction.
  virtual int64_t getAccumulatorLength() const = 0;
  /// (row, column) in the instruction tile of accumulator value `index` of
  /// `lane`.
  virtual std::pair<Value, Value>
  getAccumulatorPosition(OpBuilder &b, Location loc, Value lane,
                         int64_t index) const = 0;
  /// True when accumulator values 2p and 2p + 1 of a lane are adjacent
  /// columns of one row (the bf16 epilogue then stores them as one word);
  /// otherwise the skeleton pairs the same value of N tiles j and j + 1 by
  /// permuting the staged B^T rows.
  virtual bool hasAdjacentColumnPairs() const = 0;
  /// Threads that issue one MMA together (the skeleton's subgroup): the
  /// target's subgroup size, or a multiple of it (a Hopper warpgroup).
  virtual int64_t getSubgroupThreads() const;
  /// True when the MMAs read the staged codes through shared-memory matrix
  /// descriptors in the 128-byte swizzle (StagedTiles): the staged element
  /// types are then 8-bit (a step's row is one 128-byte swizzle row) or
  /// 16-bit (two, along K).
  virtual bool stagesSwizzledRows() const { return false; }
  /// True when the staged values carry their block scales: the staged type
  /// holds element x scale exactly (getStagedElementType), the skeleton
  /// loads each chunk's block scale codes with its codes and passes them to
  /// convertStagedCodes, and stages no scale rows.
  virtual bool stagesScaledValues() const { return false; }
  /// Emitted by every thread after its stores of a stage, before the
  /// barrier that publishes it: for MMAs that read shared memory through
  /// the asynchronous proxy, the proxy fence that orders the stores before
  /// those reads.
  virtual void buildStagingFence(OpBuilder &b, Location loc) const {}
  /// The order of a staged row's scale codes: staged byte i holds the
  /// scale of the step's block getStagedScaleOrder()[i] (empty: block
  /// order), so that a target can read each lane's scales of a step with
  /// one load.
  virtual SmallVector<int64_t>
  getStagedScaleOrder(int64_t blocksPerStep) const {
    return {};
  }
  /// The element type the skeleton stages an operand of type `element` as:
  /// `element` itself, or a wider type the MMA takes that holds every value
  /// of `element` exactly. The conversion (convertStagedCodes) then runs
  /// once per workgroup as the codes go to shared memory, not once per
  /// subgroup reading them.
  virtual Type getStagedElementType(Type element) const { return element; }
  /// The staged codes (vector<n' x i8>) of `chunk`, a vector<n x i8> of
  /// `element` codes in global order ([PK1] for E2M1), where
  /// getStagedElementType(element) differs from `element`. `extra` is, with
  /// a ScaleFold, the row of its tables for the chunk's distance (i32
  /// words); with stagesScaledValues, one vector<n x i8> of the scale codes
  /// of the n blocks the chunk covers, in K order; else empty.
  virtual Value convertStagedCodes(OpBuilder &b, Location loc, Type element,
                                   Value chunk, ValueRange extra = {}) const;
  /// [WG5] True when, with operands that arrive in their staged types (a
  /// ScaleFold, [WG4]), the target copies each staged tile from global
  /// memory asynchronously (buildTileCopies) instead of the threads loading
  /// and storing it. The staged rows are then 128-byte swizzle rows.
  virtual bool copiesStagedTiles() const { return false; }
  /// Host code at `b`'s insertion point: what buildTileCopies reads `codes`
  /// (memref<batch x rows x row bytes x i8>) through, a box of `boxRows`
  /// rows of one 128-byte swizzle row each, zero past the tensor.
  virtual Value buildTileMap(OpBuilder &b, Location loc, Value codes,
                             int64_t boxRows) const;
  /// One thread: initializes the copies' completion barrier (8 bytes) at
  /// byte `offset` of the staging `memory`, for one arrival per phase.
  virtual void buildTileBarrierInit(OpBuilder &b, Location loc, Value memory,
                                    Value offset) const;
  /// One thread: arrives on the barrier at `barrier` expecting `bytes`
  /// bytes and issues `copies`, which complete on it.
  virtual void buildTileCopies(OpBuilder &b, Location loc, Value memory,
                               Value barrier, int64_t bytes,
                               ArrayRef<TileCopy> copies) const;
  /// Every thread: waits until the barrier at `barrier` has completed the
  /// phase of parity `parity` (i32, 0 or 1).
  virtual void buildTileWait(OpBuilder &b, Location loc, Value memory,
                             Value barrier, Value parity) const;

  /// The scale fold applied to B^T's staged codes (ScaleFold), or none.
  /// With a fold, both operands reach the GEMM in their staged types
  /// ([WG4], buildStagedOperand).
  virtual std::optional<ScaleFold>
  getScaleFold(const StagedTiles &tiles) const {
    return std::nullopt;
  }

  /// Emits the MMAs of one staged K step for the subgroup of `lane` whose
  /// instruction tile (i, j) starts at tile row `rowA + i * M` of A and
  /// `rowB + j * N` of B^T: accs[i * repN + j] is updated in place.
  virtual void buildStepMMAs(OpBuilder &b, Location loc,
                             const StagedTiles &tiles, Value buffer, Value lane,
                             Value rowA, Value rowB,
                             MutableArrayRef<Value> accs) const = 0;
};

/// What lowerScaledMatmulToLaunch hands a target's kernel body: the
/// operands and buffers of `C = acc + g * T` ([GEMM1]).
struct GemmProblem {
  GemmGlobalOperand a, bt;
  ScaledTensorType lhsType, rhsType;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  /// memref<batch x m x n x f32>.
  Value acc;
  /// g = S_dec,a * S_dec,b (f32) for NVFP4 operands, else null.
  Value globalScale;
  /// memref<batch x m x n x f32 or bf16>, written by the kernel.
  Value result;
  /// [WG4] With a ScaleFold: a and bt hold codes in their staged types, and
  /// this is memref<batch x ceil(n / tileN) x steps * blocks x i8>, the
  /// fold reference of every tile of B^T rows and block (0xFF: unfolded).
  Value foldReferences;
  /// [WG5] With those, where the target copies the staged tiles: the maps
  /// of A's and B^T's codes (buildTileMap).
  Value tileMaps[2];
  /// True when the kernel writes RNE-bf16(acc + g * T).
  bool isBF16Result() const;
};

/// The launch of a GEMM kernel: tileM x tileN tiles of C per workgroup on a
/// (ceil(N / tileN), ceil(M / tileM), batch) grid.
struct GemmLaunchConfig {
  int64_t tileM = 0, tileN = 0, threads = 0;
  /// A workgroup attribution memref<bytes x i8> (0: none).
  int64_t staticSharedBytes = 0;
  /// Dynamic shared memory bytes (0: none), for kernels past the 48 KiB a
  /// static allocation may have on NVIDIA chips.
  int64_t dynamicSharedBytes = 0;
  /// A persistent kernel's workgroups (0: one per output tile). The grid is
  /// then (min(tiles, persistentWorkgroups), 1, 1) and the kernel walks the
  /// output tiles of every batch entry itself.
  int64_t persistentWorkgroups = 0;
  /// Workgroups per cluster along x (1: no clusters); a persistent grid is
  /// then a whole number of clusters.
  int64_t clusterX = 1;
};

/// Rewrites `op` (operands in the 1:N conversion of fp4train-expand) into a
/// gpu.launch of `config` whose body `buildBody` fills (before the
/// terminator), the result crossing back as a tensor. When the result's
/// only use is an f32 -> bf16 RNE truncation, the result buffer is bf16 and
/// the truncation is replaced. The skeleton below and target-specific
/// kernels (tcgen05) share it.
/// `prepare`, when given, runs before the launch is built (at the launch's
/// place) and may replace the problem's operands with buffers it writes.
LogicalResult lowerScaledMatmulToLaunch(
    ScaledMatmulOp op, ValueRange lhs, ValueRange rhs, Value acc,
    const GemmLaunchConfig &config,
    function_ref<void(OpBuilder &, gpu::LaunchOp, const GemmProblem &)>
        buildBody,
    ConversionPatternRewriter &rewriter,
    function_ref<void(OpBuilder &, GemmProblem &)> prepare = {});

/// [WG4] Launches, at `b`'s insertion point, the kernel that writes operand
/// `in` (stored `element` codes in `blockSize`-element blocks, K = `k`,
/// `batch` entries) in mma's staged type of `element`, one workgroup per
/// `tileRows` rows and K step, and returns it (the same scales). With
/// `fold`, the codes of each tile of rows and block are folded as ScaleFold
/// says and `references` becomes the buffer of the references
/// (GemmProblem::foldReferences).
GemmGlobalOperand buildStagedOperand(OpBuilder &b, Location loc,
                                     const BlockScaledMMATargetInfo &mma,
                                     const GemmGlobalOperand &in, Type element,
                                     int64_t blockSize, int64_t k,
                                     int64_t batch, int64_t tileRows,
                                     const ScaleFold *fold, Value &references);

/// Emits an error on `op` naming the chip when the kernel's grid on `mma`
/// (ceil(N / tileN) x ceil(M / tileM) x batch workgroups) exceeds what a
/// launch can take: 2^31 - 1 workgroups in x, 65535 in y and z (HIP and
/// CUDA alike).
LogicalResult checkScaledMatmulKernelGrid(ScaledMatmulOp op,
                                          const BlockScaledMMATargetInfo &mma);

/// Rewrites `op` (operands in the 1:N conversion of fp4train-expand: codes,
/// scale codes and, with a global scale, the f32 decode scale) into a
/// gpu.launch of the skeleton's kernel on `mma`, the result crossing back as
/// a tensor (bufferization.to_tensor restrict writable). When the result's
/// only use is an f32 -> bf16 RNE truncation, the kernel writes bf16 and
/// replaces it. The caller has checked that `mma` can take both operands.
LogicalResult lowerScaledMatmulToKernel(ScaledMatmulOp op, ValueRange lhs,
                                        ValueRange rhs, Value acc,
                                        const BlockScaledMMATargetInfo &mma,
                                        ConversionPatternRewriter &rewriter);

} // namespace mlir::fp4train

#endif // FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_GEMMKERNEL_H
