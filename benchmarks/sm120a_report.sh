#!/usr/bin/env bash
# Static report of the 4096^3 NVFP4 GEMM kernel on an NVIDIA chip (no GPU
# needed): lowers benchmarks/sm120a_gemm_4096.mlir with the CUDA pipeline
# (chip sm_120a, or CHIP: sm_90a) to PTX, assembles it with ptxas -v when
# the CUDA toolkit is there (registers, spills, shared memory, occupancy),
# and prints the main loop's PTX statements per warp and iteration against
# the tensor-core rate (scripts/ptx_report.py --loop).
#
#   benchmarks/sm120a_report.sh BUILD_DIR [CHIP]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/report_setup.sh"
chip=${2:-sm_120a}

"$fp4opt" "$root/benchmarks/sm120a_gemm_4096.mlir" -o "$out/gemm.mlir" \
  --fp4train-cuda-pipeline="recipe=none chip=$chip format=isa"

if [[ $chip == sm_120a ]]; then
  mma="mma.sync m16n8k64 kind::mxf4nvf4 (K steps of 128 per loop iteration)"
else
  mma="E2M1 widened to E4M3, mma.sync m16n8k16 e4m3 per 16-element block and" \
  mma="$mma f32 scaling (one block per loop iteration)"
fi
echo
echo "Static $chip report: 4096x4096x4096 NVFP4 GEMM, $mma, 128x128 workgroup" \
  "tiles; from the PTX, no GPU"
/usr/bin/python3 "$root/scripts/ptx_report.py" --loop gemm_kernel "$out/gemm.mlir" "$out/ptx"
