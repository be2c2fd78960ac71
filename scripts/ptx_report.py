#!/usr/bin/env python3
"""Per-kernel report of the NVIDIA PTX embedded in a module.

Reads the output of `fp4-opt --fp4train-cuda-pipeline="... format=isa"`,
writes each kernel's PTX to OUT_DIR/<kernel>.ptx and prints one line per
kernel: the block-scaled MMAs in its main loop (the body between a loop
label and the branch back to it; mma.sync per K step of 128 on sm_120a and
sm_90a/sm_89, tcgen05.mma per pipeline stage on sm_100a/sm_103a), the
FP4/FP8 conversions, and, when ptxas is given, the registers, spill bytes,
shared memory (static, plus the dynamic size the host launch passes) and
barriers ptxas reports with `-v`, the kernel's static SASS instruction count
(`sass`: its .text section in the cubin ptxas writes to OUT_DIR, 16 bytes an
instruction; for the straight-line quantize and amax kernels, what one
thread executes), and the occupancy those imply on the chip (its .target, or
--chip: sm_120a, sm_100a, sm_103a, sm_90a or sm_89; see CHIPS).

    ptx_report.py [--ptxas PTXAS] [--chip CHIP] [--check] [--loop KERNEL]...
                  MODULE.mlir OUT_DIR

ptxas is --ptxas, else the one on PATH, else /usr/local/cuda/bin/ptxas; without
one the register, spill and occupancy columns are left empty.

With --check, exits non-zero when ptxas rejects a kernel, a kernel spills,
or the PTX references an external function (libdevice).

With --loop KERNEL (repeatable), it then analyses that GEMM kernel's main
loop (each staged K step of 128 ends in one barrier; an iteration may run
several) per warp: PTX statements by
class, shared and global bytes, and the bounds they put on the kernel
against the chip's FP4 or FP8 tensor-core rate (see loop_report) and,
where that loop is one scale block inside the K-step loop (sm_90a), the
same for a whole K step, staging included (k_step_statements); for a
tcgen05 kernel, the stages, shared memory per stage, TMEM columns, MMAs per
stage and the producer's traffic against B200's rates (see tcgen05_report).
PTX statements
are not SASS instructions (ptxas removes most moves and folds addressing);
the CUDA toolkit here has no disassembler to find a loop in the SASS, so the
loop counts are an upper bound on the issue slots the loop needs.
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys

from gpu_binary import binaries

# The block-scaled forms (sm_120a: shape, kind, scale_vec) and the plain FP8
# one (sm_89/sm_90a: shape, then the A.B types in group 4).
MMA = re.compile(r"mma\.sync\.aligned\.(m16n8k\d+)\.row\.col\."
                 r"(?:kind::(\w+)\.block_scale(?:\.scale_vec::(\w+))?|f32\.(e\dm\d\.e\dm\d)\.f32)")
TCGEN05 = re.compile(r"tcgen05\.mma\.cta_group::(\d)\.kind::(\w+)\.block_scale\.(block\d+)")
# sm_90a's warpgroup MMA ([WG1]): shape, N, K, the A and B types.
WGMMA = re.compile(r"wgmma\.mma_async\.sync\.aligned\.(m64n(\d+)k(\d+))\.f32\.(e\dm\d|f16)\.(e\dm\d|f16)")


def any_mma(line):
    """The warp-level, warpgroup or tcgen05 MMA of a PTX line, or None."""
    return MMA.search(line) or TCGEN05.search(line) or WGMMA.search(line)
CONVERT = re.compile(r"cvt\.r[np]\.satfinite\.(\w+x\d)\.f32")


def loop_ranges(lines):
    """(first, last) line indices of every loop: a label and the first
    branch back to it."""
    ranges = []
    for i, line in enumerate(lines):
        label = re.match(r"^(\$L__BB\w+):", line)
        if not label:
            continue
        for j in range(i + 1, len(lines)):
            if re.search(r"\bbra(\.uni)?\s+%s;" % re.escape(label.group(1)), lines[j]):
                ranges.append((i, j))
                break
    return ranges


def main_loop_range(lines):
    """The range of the innermost loop holding an MMA, or None."""
    best = None
    for i, j in loop_ranges(lines):
        if any(any_mma(l) for l in lines[i:j + 1]) and (best is None or j - i < best[1] - best[0]):
            best = (i, j)
    return best


def main_loop(ptx):
    """The lines of the innermost loop holding an mma.sync, from its label
    to the branch back to it, or None."""
    lines = ptx.splitlines()
    found = main_loop_range(lines)
    return lines[found[0]:found[1] + 1] if found else None


def basic_blocks(lines):
    """The kernel's basic blocks as (label, lines) in text order (a block
    starts at a label or after a branch), and each block's successors
    (indices): branch targets, and the next block unless the block ends in
    an unconditional branch or a return."""
    blocks = [("", [])]
    for line in lines:
        label = re.match(r"^(\$L__BB\w+):", line)
        if label:
            blocks.append((label.group(1), []))
        elif blocks[-1][1] and re.search(r"\bbra(?:\.uni)?\s", blocks[-1][1][-1]):
            blocks.append(("", []))  # a branch ends its block
        blocks[-1][1].append(line)
    index = {name: n for n, (name, _) in enumerate(blocks) if name}
    successors = []
    for n, (_, body) in enumerate(blocks):
        out, falls = set(), n + 1 < len(blocks)
        for line in body:
            branch = re.search(r"^\s*(@!?%p\d+\s+)?bra(?:\.uni)?\s+(\$L__BB\w+);", line)
            if branch:
                out.add(index[branch.group(2)])
                falls = falls and branch.group(1) is not None
            elif re.match(r"^\s*(ret|exit|trap);", line):
                falls = False
        if falls:
            out.add(n + 1)
        successors.append(out)
    return blocks, successors


def natural_loops(successors):
    """The blocks of each natural loop (one per back edge u -> h, h
    dominating u): h and every block that reaches u without passing h."""
    count = len(successors)
    predecessors = [set() for _ in range(count)]
    for n, out in enumerate(successors):
        for m in out:
            predecessors[m].add(n)
    dominators = [set(range(count)) for _ in range(count)]
    dominators[0] = {0}
    changed = True
    while changed:
        changed = False
        for n in range(1, count):
            incoming = [dominators[p] for p in predecessors[n]]
            new = (set.intersection(*incoming) if incoming else set()) | {n}
            if new != dominators[n]:
                dominators[n], changed = new, True
    loops = []
    for u, out in enumerate(successors):
        for h in out:
            if h in dominators[u]:
                body, work = {h}, []
                if u != h:
                    body.add(u)
                    work.append(u)
                while work:
                    for p in predecessors[work.pop()]:
                        if p not in body:
                            body.add(p)
                            work.append(p)
                loops.append(body)
    return loops


def kernel_loops(ptx):
    """The kernel's natural loops (sets of basic-block indices) and a
    function giving the lines of a set of blocks, in text order."""
    blocks, successors = basic_blocks(ptx.splitlines())

    def text(body):
        return [l for n in sorted(body) for l in blocks[n][1]]
    return natural_loops(successors), text


def cta_barriers(lines):
    """The CTA barriers among `lines` that publish a staged K step: every
    barrier in the mma.sync GEMMs (each staged K step ends in one); where
    the kernel fences its staging for the asynchronous proxy (wgmma), the
    barriers right after that fence."""
    barrier = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?:bar|barrier)\.sync")
    code = [l for l in lines if l.strip() and not l.strip().startswith("//")]
    fenced = [i for i, l in enumerate(code)
              if barrier.match(l) and i > 0 and "fence.proxy.async" in code[i - 1]]
    return len(fenced) if fenced else sum(1 for l in code if barrier.match(l))


def k_step_statements(ptx, iterations, main_statements=None):
    """PTX statements per warp of one K step on the main loop's path, where
    the main loop (one scale block) runs `iterations` times per K step
    inside an enclosing K-step loop (the one that loads the next tiles from
    global memory, possibly several K steps per iteration, one barrier
    each): the enclosing loop's own statements (staging, the scaling vote)
    per K step plus `iterations` times the main loop's, without the other
    MMA loops it holds (sm_90a's exact-scaling alternative); `main_statements`,
    when
    given, replaces the main loop's statement count (the wgmma kernel's
    loop holds both scaling paths). None where there is no such loop."""
    loops, text = kernel_loops(ptx)
    with_mma = [b for b in loops if any(any_mma(l) for l in text(b))]
    if not with_mma:
        return None
    # The shortest, as main_loop picks it (sm_90a: the fused scaling).
    main = min(with_mma, key=lambda b: len(statements(text(b))))
    outer = [b for b in loops if main < b and any("ld.global" in l for l in text(b))]
    if not outer:
        return None
    step = min(outer, key=len)
    inner = set().union(*(b for b in with_mma if b < step))
    own = text(step - inner)
    steps = max(1, cta_barriers(own))
    if main_statements is None:
        main_statements = len(statements(text(main)))
    return len(statements(own)) / steps + iterations * main_statements


# Per chip: the tensor-core FLOP per clock per SM of the kernels' MMA
# (m16n8k64 FP4 kinds; m16n8k32 FP8 forms), DRAM bytes per clock per SM,
# registers, shared memory per SM, warps and threads per SM.
#  - sm_120a (RTX 5090): 1676 dense FP4 TFLOPS at a 2.41 GHz boost over 170
#    SMs (NVIDIA's published 3352 sparse "AI TOPS"), i.e. 4096 FP4 FLOP per
#    clock per SM, 1024 per SM sub-partition (4 per SM, one warp scheduler
#    each, issuing one instruction per clock); the FP8 kinds run at half
#    that. DRAM: 1792 GB/s. 100 KiB shared memory, 48 warps per SM.
#  - sm_90a (H100 SXM): 1979 dense FP8 TFLOPS at 1.83 GHz over 132 SMs, i.e.
#    8192 FP8 FLOP per clock per SM (the wgmma peak; NVIDIA publishes no
#    separate mma.sync rate, so this is an upper bound for it). HBM3:
#    3.35 TB/s. 228 KiB shared memory, 64 warps per SM.
#  - sm_89 (L40S): 733 dense FP8 TFLOPS at 2.52 GHz over 142 SMs (2048 per
#    clock per SM), 864 GB/s, 100 KiB shared memory, 48 warps.
#  - sm_100a (B200; sm_103a takes the same figures): 9 dense FP4 PFLOPS over
#    148 SMs at about 1.85 GHz, i.e. 32768 FP4 FLOP per clock per SM (an
#    M128 N128 K64 block-scaled tcgen05.mma is 64 clocks), half that for the
#    8-bit kinds; shared memory 128 bytes per clock per SM; HBM3e 8 TB/s,
#    i.e. 29 bytes per clock per SM. 228 KiB shared memory, 64 warps per SM.
CHIPS = {
    "sm_120a": dict(fp4=4096, fp8=2048, dram=1792e9 / 2.41e9 / 170, smem=100 * 1024,
                    warps=48, threads=1536, name="FP4"),
    "sm_90a": dict(fp4=None, fp8=8192, dram=3.35e12 / 1.83e9 / 132, smem=228 * 1024,
                   warps=64, threads=2048, name="FP8"),
    "sm_89": dict(fp4=None, fp8=2048, dram=864e9 / 2.52e9 / 142, smem=100 * 1024,
                  warps=48, threads=1536, name="FP8"),
    "sm_100a": dict(fp4=32768, fp8=16384, dram=8e12 / 1.85e9 / 148, smem=228 * 1024,
                    warps=64, threads=2048, name="FP4", shared_bytes=128),
}
CHIPS["sm_121a"] = CHIPS["sm_120a"]
CHIPS["sm_90"] = CHIPS["sm_90a"]
CHIPS["sm_103a"] = CHIPS["sm_100a"]
SUBPARTITIONS = 4
# f32 adds, multiplies and fmas: what [GEMM1]'s block scaling costs outside
# the tensor cores.
F32_ARITHMETIC = re.compile(r"^(?:fma|mul|add|sub)(?:\.r[nzmp])?(?:\.ftz)?(?:\.sat)?\.f32$")


def chip_of(ptx, default):
    """The chip of --chip, else of the PTX's .target directive."""
    if default:
        return default
    match = re.search(r"^\.target\s+(sm_\w+)", ptx, re.M)
    return match[1] if match else "sm_120a"


