#!/usr/bin/env bash
# Static gfx950 report of the 4096^3 and 8192x8192x4096 MXFP4 GEMM kernels
# (no GPU needed): lowers benchmarks/gfx950_gemm_4096.mlir with
# fp4train-to-amdgpu (chip=gfx950, mfma=32x32x64 and then 16x16x128) and
# the rest of the ROCm pipeline to gfx950
# assembly (LLVM's AMDGPU backend, in fp4-opt), then scripts/isa_report.py
# prints every kernel's registers, scratch, LDS and occupancy, and the main
# loop of the f32 kernel against the MFMA pipe: MFMAs per iteration, other
# instructions per MFMA by class, LDS bytes per MFMA, the MFMA's pass count
# (llvm-mca on LLVM's gfx950 model), the issue cycles left in its shadow,
# the bound that puts on MFMA pipe utilization and the fraction of MI355X's
# dense FP4 peak it implies.
#
#   benchmarks/gfx950_report.sh BUILD_DIR
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/report_setup.sh"

# The module is already quantized: recipe=none leaves it as is, and
# fp4train-to-amdgpu is the pipeline's own step. Both MFMA forms, each on
# 4096^3 and 8192 x 8192 x 4096.
for mfma in 32x32x64 16x16x128; do
  "$fp4opt" "$root/benchmarks/gfx950_gemm_4096.mlir" -o "$out/gemm-$mfma.mlir" \
    --fp4train-rocm-pipeline="recipe=none chip=gfx950 mfma=$mfma format=isa"
  echo
  echo "Static gfx950 report: MXFP4 GEMMs on v_mfma_scale $mfma" \
    "(gemm_kernel 4096^3, gemm_8192_kernel 8192x8192x4096); from the" \
    "assembly, no GPU"
  python3 "$root/scripts/isa_report.py" --loop gemm_kernel \
    --loop gemm_8192_kernel "$out/gemm-$mfma.mlir" "$out/asm-$mfma"
done
