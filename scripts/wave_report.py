#!/usr/bin/env python3
"""Waves and DRAM traffic of a GEMM grid, for the static kernel reports
(benchmarks/sm100a_report.sh, sm120a_report.sh): how many waves of one
workgroup per SM the grid of `tile` x `tile` output tiles takes, and, with
L2 reuse assumed (a wave's workgroups read each A and B tile they share
from DRAM once, the rest from L2) plus the C tiles it writes (--out-bytes
per element: 4 for f32, 2 for bf16), the DRAM time of a wave against its
MMAs at the chip's peak, in the kernels' grouped order ([RAS1], bands of `band`
row tiles walked column by column, docs/nvvm.md) and in plain launch order
(column tiles fastest). With --persistent the grid is one workgroup per SM
that walks the tiles itself (the sm_100a kernel): the waves are its rounds.
With --staging READ WRITE the operands first go through kernels that read
and write that many bytes per element ([WG4], docs/nvvm.md); their DRAM time
is added to the GEMM's at --issue-bound percent of the peak for the
end-to-end fraction.

    wave_report.py --sms 148 --tflops 9000 --dram 8 --bytes 0.5625 M N K
"""
import argparse
import math


def wave_bytes(rows, cols, tile, k, bytes_per_element):
    return (rows + cols) * tile * k * bytes_per_element


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sms", type=int, required=True, help="SMs (one workgroup each)")
    parser.add_argument("--tflops", type=float, required=True, help="dense peak of the MMA format")
    parser.add_argument("--dram", type=float, required=True, help="DRAM TB/s")
    parser.add_argument("--bytes", type=float, required=True,
                        help="global bytes per operand element (codes and scales)")
    parser.add_argument("--out-bytes", type=int, default=4,
                        help="bytes per element of C written (4: f32, 2: bf16)")
    parser.add_argument("--tile", type=int, default=128)
    parser.add_argument("--band", type=int, default=8, help="row tiles per band ([RAS1])")
    parser.add_argument("--persistent", action="store_true",
                        help="one workgroup per SM walks the tiles (rounds, not waves)")
    parser.add_argument("--staging", type=float, nargs=2, metavar=("READ", "WRITE"),
                        help="bytes per operand element read and written by kernels before the GEMM")
    parser.add_argument("--issue-bound", type=float, default=100,
                        help="the GEMM kernel's bound in percent of the peak (with --staging)")
    parser.add_argument("m", type=int)
    parser.add_argument("n", type=int)
    parser.add_argument("k", type=int)
    args = parser.parse_args()
    sms, tile = args.sms, args.tile
    tiles_m, tiles_n = math.ceil(args.m / tile), math.ceil(args.n / tile)
    tiles = tiles_m * tiles_n
    waves = math.ceil(tiles / sms)
    last = 100 * (tiles - sms * (waves - 1)) / sms
    if args.persistent:
        print("  %d x %d x %d: %d tiles on %d persistent workgroups, %d rounds, %.1f%% of the"
              " last round busy (efficiency %.1f%%)" % (
                  args.m, args.n, args.k, tiles, min(sms, tiles), waves, last,
                  100 * tiles / (sms * waves)))
    else:
        print("  %d x %d x %d: %d workgroups, %d waves over %d SMs, %.1f%% of the last wave busy"
              " (wave efficiency %.1f%%)" % (
                  args.m, args.n, args.k, tiles, waves, sms, last, 100 * tiles / (sms * waves)))
    resident = min(sms, tiles)
    compute = resident * 2 * tile * tile * args.k / (args.tflops * 1e12)

    def bound(bytes_):
        return 100 * min(1.0, compute / (bytes_ / (args.dram * 1e12)))

    band = min(args.band, tiles_m)
    grouped = wave_bytes(band, min(tiles_n, math.ceil(resident / band)), tile, args.k, args.bytes)
    plain_rows = math.ceil(resident / tiles_n) + (1 if resident % tiles_n else 0)
    plain = wave_bytes(min(tiles_m, plain_rows), min(tiles_n, resident), tile, args.k, args.bytes)
    # Every workgroup writes its C tile once (the epilogue's stores).
    out = resident * tile * tile * args.out_bytes
    print("    L2 reuse assumed, bands of %d row tiles: a wave spans %d x %d tiles, %.1f MB of"
          " operands from DRAM and %.1f MB of C (%s) written against %.2f us of MMAs at the"
          " peak: a DRAM bound of %.0f%% (launch order: %.1f MB of operands, %.0f%%)" % (
              band, band, min(tiles_n, math.ceil(resident / band)), grouped / 1e6, out / 1e6,
              {4: "f32", 2: "bf16"}.get(args.out_bytes, "%d bytes" % args.out_bytes),
              compute * 1e6, bound(grouped + out), plain / 1e6, bound(plain + out)))
    if args.staging:
        elements = (args.m + args.n) * args.k
        read, write = (elements * b for b in args.staging)
        staging = (read + write) / (args.dram * 1e12)
        mmas = 2 * args.m * args.n * args.k / (args.tflops * 1e12)
        gemm = mmas / (args.issue_bound / 100)
        print("    operands staged first ([WG4]): %.1f MB read and %.1f MB written, %.1f us at"
              " the DRAM rate; with the GEMM at %.0f%% of the peak (%.1f us), %.0f%% of the peak"
              " end to end" % (read / 1e6, write / 1e6, staging * 1e6, args.issue_bound,
                               gemm * 1e6, 100 * mmas / (gemm + staging)))
        # Each workgroup reads its A and B tiles whole, from L2 or DRAM.
        l2 = tiles * 2 * tile * args.k * args.bytes
        print("    the GEMM's workgroups read %.2f GB of operand tiles through L2: %.1f TB/s"
              " at that rate (L2 bandwidth is not in this model)" % (l2 / 1e9, l2 / gemm / 1e12))


if __name__ == "__main__":
    main()
