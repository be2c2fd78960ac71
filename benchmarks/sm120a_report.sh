#!/usr/bin/env bash
# Static sm_120a report of the 4096^3 NVFP4 GEMM kernel (no GPU needed):
# lowers benchmarks/sm120a_gemm_4096.mlir with the CUDA pipeline (chip
# sm_120a) to PTX, assembles it with ptxas -v when the CUDA toolkit is there
# (registers, spills, shared memory, occupancy), and prints the main loop's
# PTX statements per warp and K step against the tensor-core rate
# (scripts/ptx_report.py --loop).
#
#   benchmarks/sm120a_report.sh BUILD_DIR
set -euo pipefail

build=${1:?usage: benchmarks/sm120a_report.sh BUILD_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fp4opt="$build/bin/fp4-opt"
if [[ ! -x "$fp4opt" ]]; then
  echo "sm120a_report.sh: $fp4opt not found; build the fp4-opt target" >&2
  exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$fp4opt" "$root/benchmarks/sm120a_gemm_4096.mlir" -o "$out/gemm.mlir" \
  --fp4train-cuda-pipeline="recipe=none chip=sm_120a format=isa"

echo
echo "Static sm_120a report: 4096x4096x4096 NVFP4 GEMM, mma.sync m16n8k64" \
  "kind::mxf4nvf4 (128x128 workgroup tiles, K steps of 128); from the PTX, no GPU"
/usr/bin/python3 "$root/scripts/ptx_report.py" --loop gemm_kernel "$out/gemm.mlir" "$out/ptx"