def statements(lines):
    """PTX statements (opcode, text) of `lines`, labels and comments out."""
    text = "\n".join(re.sub(r"//.*", "", l) for l in lines)
    out = []
    for statement in text.split(";"):
        statement = re.sub(r"^\s*\$L__\w+:\s*", "", statement.strip())
        statement = re.sub(r"^@!?%p\d+\s+", "", statement)
        if not statement or statement.startswith("{") or statement.startswith("}"):
            continue
        out.append((statement.split()[0], statement))
    return out


def tcgen05_report(name, ptx, regs, smem, gemm_k):
    """The static figures of a tcgen05 GEMM kernel, from its PTX, against
    B200's rates (CHIPS["sm_100a"])."""
    params = CHIPS["sm_100a"]
    mmas = [TCGEN05.search(l) for l in ptx.splitlines()]
    mmas = [m for m in mmas if m]
    if not mmas:
        print("%s: no tcgen05.mma" % name)
        return
    loop = main_loop(ptx)
    per_stage = len([l for l in loop if TCGEN05.search(l)]) if loop else len(mmas)
    kind, block = mmas[0][2], mmas[0][3]
    fp4 = kind == "mxf4nvf4"
    # [PAIR1] A CTA pair's kernel: 256 x 128 tiles, each SM staging 128 rows
    # of A and 64 of B^T and computing 128 x 128 of C.
    pair = mmas[0][1] == "2"
    rows_b = 64 if pair else 128
    cps = len(re.findall(r"tcgen05\.cp\.", "\n".join(loop or [])))
    alloc = re.search(r"tcgen05\.alloc[^;]*;", ptx)
    columns = re.search(r"mov\.b32\s+%r\d+,\s*(\d+);\s*\n[^\n]*tcgen05\.alloc", ptx)
    # Barriers: full and empty per stage, full and empty per TMEM
    # accumulator (two: the epilogue drains one while the MMAs fill the
    # other).
    inits = len(re.findall(r"mbarrier\.init\.shared\.b64", ptx))
    stages = (inits - 2 * 2) // 2 if alloc else 0
    # Tile 128 x 128, 4 MMAs of K 64 (FP4) or 32 (8-bit) per stage.
    k_stage = per_stage * (64 if fp4 else 32)
    stage_bytes = 2 * 128 * 128 + 2 * (k_stage // (16 if block == "block16" and fp4 else 32)) // 4 * 512
    flop = 2 * 128 * 128 * k_stage
    rate = params["fp4"] if fp4 else params["fp8"]
    mma_clocks = flop / rate
    # The producers read the stored codes from global memory (E2M1 two per
    # byte, [PK1]; 8-bit codes one per byte) and write the stage; the MMAs
    # (A, B) and tcgen05.cp (scales) read it back once.
    code_bytes = k_stage // 2 if fp4 else k_stage
    blocks = k_stage // (16 if block == "block16" else 32)
    global_bytes = (128 + rows_b) * code_bytes + 2 * 128 * blocks
    shared_bytes = 2 * stage_bytes
    # A pair's SM stores its rows and both operands' scale atoms (scale_B of
    # all 128 columns); its MMAs read A and all 128 rows of B^T (the peer's
    # half too), or each B byte once if the pair shares them.
    scale_bytes = stage_bytes - 32768
    written = (128 + rows_b) * 128 + scale_bytes
    read = 2 * 128 * 128 + scale_bytes
    print()
    print("tcgen05 kernel %s: kind::%s.%s, %s, %d stages of K %d" % (
        name, kind, block,
        "256 x 128 tile on a CTA pair (cta_group::2; 128 x 128 of C per SM)" if pair
        else "128 x 128 tile", stages, k_stage))
    print("  shared memory per stage: %d bytes (A, B 16 KiB each, 128-byte swizzle; scales %d);"
          " dynamic shared memory %d bytes" % (stage_bytes, stage_bytes - 32768, smem))
    print("  TMEM columns: %s (two 128-column accumulators + scale atoms); registers: %s" % (
        columns.group(1) if columns else "512", regs))
    print("  per stage: %d tcgen05.mma, %d tcgen05.cp (32x128b.warpx4), 1 tcgen05.commit" % (
        per_stage, cps))
    print("  tensor-core clocks per stage at B200's dense %s rate: %.0f" % (
        "FP4" if fp4 else "FP8", mma_clocks))
    smem_bound = min(1.0, mma_clocks * params["shared_bytes"] / shared_bytes)
    if not pair:
        print("  shared-memory traffic per stage: %d bytes (producer stores + MMA operand reads):"
              " bounds the tensor-core rate at %.0f%%" % (shared_bytes, 100 * smem_bound))
    else:
        smem_bound = min(1.0, mma_clocks * params["shared_bytes"] / (written + read))
        once = min(1.0, mma_clocks * params["shared_bytes"] / (2 * written))
        print("  shared-memory traffic per stage and SM: %d bytes stored + %d read by the MMAs"
              " and tcgen05.cp (%d if the pair's MMA reads each B byte once): bounds the"
              " tensor-core rate at %.0f%% (%.0f%%)" % (
                  written, read, written, 100 * smem_bound, 100 * once))
    # [TMEM1] in docs/nvvm.md: the same model for larger tiles (the 256 x 128
    # pair is built, [PAIR1]), per SM and stage: the bytes its producers write
    # and its MMAs and tcgen05.cp read, against the stage's tensor-core
    # clocks; `tile` is one operand's 128-row tile of a stage, `sf` its
    # 128-row scale atoms (16 TMEM columns for NVFP4's 16 blocks). TMEM (512
    # columns) must hold two
    # accumulators next to the stages' scale atoms for the epilogue of tile
    # i to run under the MMAs of tile i + 1 ([PERS1]); with one accumulator
    # it runs after them, and it moves C through DRAM: the f32 accumulator
    # input read and the result written, 8 bytes per element at the SM's
    # share of DRAM.
    tile, sf = 128 * (k_stage // 2 if fp4 else k_stage), (stage_bytes - 32768) // 2
    sf_columns = 4 * (k_stage // (16 if block == "block16" and fp4 else 32)) // 4
    k_steps = max(1, gemm_k // k_stage)

    def design(clocks, written, read, acc_columns, sf_units):
        smem_rate = min(1.0, clocks * params["shared_bytes"] / (written + read))
        double = 2 * acc_columns + stages * sf_units * sf_columns <= 512
        if double:
            return 100 * smem_rate, 100 * smem_rate, True
        loop = k_steps * clocks / smem_rate
        epilogue = 128 * acc_columns * 8 / params["dram"]
        return 100 * smem_rate * loop / (loop + epilogue), 100 * smem_rate, False

    def describe(result):
        rate, main, double = result
        return "%.0f%%" % rate if double else "%.0f%% (one accumulator; %.0f%% in the main loop)" % (
            rate, main)
    n256 = design(2 * mma_clocks, 3 * tile + 3 * sf, 3 * tile + 3 * sf, 256, 3)
    pair128 = (design(mma_clocks, 1.5 * tile + 2 * sf, 2 * tile + 2 * sf, 128, 2),
               design(mma_clocks, 1.5 * tile + 2 * sf, 1.5 * tile + 2 * sf, 128, 2))
    pair256 = (design(2 * mma_clocks, 2 * tile + 3 * sf, 3 * tile + 3 * sf, 256, 3),
               design(2 * mma_clocks, 2 * tile + 3 * sf, 2 * tile + 3 * sf, 256, 3))
    print("  the same model for larger tiles (K = %d; a pair's MMA reading all of"
          " B in each SM / each B byte once, which the PTX ISA does not say): M128 N256 on one"
          " SM %s; a CTA pair (cta_group::2) of 256 x 128 (gemm-cta-pair) %s / %s; of 256 x 256"
          " %s / %s."
          " Two 256-column accumulators and the scale atoms exceed TMEM's 512 columns, so"
          " N = 256 tiles run their epilogue (C through DRAM) after their MMAs" % (
              gemm_k, describe(n256), describe(pair128[0]), describe(pair128[1]),
              describe(pair256[0]), describe(pair256[1])))
    # Issue slots: the producer loop (one stage per iteration, warps 0-3:
    # one warp per sub-partition) and the MMA issuer's loop (warp 4, which
    # shares sub-partition 0 with warp 0), at one PTX statement per clock
    # of a sub-partition. The epilogue warps (5-8, one per sub-partition,
    # warp 8 on sub-partition 0 too) run once per tile, not per stage.
    loop_sets, text = kernel_loops(ptx)
    producer = [b for b in loop_sets
                if any("st.shared" in l or "cp.async" in l for l in text(b))
                and not any(TCGEN05.search(l) for l in text(b))]
    issuer = [b for b in loop_sets if any(TCGEN05.search(l) for l in text(b))]
    # The persistent tile loop: a loop around the producers' K-step loop
    # (kernels whose grid has a workgroup per tile have none once LLVM
    # folds the single iteration).
    if producer:
        k_loop = min(producer, key=len)
        tile_loops = [b for b in loop_sets if k_loop < b]
        print("  persistent tile loop: %s" % (
            "yes (the producers' K-step loop runs once per output tile of the workgroup;"
            " warps 5-8 store tile i's C from one TMEM accumulator while the MMAs of"
            " tile i + 1 fill the other)" if tile_loops else
            "no (one tile per workgroup at this grid)"))
    if producer:
        # [TMA1] Codes by TMA: thread 0 issues one cp.async.bulk.tensor per
        # operand tile and stage; every producer copies its row's scales.
        body = "\n".join(text(min(producer, key=len)))
        tma = len(re.findall(r"cp\.async\.bulk\.tensor", body))
        copies = len(re.findall(r"cp\.async\.c[ag]\.", body))
        print("  operand loads per stage: %s" % (
            "codes by TMA (%d cp.async.bulk.tensor of %s from one thread, 128-byte"
            " swizzled boxes), scales by %d cp.async per producer thread" % (
                tma, "16 KiB of A and 8 KiB of B^T" if pair else "16 KiB", copies)
            if tma else "codes and scales by %d cp.async per producer thread" % copies))
    if producer and issuer:
        p_slots = len(statements(text(min(producer, key=len))))
        i_slots = len(statements(text(min(issuer, key=len))))
        busiest = p_slots + i_slots
        print("  issue slots per stage: producers %d PTX statements per warp, the MMA issuer %d;"
              " sub-partition 0 runs both: %d, %.0f%% of the stage's tensor-core clocks (%s)" % (
                  p_slots, i_slots, busiest, 100 * busiest / mma_clocks,
                  "no bound" if busiest <= mma_clocks else
                  "a bound of %.0f%%" % (100 * mma_clocks / busiest)))
    epilogue = [b for b in loop_sets if any("tcgen05.ld." in l for l in text(b))]
    if epilogue:
        # tcgen05.ld of 32 columns per iteration, 128 columns per tile.
        e_slots = 4 * len(statements(text(min(epilogue, key=len))))
        print("  epilogue per tile: %d PTX statements per warp (4 loads of 32 accumulator"
              " columns), %.1f stages' worth of tensor-core clocks, hidden behind the next"
              " tile's MMAs" % (e_slots, e_slots / mma_clocks))
    need = global_bytes / mma_clocks
    print("  producer global reads per stage: %d bytes, %.0f B/clock per SM at the MMA rate"
          " (DRAM gives %.0f; every tile is re-read by N/128 or M/128 workgroups, so L2 serves"
          " most): bounds it at %.0f%% from DRAM alone" % (
              global_bytes, need, params["dram"],
              100 * min(1.0, params["dram"] / need)))


def cheapest_iteration(blocks, successors, loop, through=None):
    """The PTX statements of the cheapest path through one iteration of
    `loop` (from its header back to it), as a list of (opcode, text); with
    `through`, a predicate on a block's statements, the cheapest of the
    paths that pass a block satisfying it. None when there is no such
    path."""
    inside = set(loop)
    header = next(n for n in sorted(loop)
                  if any(n in successors[p] for p in range(len(blocks)) if p not in inside))
    cost = {}

    def best(n, need):
        # (statements, path) of the cheapest way from n back to the header.
        key = (n, need)
        if key in cost:
            return cost[key]
        cost[key] = None  # the loop body is acyclic without the back edge
        own = statements(blocks[n][1])
        need_after = need and not (through and through(own))
        options = []
        for m in successors[n]:
            if m == header and not need_after:
                options.append([])
            elif m in inside and m != header:
                rest = best(m, need_after)
                if rest is not None:
                    options.append(rest)
        result = own + min(options, key=len) if options else None
        cost[key] = result
        return result
    return best(header, through is not None)


def wgmma_report(name, ptx, regs, smem, threads, chip):
    """[WG1] The static figures of sm_90a's wgmma GEMM: per iteration of its
    block loop (one wgmma per warpgroup and 32-element block, then the
    block's scaling of the accumulators on the ordinary cores), on the
    cheapest path, the one real scales take ([WG2]: a folded block with its
    A rows in the fused window; without a fold, the fused scaling), and,
    where the kernel folds, also on an unfolded block's fused path (the one
    through the column vote), against H100's FP8 rate."""
    params = CHIPS.get(chip, CHIPS["sm_90a"])
    blocks, successors = basic_blocks(ptx.splitlines())
    loops = [b for b in natural_loops(successors)
             if any(WGMMA.search(l) for n in b for l in blocks[n][1])]
    if not loops:
        print("%s: no loop with a wgmma" % name)
        return
    loop = min(loops, key=len)
    first = next(WGMMA.search(l) for n in loop for l in blocks[n][1] if WGMMA.search(l))
    n, k = int(first[2]), int(first[3])
    warpgroups = (threads or 256) // 128
    occupancy_info = occupancy(regs, smem, threads, chip)
    groups = max(1, occupancy_info[0]) if occupancy_info else 1
    # Per SM and iteration of every resident warpgroup: the wgmmas share the
    # tensor cores; each sub-partition runs one warp of each warpgroup.
    warps_per_sub = groups * warpgroups
    cheapest = cheapest_iteration(blocks, successors, loop)
    # The fold's unfolded blocks vote over the columns inside the block
    # loop; the exact scaling (min.u32 in its exponent split) is not taken.
    folds = any(l for index in loop for l in blocks[index][1]
                if "vote.sync" in l)
    unfolded = cheapest_iteration(
        blocks, successors, loop,
        lambda body: any(op.startswith("vote.sync") for op, _ in body)) if folds else None

    # [WG3] f16 operands run at half the FP8 rate (H100: 989 against 1979
    # dense TFLOPS).
    f16 = first[4] == "f16"
    rate = params["fp8"] / 2 if f16 else params["fp8"]

    def bounds(path):
        wgmmas = sum(1 for opcode, _ in path if opcode.startswith("wgmma.mma_async"))
        f32_ops = sum(1 for opcode, _ in path if F32_ARITHMETIC.match(opcode))
        flop = groups * warpgroups * wgmmas * 64 * n * k * 2
        return (wgmmas, f32_ops, flop / params["fp8"], flop / rate,
                warps_per_sub * len(path), warps_per_sub * f32_ops)

    def fraction(at_peak, *clocks):
        """The fraction of the FP8 peak that the slowest of `clocks` allows."""
        return 100 * min(1.0, at_peak / max(clocks))

    print()
    print("wgmma kernel %s: %s %s x %s, %d warpgroups per workgroup, %d workgroup(s) per SM"
          " (%s registers, %s bytes of shared memory)" % (
              name, first[1], first[4], first[5], warpgroups, groups, regs, smem))
    if f16:
        title = "f16 values carrying their scales: one add per accumulator"
    elif folds:
        title = "folded block, A rows in the fused window"
    else:
        title = "fused scaling path"
    paths = [(title, cheapest)]
    if unfolded:
        paths.append(("unfolded block, fused scaling", unfolded))
    for title, path in paths:
        wgmmas, f32_ops, peak, tensor, issue, f32 = bounds(path)
        print("  per block (%s), per warp: %d wgmma, %d PTX statements, %d f32"
              " operations" % (title, wgmmas, len(path), f32_ops))
        print("    per SM and block: %.0f tensor-core clocks at the FP8 peak%s, %.0f issue"
              " clocks per sub-partition, %.0f of them f32; bounds: issue %.0f%%, f32"
              " pipe %.0f%%%s of the FP8 peak" % (
                  peak, " (%.0f at the f16 rate)" % tensor if f16 else "", issue, f32,
                  fraction(peak, issue, tensor), fraction(peak, f32 or 1, tensor),
                  ", f16 rate %.0f%%" % fraction(peak, tensor) if f16 else ""))
    print("  (waiting for each block's wgmma before %s it, a warpgroup overlaps"
          " only with the other warpgroups)" % ("adding" if f16 else "scaling"))
    _, _, peak, tensor, _, _ = bounds(cheapest)
    step = k_step_statements(ptx, 128 // k, len(cheapest))
    if step:
        what = (" of the E4M3 operands the staging kernels wrote, [WG4]" if folds else
                ", scales applied as the codes are staged" if f16 else
                " and the scaling vote")
        print("  per K step of 128 (the block loop %d times on the path above, plus the"
              " staging%s): %.0f PTX statements per warp; issue bound %.0f%% of the FP8"
              " peak" % (128 // k, what, step,
                         fraction((128 // k) * peak, warps_per_sub * step,
                                  (128 // k) * tensor)))
        print("    of which the block loops %d x %d = %d, the K step's own %.0f" % (
            128 // k, len(cheapest), (128 // k) * len(cheapest),
            step - (128 // k) * len(cheapest)))


def loop_report(name, ptx, regs, smem, threads, chip, gemm_k):
    if TCGEN05.search(ptx):
        return tcgen05_report(name, ptx, regs, smem, gemm_k)
    if WGMMA.search(ptx):
        return wgmma_report(name, ptx, regs, smem, threads, chip)
    params = CHIPS.get(chip, CHIPS["sm_120a"])
    loop = main_loop(ptx)
    if not loop:
        print("%s: no loop with an mma.sync" % name)
        return
    body = statements(loop)
    classes = {}
    shared_bytes = global_bytes = 0
    width = {"b8": 1, "u8": 1, "b16": 2, "u16": 2, "b32": 4, "u32": 4, "f32": 4,
             "b64": 8, "u64": 8, "f64": 8}
    for opcode, text in body:
        parts = opcode.split(".")
        vector = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
        size = next((width[p] for p in reversed(parts) if p in width), 4) * vector
        if opcode.startswith("mma.sync"):
            key = "mma.sync"
        elif opcode.startswith("ld.shared"):
            key = "ld.shared"
            shared_bytes += size
        elif opcode.startswith("st.shared"):
            key = "st.shared"
            shared_bytes += size
        elif opcode.startswith("ld.global"):
            key = "ld.global"
            global_bytes += size
        elif opcode.startswith("bar") or opcode.startswith("bra"):
            key = "bar/branch"
        elif opcode.startswith("mov"):
            key = "mov"
        else:
            key = "alu/other"
        classes[key] = classes.get(key, 0) + 1
    mmas = classes.get("mma.sync", 0)
    first = next(MMA.search(l) for l in loop if MMA.search(l))
    k = int(first[1].split("k")[1])
    flop_per_mma = 16 * 8 * k * 2
    warps = (threads or 256) // 32
    other = sum(v for c, v in classes.items() if c != "mma.sync")
    print()
    # sm_120a's loop stages K steps of 128 (one barrier each), sm_90a's is
    # one scale block of a K step.
    steps = cta_barriers(loop)
    print("Main loop of %s, per warp and iteration (%s%d warps, %s):" % (
        name, "%d K steps of 128, " % steps if steps else "", warps,
        first[0].split(".block_scale")[0]))
    for key in ["mma.sync", "ld.shared", "st.shared", "ld.global", "mov", "alu/other", "bar/branch"]:
        if key in classes:
            print("  %-11s %4d" % (key, classes[key]))
    print("  other PTX statements per mma.sync: %.1f" % (other / mmas))
    # Statements are per warp; their bytes are per lane.
    print("  shared bytes per mma.sync: %.0f, global bytes per mma.sync: %.0f" % (
        32 * shared_bytes / mmas, 32 * global_bytes / mmas))
    # Tensor-core clocks per sub-partition for one iteration of the workgroup.
    groups = 1
    occupancy_info = occupancy(regs, smem, threads, chip)
    if occupancy_info:
        groups = max(1, occupancy_info[0])
    resident_warps = groups * warps
    warps_per_sub = resident_warps / SUBPARTITIONS
    # The FP8 forms: kind::mxf8f6f4 and the plain e4m3/e5m2 mma.sync.
    fp8 = first[4] is not None or first[2] == "mxf8f6f4"
    rate = params["fp8"] if fp8 else params["fp4"]
    mma_clocks = warps_per_sub * mmas * flop_per_mma / (rate / SUBPARTITIONS)
    issue_clocks = warps_per_sub * (mmas + other)
    print("  resident: %d workgroup(s), %d warps per SM, %.1f per sub-partition" % (
        groups, resident_warps, warps_per_sub))
    print("  tensor-core clocks per iteration: %.0f; issue clocks (PTX statements, upper bound): %.0f" % (
        mma_clocks, issue_clocks))
    bound = min(1.0, mma_clocks / issue_clocks) if issue_clocks else 1.0
    print("  issue bound on tensor-core utilization: %.0f%% of the %s peak" % (
        100 * bound, params["name"]))
    f32_ops = sum(1 for opcode, _ in body if F32_ARITHMETIC.match(opcode))
    if f32_ops:
        # [GEMM1]'s per-block scaling on the f32 pipe: one warp instruction
        # per clock per sub-partition (32 f32 lanes), whatever else issues.
        f32_bound = min(1.0, mma_clocks / (warps_per_sub * f32_ops))
        print("  f32 arithmetic per mma.sync: %.1f (the block scaling); the f32 pipe alone"
              " (32 lanes per sub-partition) caps tensor-core utilization at %.0f%% of the %s peak" % (
                  f32_ops / mmas, 100 * f32_bound, params["name"]))
    step_global = 32 * global_bytes * resident_warps
    if not step_global:
        print("  no global loads in this loop (they are in the enclosing K-step loop)")
        # The loop is one scale block (sm_90a): the staging of the K step,
        # done once per workgroup and step, counts against the same issue
        # slots.
        iterations = 128 // k
        step = k_step_statements(ptx, iterations)
        if step:
            step_mmas = iterations * mmas
            step_clocks = warps_per_sub * step_mmas * flop_per_mma / (rate / SUBPARTITIONS)
            print("  per K step of 128 (this loop %d times, plus the enclosing loop's staging):"
                  " %.0f PTX statements, %.1f other per mma.sync;" % (
                      iterations, step, (step - step_mmas) / step_mmas))
            print("  issue bound on tensor-core utilization per K step: %.0f%% of the %s peak" % (
                100 * min(1.0, step_clocks / (warps_per_sub * step)), params["name"]))
        print()
        return
    dram_clocks = step_global / params["dram"]
    print("  global bytes per SM and iteration: %d (%.1f B/clock at the MMA rate; DRAM gives %.1f);" % (
        step_global, step_global / mma_clocks, params["dram"]))
    print("  from DRAM alone (no L2 reuse) that bounds utilization at %.0f%%; every"
          " A/B tile is read by N/128 or M/128 workgroups, so L2 is what must serve it" % (
              100 * min(1.0, mma_clocks / dram_clocks)))


def sass_instructions(cubin, name):
    """The static SASS instruction count of entry `name` in `cubin` (an
    ELF64 file): the size of its .text.<name> section over 16 bytes, the
    instruction size from sm_70 on (the section's alignment padding
    included). For straight-line kernels (quantize, amax) it is also what
    each thread executes."""
    with open(cubin, "rb") as f:
        elf = f.read()
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)

    def section(index):
        base = shoff + index * shentsize
        name_offset, = struct.unpack_from("<I", elf, base)
        offset, size = struct.unpack_from("<QQ", elf, base + 0x18)
        return name_offset, offset, size

    _, strtab, _ = section(shstrndx)
    wanted = (".text." + name).encode()
    for index in range(shnum):
        name_offset, _, size = section(index)
        end = elf.index(b"\0", strtab + name_offset)
        if elf[strtab + name_offset:end] == wanted:
            return size // 16
    return 0


def ptxas_info(ptxas, chip, path, name):
    """(ok, registers, spill bytes, shared bytes, barriers, SASS
    instructions, message)."""
    cubin = os.path.splitext(path)[0] + ".cubin"
    result = subprocess.run([ptxas, "-arch=" + chip, "-v", path, "-o", cubin],
                            capture_output=True, text=True)
    log = result.stderr
    if result.returncode != 0:
        return False, 0, 0, 0, 0, 0, log.strip()
    regs = int((re.search(r"Used (\d+) registers", log) or [0, 0])[1])
    spills = sum(int(n) for n in re.findall(r"(\d+) bytes spill (?:stores|loads)", log))
    smem = int((re.search(r"(\d+) bytes smem", log) or [0, 0])[1])
    barriers = int((re.search(r"used (\d+) barriers", log) or [0, 0])[1])
    return True, regs, spills, smem, barriers, sass_instructions(cubin, name), ""


def kind_of(ptx, converts):
    """What the kernel does, from its instructions."""
    if MMA.search(ptx) or TCGEN05.search(ptx) or WGMMA.search(ptx):
        return "gemm"
    if converts:
        return "quantize"
    if len(re.findall(r"mul\.(?:hi|wide)\.u32", ptx)) >= 20:
        return "quantize-sr"  # Philox4x32-10 rounds in software
    if "bar.sync" in ptx and "max.u32" in ptx:
        return "amax"
    if "add.rn.f32" in ptx and "sub.rn.f32" in ptx:
        return "hadamard"  # butterflies
    return "other"


def threads_of(ptx):
    match = re.search(r"\.maxntid\s+(\d+),\s*(\d+),\s*(\d+)", ptx)
    if not match:
        return None
    return int(match[1]) * int(match[2]) * int(match[3])


def occupancy(regs, smem, threads, chip):
    """Workgroups and warps per SM on `chip`."""
    if not threads:
        return None
    params = CHIPS.get(chip, CHIPS["sm_120a"])
    warps = (threads + 31) // 32
    per_warp = ((max(regs, 1) * 32 + 255) // 256) * 256
    by_regs = 65536 // (per_warp * warps)
    by_smem = params["smem"] // smem if smem else 32
    by_threads = params["threads"] // threads
    groups = max(0, min(by_regs, by_smem, by_threads, 32))
    return groups, groups * warps


def dynamic_shared(text):
    """Kernel module name -> the dynamic shared memory bytes its host launch
    passes (`gpu.launch_func [<%stream : !llvm.ptr>] @m::@f ...
    dynamic_shared_memory_size %v`, %v an llvm.mlir.constant of the same
    function; the stream operand is there when the launch is async)."""
    sizes = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        launch = re.search(r"gpu\.launch_func\s+(?:<[^>]*>\s+)?@(\w+)::.*dynamic_shared_memory_size\s+(%\w+)", line)
        if not launch:
            continue
        value = re.escape(launch.group(2))
        for j in range(i - 1, -1, -1):
            constant = re.search(r"^\s*%s = llvm\.mlir\.constant\((\d+) : i32\)" % value, lines[j])
            if constant:
                sizes[launch.group(1)] = int(constant.group(1))
                break
            if re.match(r"^\s*llvm\.func ", lines[j]):
                break
    return sizes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ptxas")
    parser.add_argument("--chip", help="default: each PTX's .target")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--loop", action="append", default=[])
    parser.add_argument("--gemm-k", type=int, default=4096,
                        help="K of the tcgen05 GEMMs, for the model of larger tiles")
    parser.add_argument("module")
    parser.add_argument("out_dir")
    args = parser.parse_args()
    if not args.ptxas:
        args.ptxas = shutil.which("ptxas") or (
            "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)
        if not args.ptxas:
            print("(ptxas not found: no register, spill or occupancy figures)")

    os.makedirs(args.out_dir, exist_ok=True)
    text = open(args.module).read()
    dynamic = dynamic_shared(text)
    failures = []
    kernels = 0
    loops = []
    print("%-24s %-11s %-30s %8s %4s %5s %6s %7s %4s %5s %s" % (
        "kernel", "kind", "mma (main loop)", "mma/step", "cvt", "regs", "spill", "smem", "bar",
        "sass", "occupancy"))
    for name, ptx in binaries(text, "nvvm"):
        kernels += 1
        path = os.path.join(args.out_dir, name + ".ptx")
        with open(path, "w") as f:
            f.write(ptx)
        loop = main_loop(ptx)
        mmas = [any_mma(l) for l in (loop or ptx.splitlines())]
        mmas = [m for m in mmas if m]
        mma = "-"
        per_step = "-"
        if mmas:
            first = mmas[0]
            if first.re is TCGEN05:
                mma = "%d x tcgen05 %s %s" % (len(mmas), first[2], first[3])
            elif first.re is WGMMA:
                mma = "%d x wgmma %s %s.%s" % (len(mmas), first[1], first[4], first[5])
            else:
                mma = "%d x %s %s %s" % (len(mmas), first[1], first[2] or first[4], first[3] or "")
            # A loop iteration stages one K step of 128 per barrier.
            per_step = "%d" % (len(mmas) // max(1, cta_barriers(loop))) if loop else "-"
        converts = len(CONVERT.findall(ptx))
        if ".extern" in ptx:
            failures.append("%s: the PTX references an external function" % name)
        regs = spills = smem = barriers = sass = "-"
        occ = "-"
        chip = chip_of(ptx, args.chip)
        if args.ptxas:
            entry = re.search(r"\.entry\s+(\w+)", ptx)
            ok, regs, spills, smem, barriers, sass, message = ptxas_info(
                args.ptxas, chip, path, entry[1] if entry else name)
            # ptxas counts static shared memory (the empty dynamic array
            # declares 1 byte); the launch adds the dynamic size.
            if ok and name in dynamic:
                smem = dynamic[name]
            if not ok:
                failures.append("%s: ptxas failed: %s" % (name, message))
            elif spills:
                failures.append("%s: %d bytes of spills" % (name, spills))
            o = occupancy(regs, smem, threads_of(ptx), chip) if ok else None
            occ = "%d CTA / %d warps" % o if o else "-"
        print("%-24s %-11s %-30s %8s %4s %5s %6s %7s %4s %5s %s" % (
            name, kind_of(ptx, converts), mma, per_step, converts, regs, spills, smem, barriers,
            sass, occ))
        if name in args.loop:
            loops.append((name, ptx, regs if args.ptxas else 0,
                          smem if args.ptxas else 0, threads_of(ptx), chip))
    for loop in loops:
        loop_report(*loop, gemm_k=args.gemm_k)
    if not kernels:
        failures.append("no NVVM gpu.binary in %s" % args.module)
    for failure in failures:
        print("error: " + failure, file=sys.stderr)
    return 1 if (args.check and failures) else 0


if __name__ == "__main__":
    sys.exit(main())
