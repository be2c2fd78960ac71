#!/usr/bin/env bash
# Static sm_100a report of the tcgen05 NVFP4 GEMM kernels (no GPU needed):
# lowers benchmarks/sm100a_gemm.mlir (4096^3 and 8192 x 8192 x 4096) with the
# CUDA pipeline (chip sm_100a) to PTX, assembles it with ptxas -v when the
# CUDA toolkit is there (registers, spills, shared memory), and prints per
# kernel the tile, stages, shared memory per stage, TMEM columns, MMAs per
# stage and the bounds the shared-memory and global traffic put on B200's
# dense FP4 rate (scripts/ptx_report.py --loop), then the grid's waves over
# B200's 148 SMs (one 145 KiB workgroup per SM) and the DRAM traffic of a
# wave with L2 reuse assumed (the kernel's grouped order, and launch order).
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
m, n, k = int(sys.argv[1]), int(sys.argv[2]), 4096
sms, tile = 148, 128
tiles_n, tiles = n // tile, (m // tile) * (n // tile)
waves = math.ceil(tiles / sms)
print("  %d x %d x %d: %d workgroups, %d waves over %d SMs, %.1f%% of the last wave busy"
      " (wave efficiency %.1f%%)" % (m, n, k, tiles, waves, sms, 100 * (tiles - sms * (waves - 1)) / sms,
                                    100 * tiles / (sms * waves)))
# L2 reuse assumed: a wave's workgroups read each A and B tile they share
# from DRAM once, the rest from L2. The kernel walks tiles in bands of 8 row
# tiles, column by column ([RAS1], docs/nvvm.md); in plain launch order
# (column tiles fastest) a wave would span a few rows of every column.
# NVFP4 bytes per row and K: 1/2 code, 1/16 scale. B200: 9 dense FP4
# PFLOPS, 8 TB/s.
compute = sms * 2 * tile * tile * k / 9e15
def wave(rows, cols):
    bytes_ = (rows + cols) * tile * k * (1 / 2 + 1 / 16)
    return bytes_, 100 * min(1.0, compute / (bytes_ / 8e12))
band = min(8, m // tile)
grouped = wave(band, math.ceil(sms / band))
plain = wave(math.ceil(sms / tiles_n) + (1 if sms % tiles_n else 0), min(sms, tiles_n))
print("    L2 reuse assumed, bands of %d row tiles: a wave spans %d x %d tiles, %.1f MB of"
      " operands from DRAM against %.2f us of FP4 MMAs: a DRAM bound of %.0f%% (launch order:"
      " %.1f MB, %.0f%%)" % (band, band, math.ceil(sms / band), grouped[0] / 1e6,
                           compute * 1e6, grouped[1], plain[0] / 1e6, plain[1]))
PY
done
