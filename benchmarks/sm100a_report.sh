#!/usr/bin/env bash
# Static sm_100a report of the tcgen05 NVFP4 GEMM kernels (no GPU needed):
# lowers benchmarks/sm100a_gemm.mlir (4096^3 and 8192 x 8192 x 4096) with the
# CUDA pipeline (chip sm_100a) to PTX, assembles it with ptxas -v when the
# CUDA toolkit is there (registers, spills, shared memory), and prints per
# kernel the tile, stages, shared memory per stage, TMEM columns, MMAs per
# stage and the bounds the shared-memory and global traffic put on B200's
# dense FP4 rate (scripts/ptx_report.py --loop), then the rounds of the
# persistent grid over B200's 148 SMs (one 145 KiB workgroup per SM) and the
# DRAM traffic of a round with L2 reuse assumed (the kernel's grouped order,
# and launch order).
#
#   benchmarks/sm100a_report.sh BUILD_DIR
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/report_setup.sh"

"$fp4opt" "$root/benchmarks/sm100a_gemm.mlir" -o "$out/gemm.mlir" \
  --fp4train-cuda-pipeline="recipe=none chip=sm_100a format=isa"

echo
echo "Static sm_100a report: NVFP4 GEMMs on tcgen05.mma kind::mxf4nvf4.block16" \
  "(persistent, 128x128 tiles, 4-stage mbarrier pipeline, two TMEM accumulators); from the PTX, no GPU"
/usr/bin/python3 "$root/scripts/ptx_report.py" --chip sm_100a \
  --loop gemm_4096_kernel --loop gemm_8192_kernel "$out/gemm.mlir" "$out/ptx"

# [PAIR1] The same GEMMs on CTA pairs (gemm-cta-pair): 256 x 128 tiles,
# cta_group::2 MMAs, clusters of two.
"$fp4opt" "$root/benchmarks/sm100a_gemm.mlir" -o "$out/gemm-pair.mlir" \
  --fp4train-cuda-pipeline="recipe=none chip=sm_100a format=isa gemm-cta-pair=1"
echo
echo "The same GEMMs with gemm-cta-pair=1 (CTA pairs, 256x128 tiles, cta_group::2)"
/usr/bin/python3 "$root/scripts/ptx_report.py" --chip sm_100a \
  --loop gemm_4096_kernel "$out/gemm-pair.mlir" "$out/ptx-pair"
# B200: 148 SMs, 9 dense FP4 PFLOPS, 8 TB/s; NVFP4 global bytes per element:
# 1/2 (code) + 1/16 (UE4M3 scale).
for shape in "4096 4096" "8192 8192"; do
  set -- $shape
  /usr/bin/python3 "$root/scripts/wave_report.py" --persistent --sms 148 --tflops 9000 --dram 8 \
    --bytes 0.5625 "$1" "$2" 4096
done
