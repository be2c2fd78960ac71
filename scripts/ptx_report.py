#!/usr/bin/env python3
"""Per-kernel report of the NVIDIA PTX embedded in a module.

Reads the output of `fp4-opt --fp4train-cuda-pipeline="... format=isa"`,
writes each kernel's PTX to OUT_DIR/<kernel>.ptx and prints one line per
kernel: the block-scaled mma.sync instructions in its main loop (the body
between a loop label and the branch back to it) and per K step of 128, the
FP4/FP8 conversions, and, when ptxas is given, the registers, spill bytes,
shared memory and barriers ptxas reports with `-v`, and the occupancy those
imply on sm_120a (65536 registers and 100 KiB of shared memory per SM, at
most 48 warps, 1536 threads).

    ptx_report.py [--ptxas PTXAS] [--chip sm_120a] [--check] MODULE.mlir OUT_DIR

With --check, exits non-zero when ptxas rejects a kernel, a kernel spills,
or the PTX references an external function (libdevice).
"""
import argparse
import os
import re
import subprocess
import sys

BINARY = re.compile(
    r'gpu\.binary @(\w+)\s*\[#gpu\.object<#nvvm\.target<[^>]*>,[^"]*?"((?:[^"\\]|\\.)*)"')
MMA = re.compile(r"mma\.sync\.aligned\.(m16n8k\d+)\.row\.col\.kind::(\w+)\.block_scale(?:\.scale_vec::(\w+))?")
CONVERT = re.compile(r"cvt\.r[np]\.satfinite\.(\w+x\d)\.f32")


def unescape(text):
    # MLIR string attributes escape bytes as \XX (hex) plus \\ and \".
    return re.sub(r"\\([0-9A-Fa-f]{2}|\\|\")",
                  lambda m: m.group(1) if m.group(1) in ('\\', '"')
                  else chr(int(m.group(1), 16)), text)


def main_loop(ptx):
    """The lines of the innermost loop holding an mma.sync, from its label
    to the branch back to it, or None."""
    lines = ptx.splitlines()
    best = None
    for i, line in enumerate(lines):
        label = re.match(r"^(\$L__BB\w+):", line)
        if not label:
            continue
        for j in range(i + 1, len(lines)):
            if re.search(r"\bbra(\.uni)?\s+%s;" % re.escape(label.group(1)), lines[j]):
                body = lines[i:j + 1]
                if any(MMA.search(l) for l in body) and (best is None or len(body) < len(best)):
                    best = body
                break
    return best


def ptxas_info(ptxas, chip, path):
    """(ok, registers, spill bytes, shared bytes, barriers, message)."""
    result = subprocess.run([ptxas, "-arch=" + chip, "-v", path, "-o", os.devnull],
                            capture_output=True, text=True)
    log = result.stderr
    if result.returncode != 0:
        return False, 0, 0, 0, 0, log.strip()
    regs = int((re.search(r"Used (\d+) registers", log) or [0, 0])[1])
    spills = sum(int(n) for n in re.findall(r"(\d+) bytes spill (?:stores|loads)", log))
    smem = int((re.search(r"(\d+) bytes smem", log) or [0, 0])[1])
    barriers = int((re.search(r"used (\d+) barriers", log) or [0, 0])[1])
    return True, regs, spills, smem, barriers, ""


def threads_of(ptx):
    match = re.search(r"\.maxntid\s+(\d+),\s*(\d+),\s*(\d+)", ptx)
    if not match:
        return None
    return int(match[1]) * int(match[2]) * int(match[3])


def occupancy(regs, smem, threads):
    """Workgroups and warps per SM on sm_120a."""
    if not threads:
        return None
    warps = (threads + 31) // 32
    per_warp = ((max(regs, 1) * 32 + 255) // 256) * 256
    by_regs = 65536 // (per_warp * warps)
    by_smem = (100 * 1024) // smem if smem else 32
    by_threads = 1536 // threads
    groups = max(0, min(by_regs, by_smem, by_threads, 32))
    return groups, groups * warps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ptxas")
    parser.add_argument("--chip", default="sm_120a")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("module")
    parser.add_argument("out_dir")
    args = parser.parse_args()

    os.makedirs(args.out_dir, exist_ok=True)
    text = open(args.module).read()
    failures = []
    kernels = 0
    print("%-32s %-34s %9s %7s %5s %6s %7s %4s %s" % (
        "kernel", "mma (main loop)", "mma/step", "cvt", "regs", "spill", "smem", "bar", "occupancy"))
    for match in BINARY.finditer(text):
        kernels += 1
        name, ptx = match.group(1), unescape(match.group(2))
        path = os.path.join(args.out_dir, name + ".ptx")
        with open(path, "w") as f:
            f.write(ptx)
        loop = main_loop(ptx)
        mmas = [MMA.search(l) for l in (loop or ptx.splitlines())]
        mmas = [m for m in mmas if m]
        mma = "-"
        per_step = "-"
        if mmas:
            first = mmas[0]
            mma = "%d x %s %s %s" % (len(mmas), first[1], first[2], first[3] or "")
            # One loop iteration is one staged K step of 128.
            per_step = "%d" % len(mmas) if loop else "-"
        converts = len(CONVERT.findall(ptx))
        if ".extern" in ptx:
            failures.append("%s: the PTX references an external function" % name)
        regs = spills = smem = barriers = "-"
        occ = "-"
        if args.ptxas:
            ok, regs, spills, smem, barriers, message = ptxas_info(args.ptxas, args.chip, path)
            if not ok:
                failures.append("%s: ptxas failed: %s" % (name, message))
            elif spills:
                failures.append("%s: %d bytes of spills" % (name, spills))
            o = occupancy(regs, smem, threads_of(ptx)) if ok else None
            occ = "%d CTA / %d warps" % o if o else "-"
        print("%-32s %-34s %9s %7s %5s %6s %7s %4s %s" % (
            name, mma, per_step, converts, regs, spills, smem, barriers, occ))
    if not kernels:
        failures.append("no NVVM gpu.binary in %s" % args.module)
    for failure in failures:
        print("error: " + failure, file=sys.stderr)
    return 1 if (args.check and failures) else 0


if __name__ == "__main__":
    sys.exit(main())
