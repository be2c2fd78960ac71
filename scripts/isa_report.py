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

With --loop KERNEL (repeatable), it then analyses that kernel's main loop
against the MFMA pipe: instructions per MFMA by class, LDS and global bytes
per MFMA, and how many issue cycles the MFMA leaves for the rest (see
loop_report). llvm-mca (--mca; default /usr/lib/llvm-22/bin/llvm-mca, else
the one on PATH) gives the MFMA's pass count from LLVM's gfx950 scheduling
model.

    isa_report.py [--loop KERNEL]... [--mca LLVM_MCA] MODULE.mlir OUT_DIR
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

from gpu_binary import binaries

MFMA = re.compile(r"v_mfma_scale_f32_(\w+)_f8f6f4")
# MI355X: 256 CUs of 4 SIMDs at 2.4 GHz, 10.1 PFLOP/s dense MXFP4 (AMD's
# data sheet): about 4096 FLOP per SIMD and clock, what an 8-pass
# 32x32x64 (or 4-pass 16x16x128) FP4 MFMA per issue cycle delivers.
MI355X_FP4_PFLOPS = 10.1
MI355X_FP4_PER_SIMD_CLOCK = round(MI355X_FP4_PFLOPS * 1e15 / (256 * 4 * 2.4e9))
CONVERT = re.compile(r"v_cvt_scalef32_(?:sr_)?pk_\w+")


def main_loop(asm):
    """The lines of the innermost loop that holds MFMAs, from its label to
    the branch back to it (included), or None."""
    lines = asm.splitlines()
    best = None
    for i, line in enumerate(lines):
        label = re.match(r"^(\.LBB\w+):", line)
        if not label:
            continue
        for j in range(i + 1, len(lines)):
            if re.search(r"s_c?branch\w*\s+%s\b" % re.escape(label.group(1)), lines[j]):
                body = lines[i:j + 1]
                if any(MFMA.search(l) for l in body) and (best is None or len(body) < len(best)):
                    best = body
                break
    return best


def main_loop_mfmas(asm):
    """MFMAs per iteration of the innermost loop that holds any."""
    body = main_loop(asm)
    if body is None:
        return None
    count = sum(1 for l in body if MFMA.search(l))
    forms = sorted(set(m.group(1) for l in body for m in [MFMA.search(l)] if m))
    return (count, len(body), forms)


def field(asm, name):
    match = re.search(r"\.%s:\s*(\d+)" % name, asm)
    return int(match.group(1)) if match else 0


def occupancy(asm):
    registers = field(asm, "vgpr_count") + field(asm, "agpr_count")
    by_registers = 512 // max(8, -(-registers // 8) * 8)
    lds = field(asm, "group_segment_fixed_size")
    by_lds = (160 * 1024) // lds if lds else 8
    return min(8, by_registers, by_lds)


# --- Main loop against the MFMA pipe -----------------------------------------
#
# Issue model (CDNA3/CDNA4): a SIMD has 16 lanes, so a wave64 instruction
# occupies one issue cycle of 4 clocks, and each wave issues at most one
# instruction per issue cycle. An MFMA occupies the SIMD's matrix pipe for
# its pass count of issue cycles (a pass is 4 clocks; LLVM's scheduling
# model counts in the same unit), during which the SIMD can issue other
# instructions: with one instruction per issue cycle that is passes - 1 per
# MFMA, shared by the waves of the SIMD. Occupancy does not add issue cycles
# (it hides latency); issuing several instructions of different types in one
# cycle from different waves (VALU, SALU, LDS, VMEM, branch/message), which
# the hardware can do, only relaxes the bound to the busiest type, and MFMAs
# issue through the VALU port.
ISSUE_CLOCKS = 4
WAVE_SIZE = 64
SIMDS_PER_CU = 4
# Passes when llvm-mca is not available: LLVM 22's gfx950 model. For FP4
# operands 8 passes of 32x32x64 match MI355X's published dense MXFP4 peak
# (about 10 PFLOPS = 2 x 32 x 32 x 64 flops / 32 clocks x 4 SIMDs x 256 CUs
# x 2.4 GHz).
FALLBACK_PASSES = {"32x32x64": 8, "16x16x128": 4}
# cbsz / blgp operand formats of the f8f6f4 MFMAs.
MFMA_FORMATS = {0: "fp8", 1: "bf8", 2: "fp6", 3: "bf6", 4: "fp4"}
CLASSES = ("VALU", "SALU", "LDS", "global", "waitcnt", "other")
OTHER_SCALAR = ("s_nop", "s_barrier", "s_branch", "s_cbranch", "s_setprio",
                "s_sleep", "s_sched", "s_endpgm", "s_load", "s_buffer_load",
                "s_store", "s_dcache", "s_icache", "s_sendmsg", "s_trap",
                "s_getreg", "s_setreg", "s_memtime", "s_memrealtime")


