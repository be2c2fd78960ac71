#!/usr/bin/env bash
# Static gfx950 report of the 4096^3 MXFP4 GEMM kernel (no GPU needed):
# lowers benchmarks/gfx950_gemm_4096.mlir with fp4train-to-amdgpu
# (chip=gfx950 mfma=32x32x64) and the rest of the ROCm pipeline to gfx950
# assembly (LLVM's AMDGPU backend, in fp4-opt), then scripts/isa_report.py
# prints every kernel's registers, scratch, LDS and occupancy, and the main
# loop of the f32 kernel against the MFMA pipe: MFMAs per iteration, other
# instructions per MFMA by class, LDS bytes per MFMA, the MFMA's pass count
# (llvm-mca on LLVM's gfx950 model), the issue cycles left in its shadow,
# and the bound that puts on MFMA pipe utilization.
#
#   benchmarks/gfx950_report.sh BUILD_DIR
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/report_setup.sh"

# The module is already quantized: recipe=none leaves it as is, and
# fp4train-to-amdgpu is the pipeline's own step.
"$fp4opt" "$root/benchmarks/gfx950_gemm_4096.mlir" -o "$out/gemm.mlir" \
  --fp4train-rocm-pipeline="recipe=none chip=gfx950 mfma=32x32x64 format=isa"

echo
echo "Static gfx950 report: 4096x4096x4096 MXFP4 GEMM, v_mfma_scale 32x32x64" \
  "(128x128 workgroup tiles); from the assembly, no GPU"
python3 "$root/scripts/isa_report.py" --loop gemm_kernel "$out/gemm.mlir" "$out/asm"
