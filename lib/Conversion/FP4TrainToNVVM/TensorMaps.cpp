//===- TensorMaps.cpp - TMA tensor maps of staged tiles -------------------===//

#include "TensorMaps.h"

#include "fp4train/Conversion/FP4TrainGPUCommon/KernelUtils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::fp4train;

Value mlir::fp4train::buildSwizzledTileMap(OpBuilder &b, Location loc,
                                           Value codes, int64_t boxRows) {
  MLIRContext *ctx = b.getContext();
  auto box = MemRefType::get(
      {1, boxRows, kTmaBoxRowBytes}, b.getI8Type(), AffineMap(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  auto type = nvgpu::TensorMapDescriptorType::get(
      ctx, box, nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(b.getI8Type(), Attribute()), codes);
  IndexMath im{b, loc};
  Value map = nvgpu::TmaCreateDescriptorOp::create(
      b, loc, type, unranked,
      ValueRange{im.c(1), im.c(boxRows), im.c(kTmaBoxRowBytes)});
  return UnrealizedConversionCastOp::create(
             b, loc, LLVM::LLVMPointerType::get(ctx), map)
      .getResult(0);
}