def mnemonics(body):
    """The mnemonics of the instructions in `body` (labels, directives and
    comments skipped)."""
    result = []
    for line in body:
        text = line.split(";")[0].strip()
        if text and not text.startswith(".") and not text.endswith(":"):
            result.append(text.split()[0])
    return result


def classify(mnemonic):
    if mnemonic.startswith(("v_mfma", "v_smfmac")):
        return "MFMA"
    if mnemonic.startswith("v_"):
        return "VALU"
    if mnemonic.startswith("ds_"):
        return "LDS"
    if mnemonic.startswith(("global_", "buffer_", "flat_", "scratch_")):
        return "global"
    if mnemonic.startswith("s_waitcnt"):
        return "waitcnt"
    if mnemonic.startswith(OTHER_SCALAR):
        return "other"
    if mnemonic.startswith("s_"):
        return "SALU"
    return "other"


def access_bytes(mnemonic):
    """Bytes per lane of an LDS or global load/store, or 0."""
    lds = re.match(r"ds_(read|write)(2st64|2)?_[biu](8|16|32|64|96|128)", mnemonic)
    if lds:
        return int(lds.group(3)) // 8 * (2 if lds.group(2) else 1)
    mem = re.match(r"(?:global|buffer|flat)_(?:load|store)_(dword(?:x(\d))?|[us]?byte|[us]?short)",
                   mnemonic)
    if mem:
        if mem.group(1).startswith("dword"):
            return 4 * int(mem.group(2) or 1)
        return 1 if "byte" in mem.group(1) else 2
    return 0


