#!/usr/bin/env python3
"""Per-kernel report of the gfx950 assembly embedded in a module.

Reads the output of `fp4-opt --fp4train-rocm-pipeline="... format=isa"`,
writes each kernel's assembly to OUT_DIR/<kernel>.s, and prints one line per
kernel: the block-scaled MFMAs in its main loop (the body between a loop
label and the branch back to it; for quantize kernels, the scaled
conversions), VGPRs, AGPRs, spills, scratch and LDS bytes
from the code object metadata, and the occupancy those imply on gfx950 (waves
per SIMD: 512 unified VGPR+AGPR registers per lane allocated in units of 8,
at most 8 waves; 160 KiB of LDS per CU shared by workgroups whose waves
spread over the CU's 4 SIMDs).

    isa_report.py MODULE.mlir OUT_DIR
"""
import os
import re
import sys

BINARY = re.compile(r'gpu\.binary @(\w+)\s*\[#gpu\.object<#rocdl\.target<[^>]*>,\s*(?:\w+ = )?"((?:[^"\\]|\\.)*)"')
MFMA = re.compile(r"v_mfma_scale_f32_(\w+)_f8f6f4")
CONVERT = re.compile(r"v_cvt_scalef32_(?:sr_)?pk_\w+")


def unescape(text):
    # MLIR string attributes escape bytes as \XX (hex) plus \\ and \".
    return re.sub(r"\\([0-9A-Fa-f]{2}|\\|\")",
                  lambda m: m.group(1) if m.group(1) in ('\\', '"')
                  else chr(int(m.group(1), 16)), text)


def main_loop_mfmas(asm):
    """MFMAs per iteration of the innermost loop that holds any."""
    lines = asm.splitlines()
    best = None
    for i, line in enumerate(lines):
        label = re.match(r"^(\.LBB\w+):", line)
        if not label:
            continue
        for j in range(i + 1, len(lines)):
            if re.search(r"s_c?branch\w*\s+%s\b" % re.escape(label.group(1)), lines[j]):
                body = lines[i:j]
                count = sum(1 for l in body if MFMA.search(l))
                if count and (best is None or len(body) < best[1]):
                    forms = sorted(set(m.group(1) for l in body for m in [MFMA.search(l)] if m))
                    best = (count, len(body), forms)
                break
    return best


def field(asm, name):
    match = re.search(r"\.%s:\s*(\d+)" % name, asm)
    return int(match.group(1)) if match else 0


def occupancy(asm):
    registers = field(asm, "vgpr_count") + field(asm, "agpr_count")
    by_registers = 512 // max(8, -(-registers // 8) * 8)
    lds = field(asm, "group_segment_fixed_size")
    by_lds = (160 * 1024) // lds if lds else 8
    return min(8, by_registers, by_lds)


def main():
    module, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    text = open(module).read()
    print("%-22s %-36s %5s %5s %6s %7s %6s %9s" % ("kernel", "MFMAs/loop iter", "VGPR", "AGPR", "spills", "scratch", "LDS", "waves/SIMD"))
    for name, escaped in BINARY.findall(text):
        asm = unescape(escaped)
        with open(os.path.join(out_dir, name + ".s"), "w") as f:
            f.write(asm)
        loop = main_loop_mfmas(asm)
        converts = CONVERT.findall(asm)
        if loop:
            mfmas = "%d x %s" % (loop[0], "/".join(loop[2]))
        elif MFMA.search(asm):
            mfmas = "no loop (%d total)" % len(MFMA.findall(asm))
        elif converts:
            # A quantize kernel: its scaled conversions instead.
            mfmas = "quantize: %d x %s" % (len(converts), converts[0][6:])
        else:
            mfmas = "-"
        print("%-22s %-36s %5d %5d %6d %7d %6d %9d" % (
            name, mfmas, field(asm, "vgpr_count"), field(asm, "agpr_count"),
            field(asm, "vgpr_spill_count"),
            field(asm, "private_segment_fixed_size"),
            field(asm, "group_segment_fixed_size"), occupancy(asm)))


if __name__ == "__main__":
    main()
