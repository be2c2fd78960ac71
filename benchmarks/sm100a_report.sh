#!/usr/bin/env bash
# Static sm_100a report of the tcgen05 NVFP4 GEMM kernels (no GPU needed):
# lowers benchmarks/sm100a_gemm.mlir (4096^3 and 8192 x 8192 x 4096) with the
# CUDA pipeline (chip sm_100a) to PTX, assembles it with ptxas -v when the
# CUDA toolkit is there (registers, spills, shared memory), and prints per
# kernel the tile, stages, shared memory per stage, TMEM columns, MMAs per
# stage and the bounds the shared-memory and global traffic put on B200's
# dense FP4 rate (scripts/ptx_report.py --loop), then the grid's waves over
# B200's 148 SMs (one 145 KiB workgroup per SM) and the DRAM traffic of a
# wave with L2 reuse assumed (launch order, and a grouped order).
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
# L2 reuse assumed: a wave's workgroups (launched x fastest: consecutive
# column tiles of a band of row tiles) read each A and B tile they share
# from DRAM once, the rest from L2. NVFP4 bytes per row and K: 1/2 code,
# 1/16 scale. B200: 9 dense FP4 PFLOPS, 8 TB/s.
rows = math.ceil(sms / tiles_n) + (1 if sms % tiles_n else 0)
cols = min(sms, tiles_n)
wave_bytes = (rows + cols) * tile * k * (1 / 2 + 1 / 16)
compute = sms * 2 * tile * tile * k / 9e15
dram = wave_bytes / 8e12
print("    L2 reuse assumed: a wave spans %d row tiles and %d column tiles, %.1f MB of operands"
      " read from DRAM once: %.2f us against %.2f us of FP4 MMAs, a DRAM bound of %.0f%%" % (
          rows, cols, wave_bytes / 1e6, dram * 1e6, compute * 1e6, 100 * min(1.0, compute / dram)))
# A grouped (rasterized) order, bands of g row tiles walked column by
# column, as persistent kernels schedule: a wave spans g x ceil(S / g).
g = round(math.sqrt(sms))
grouped = (g + math.ceil(sms / g)) * tile * k * (1 / 2 + 1 / 16)
print("    in a grouped order (bands of %d row tiles, not implemented): %d x %d tiles, %.1f MB,"
      " a DRAM bound of %.0f%%" % (g, g, math.ceil(sms / g), grouped / 1e6,
                                   100 * min(1.0, compute / (grouped / 8e12))))
PY
done