def find_mca(requested):
    if requested:
        return requested
    # LLVM 22's first: an older llvm-mca on PATH may not know gfx950.
    for candidate in ("/usr/lib/llvm-22/bin/llvm-mca", shutil.which("llvm-mca")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def mfma_passes(line, mca):
    """(passes, source) of the MFMA on `line`: its reciprocal throughput on
    the matrix (XDL) resource of LLVM's gfx950 model, from llvm-mca on that
    one instruction (llvm-mca 22 does not terminate on whole loop bodies
    with these MFMAs, so the loop itself is not simulated)."""
    text = line.split(";")[0].strip()
    if mca:
        try:
            run = subprocess.run(
                [mca, "-mtriple=amdgcn", "-mcpu=gfx950", "--iterations=1"],
                input=text + "\n", capture_output=True, text=True, timeout=20)
            match = re.search(r"^\s*\d+\s+\d+\s+([\d.]+)\s.*v_mfma", run.stdout, re.M)
            if match:
                return float(match.group(1)), "llvm-mca -mcpu=gfx950"
        except (OSError, subprocess.SubprocessError):
            pass
    return FALLBACK_PASSES[MFMA.search(text).group(1)], "LLVM 22 gfx950 model (table)"


def loop_report(name, asm, mca):
    body = main_loop(asm)
    if body is None:
        print("\n%s: no main loop with MFMAs" % name)
        return
    ops = mnemonics(body)
    mfma_lines = [l for l in body if MFMA.search(l)]
    n_mfma = len(mfma_lines)
    counts = {c: 0 for c in ("MFMA",) + CLASSES}
    by_mnemonic = {}
    lds_read = lds_written = global_read = global_written = 0
    for op in ops:
        cls = classify(op)
        counts[cls] += 1
        by_mnemonic.setdefault(cls, {}).setdefault(op, 0)
        by_mnemonic[cls][op] += 1
        size = access_bytes(op) * WAVE_SIZE
        if op.startswith("ds_read"):
            lds_read += size
        elif op.startswith("ds_write"):
            lds_written += size
        elif "_load" in op:
            global_read += size
        elif "_store" in op:
            global_written += size
    others = len(ops) - n_mfma
    per = lambda x: x / n_mfma

    first = mfma_lines[0]
    form = MFMA.search(first).group(0)
    fmt = lambda key: MFMA_FORMATS.get(int((re.search(key + r":(\d)", first) or [0, 0])[1]), "?")
    passes, source = mfma_passes(first, mca)
    waves = occupancy(asm)
    shadow = passes - 1
    valu_port = 1 + per(counts["VALU"])

    def mix(cls, limit=8):
        items = sorted(by_mnemonic.get(cls, {}).items(), key=lambda kv: (-kv[1], kv[0]))
        text = ", ".join("%s %d" % kv for kv in items[:limit])
        return text + (", ..." if len(items) > limit else "")

    print()
    print("Main loop of %s: %d x %s per wave per iteration" % (name, n_mfma, form))
    row = "  %-31s %s"
    print(row % ("instructions per iteration", "%d = %d MFMA + %d others" % (len(ops), n_mfma, others)))
    print(row % ("others per MFMA", "%.1f = " % per(others) + " + ".join(
        "%s %.2f" % (c, per(counts[c])) for c in CLASSES)))
    for cls in CLASSES:
        if counts[cls]:
            print(row % ("  %s per iteration" % cls, mix(cls, 6)))
    print(row % ("LDS bytes per MFMA (wave)", "read %d, written %d" % (
        per(lds_read), per(lds_written))))
    print(row % ("global bytes per MFMA (wave)", "loaded %d, stored %d" % (
        per(global_read), per(global_written))))
    print(row % ("registers, occupancy", "%d VGPR + %d AGPR, %d spills, %d B scratch, %d B LDS: %d waves/SIMD" % (
        field(asm, "vgpr_count"), field(asm, "agpr_count"), field(asm, "vgpr_spill_count"),
        field(asm, "private_segment_fixed_size"), field(asm, "group_segment_fixed_size"), waves)))
    print("MFMA pipe: %s (%s x %s) = %g passes = %g clocks (%s)"
          % (form, fmt("cbsz"), fmt("blgp"), passes, passes * ISSUE_CLOCKS, source))
    print(row % ("issue model", "a SIMD issues one instruction per issue cycle of %d clocks"
                 % ISSUE_CLOCKS))
    print(row % ("", "(a wave64 instruction on 16 lanes; one MFMA pass)"))
    print(row % ("shadow per MFMA", "%g issue cycles for other instructions (%g - 1)" % (shadow, passes)))
    print(row % ("per wave at %d waves/SIMD" % waves,
                 "one own MFMA per %d x %g = %g issue cycles of the pipe, %g of them its own:"
                 % (waves, passes, waves * passes, passes)))
    print(row % ("", "%g non-MFMA slots per own MFMA; it needs %.1f" % (shadow, per(others))))
    print(row % ("needed / available", "%.1f / %g = %.2f" % (per(others), shadow, per(others) / shadow)))
    single = min(1.0, passes / (1 + per(others)))
    print(row % ("MFMA pipe utilization bound", "%.0f%% single issue: %g / (1 + %.1f)"
                 % (100 * single, passes, per(others))))
    if waves >= 2:
        ports = {"VALU+MFMA": valu_port, "SALU": per(counts["SALU"]), "LDS": per(counts["LDS"]),
                 "global": per(counts["global"]),
                 "waitcnt+other": per(counts["waitcnt"] + counts["other"])}
        port, busiest = max(ports.items(), key=lambda kv: kv[1])
        print(row % ("", "%.0f%% multi-issue (one per type per issue cycle from %d waves): %g / %.1f (%s)"
                     % (100 * min(1.0, passes / busiest), waves, passes, busiest, port)))
    print(row % ("LDS reads at full MFMA rate", "%.0f B per clock per CU (%d SIMDs)" % (
        SIMDS_PER_CU * per(lds_read) / (passes * ISSUE_CLOCKS), SIMDS_PER_CU)))
    # What the bound means against the chip's dense FP4 peak: the MFMA's
    # FLOPs per pipe clock at this pass count, times the utilization bound,
    # over the peak per SIMD and clock.
    shape = re.search(r"(\d+)x(\d+)x(\d+)", form)
    if shape and fmt("cbsz") == "fp4" and fmt("blgp") == "fp4":
        m, n, k = map(int, shape.groups())
        rate = 2 * m * n * k / (passes * ISSUE_CLOCKS)
        of_peak = rate / MI355X_FP4_PER_SIMD_CLOCK
        bounds = "%.0f%% single issue" % (100 * single * of_peak)
        if waves >= 2:
            bounds += ", %.0f%% multi-issue" % (100 * min(1.0, passes / busiest) * of_peak)
        print(row % ("implied fraction of FP4 peak", "%s of MI355X's %.1f PFLOP/s dense FP4"
                     % (bounds, MI355X_FP4_PFLOPS)))
        print(row % ("", "(the MFMA: %d FLOP per clock per SIMD at %g passes; peak %d)"
                     % (rate, passes, MI355X_FP4_PER_SIMD_CLOCK)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module")
    parser.add_argument("out_dir")
    parser.add_argument("--loop", action="append", default=[], metavar="KERNEL",
                        help="analyse KERNEL's main loop against the MFMA pipe")
    parser.add_argument("--mca", help="llvm-mca to read MFMA pass counts from")
    args = parser.parse_args()
    module, out_dir = args.module, args.out_dir
    os.makedirs(out_dir, exist_ok=True)
    text = open(module).read()
    kernels = {}
    print("%-22s %-36s %5s %5s %6s %7s %6s %9s" % ("kernel", "MFMAs/loop iter", "VGPR", "AGPR", "spills", "scratch", "LDS", "waves/SIMD"))
    for name, asm in binaries(text, "rocdl"):
        kernels[name] = asm
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
    mca = find_mca(args.mca)
    for name in args.loop:
        if name not in kernels:
            sys.exit("isa_report.py: no kernel %s in %s" % (name, module))
        loop_report(name, kernels[name], mca)


if __name__ == "__main__":
    main()
