//===- KernelUtils.h - Helpers of every GPU kernel builder ------*- C++ -*-===//
//
// What the GEMM skeleton (GemmKernel.h), the tcgen05 kernel and the
// transpose kernel share: index arithmetic, structured branches, the
// launch's dynamic shared memory, and the guarded loads of stored codes
// ([PK1]) and block scale codes from global memory.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_KERNELUTILS_H
#define FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_KERNELUTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::fp4train {

/// One GEMM operand in global memory, as a kernel reads it: A (lhs rows x
/// K) or B^T (rhs rows x K).
struct GemmGlobalOperand {
  /// memref<batch x rows x stored K bytes x i8>: [PK1], E2M1 two codes per
  /// byte, FP8 one.
  Value codes;
  /// memref<batch x rows / blockRows x K / blockSize x i8>.
  Value scales;
  int64_t rows = 0;
  /// Rows sharing one scale row: 1, or 16 for 16x16 (2-D) blocks.
  int64_t blockRows = 1;
};

/// Index arithmetic for kernel builders (constants folded where trivial).
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v);
  Value add(Value x, Value y);
  Value add(Value x, int64_t y);
  Value mul(Value x, int64_t y);
  Value div(Value x, int64_t y);
  Value rem(Value x, int64_t y);
  /// x < y, unsigned.
  Value lt(Value x, int64_t y);
  /// x && y, where a null condition is true.
  Value both(Value x, Value y);
};

/// [RAS1] The output tile (row tile, column tile) of workgroup (`x`, `y`)
/// of a `tilesN` x `tilesM` grid, in a grouped order: the grid's linear id
/// `x + tilesN * y` walks bands of `group` row tiles column by column (the
/// last band holds what is left), so the workgroups running at once share
/// fewer A and B tiles' worth of DRAM traffic than in launch order. A
/// bijection of the grid's tiles.
std::pair<Value, Value> getGroupedTile(OpBuilder &b, Location loc, Value x,
                                       Value y, int64_t tilesN, int64_t tilesM,
                                       int64_t group);
/// The same order for the linear id `id` (< tilesN * tilesM) itself, as a
/// persistent kernel walks it.
std::pair<Value, Value> getGroupedTile(OpBuilder &b, Location loc, Value id,
                                       int64_t tilesN, int64_t tilesM,
                                       int64_t group);

/// `cond ? thenFn() : elseFn()` as an scf.if yielding one value, or thenFn()
/// when `cond` is null; the callbacks build with `b`, whose insertion point
/// is inside the branch while they run.
Value buildIf(OpBuilder &b, Location loc, Value cond,
              function_ref<Value()> thenFn, function_ref<Value()> elseFn);
/// `if (cond) thenFn()`, or thenFn() when `cond` is null.
void buildIf(OpBuilder &b, Location loc, Value cond,
             function_ref<void()> thenFn);
/// `if (cond) thenFn() else elseFn()` (`cond` not null).
void buildIfElse(OpBuilder &b, Location loc, Value cond,
                 function_ref<void()> thenFn, function_ref<void()> elseFn);

/// The launch's dynamic shared memory as bytes: gpu.dynamic_shared_memory,
/// memref<? x i8, #gpu.address_space<workgroup>>.
Value buildDynamicSharedBytes(OpBuilder &b, Location loc);

/// The bytes (index) from the start of the shared buffer `memory` to its
/// first `alignment`-aligned address (the 128-byte swizzle's tiles need
/// 1024); the allocation must have that much slack.
Value buildAlignmentPad(OpBuilder &b, Location loc, Value memory,
                        int64_t alignment);

/// The `bytes` stored code bytes (vector<bytes x i8>, 8 or 16) at (batch,
/// row, byte `col`) of `op`, zeros when `inBounds` (may be null) is false.
/// The caller picks chunks that are wholly inside or outside the shape and
/// `bytes`-aligned (getGemmChunkBytes).
Value loadCodeChunk(OpBuilder &b, Location loc, const GemmGlobalOperand &op,
                    Value batch, Value row, Value col, int64_t bytes,
                    Value inBounds);

/// Bytes per global load of a row of `k` codes of `element`, stored as
/// [PK1] says: 16, or 8 for E2M1 rows of K = 16 (mod 32) (NVFP4), whose
/// K / 2 bytes are a multiple of 8 only. Either way a chunk holds whole
/// blocks and starts at a multiple of its size in 64-byte aligned buffers.
int64_t getGemmChunkBytes(Type element, int64_t k);

/// The scale codes of blocks [firstBlock, firstBlock + count) of global
/// row `row` of `op` (vector<count x i8>; batch entry `batch`), code 0 when
/// `rowInBounds` (may be null) is false and past the row's `kBlocks` blocks:
/// one aligned vector load when kBlocks is a multiple of `count`, else one
/// guarded byte load per block.
Value loadScaleCodes(OpBuilder &b, Location loc, const GemmGlobalOperand &op,
                     Value batch, Value row, Value rowInBounds,
                     Value firstBlock, int64_t count, int64_t kBlocks);

} // namespace mlir::fp4train

#endif // FP4TRAIN_CONVERSION_FP4TRAINGPUCOMMON_KERNELUTILS_H
