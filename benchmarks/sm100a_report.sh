#!/usr/bin/env bash
# Static sm_100a report of the tcgen05 NVFP4 GEMM kernels (no GPU needed):
# lowers benchmarks/sm100a_gemm.mlir (4096^3 and 8192 x 8192 x 4096) with the
# CUDA pipeline (chip sm_100a) to PTX, assembles it with ptxas -v when the
# CUDA toolkit is there (registers, spills, shared memory), and prints per
# kernel the tile, stages, shared memory per stage, TMEM columns, MMAs per
# stage and the bounds the shared-memory and global traffic put on B200's
# dense FP4 rate (scripts/ptx_report.py --loop), then the grid's waves over
# B200's 148 SMs (one 145 KiB workgroup per SM).
#
#   benchmarks/sm100a_report.sh BUILD_DIR
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/report_setup.sh"

"$fp4opt" "$root/benchmarks/sm100a_gemm.mlir" -o "$out/gemm.mlir" \
  --fp4train-cuda-pipeline="recipe=none chip=sm_100a format=isa"

echo
echo "Static sm_100a report: NVFP4 GEMMs on tcgen05.mma kind::mxf4nvf4.block16" \
  "(128x128 workgroup tiles, 4-stage mbarrier pipeline); from the PTX, no GPU"
/usr/bin/python3 "$root/scripts/ptx_report.py" --chip sm_100a \
  --loop gemm_4096_kernel --loop gemm_8192_kernel "$out/gemm.mlir" "$out/ptx"
for shape in "4096 4096" "8192 8192"; do
  set -- $shape
  /usr/bin/python3 - "$1" "$2" <<'PY'
import math, sys
m, n = int(sys.argv[1]), int(sys.argv[2])
tiles = (m // 128) * (n // 128)
waves = math.ceil(tiles / 148)
print("  %d x %d x 4096: %d workgroups, %d waves over 148 SMs, %.1f%% of the last wave busy"
      " (wave efficiency %.1f%%)" % (m, n, tiles, waves, 100 * (tiles - 148 * (waves - 1)) / 148,
                                    100 * tiles / (148 * waves)))
PY
done
