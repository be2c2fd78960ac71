"""Runs every option of every fp4train tool with hostile values.

Each option gets 0, -1, 2^31, 2^62 and junk (a word, and an empty value) on
a small valid input. What a run may do: exit 0, or exit 1 with its reason.
The command-line tools (fp4-train, fp4-quant, fp4-gpu-prepare, fp4-gpu-run)
must say it in one line on stderr that starts with the tool's name; fp4-opt
must report an `error:` diagnostic. Never a signal, an `LLVM ERROR`, a stack
dump or a hang (each run has a time limit).

usage: option_sweep.py BIN_DIR SRC_DIR WORK_DIR [EVERY]
Prints one line per finding and a closing `N passed, M failed` line. With
EVERY, only every EVERY-th run of the list (from the first) is made: the
sanitized build's sample, where each run costs several times as much.
"""

import concurrent.futures
import os
import re
import subprocess
import sys

VALUES = ["0", "-1", str(2**31), str(2**62), "junk", ""]
TIMEOUT_S = 120


def tool_options(tool, help_args, section_start):
    """The --name options listed in `tool help_args` after `section_start`."""
    text = subprocess.run([tool] + help_args, capture_output=True,
                          text=True).stdout
    names, inside = [], section_start is None
    for line in text.splitlines():
        if section_start is not None and section_start in line:
            inside = True
            continue
        match = re.match(r"^\s+(--[a-z0-9-]+)", line)
        if inside and match:
            names.append(match.group(1))
    return names


def pass_options(fp4_opt):
    """{pass or pipeline: [option names]} from fp4-opt --help."""
    result, current = {}, None
    for line in subprocess.run([fp4_opt, "--help"], capture_output=True,
                               text=True).stdout.splitlines():
        top = re.match(r"^      --(fp4train-[a-z0-9-]+)", line)
        if top:
            current = top.group(1)
            result[current] = []
            continue
        if re.match(r"^      --", line):
            current = None
            continue
        sub = re.match(r"^        --([a-z0-9-]+)", line)
        if sub and current:
            result[current].append(sub.group(1))
    return result


def run(args, cwd):
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True,
                              timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return done.returncode, done.stdout, done.stderr


def judge(kind, name, args, rc, err):
    """A finding for one run, or None."""
    where = " ".join(args[1:])
    if rc is None:
        return f"HANG ({TIMEOUT_S} s): {where}"
    # fp4-gpu-run exits 2 on its errors (before any driver call), the
    # others 1.
    if rc < 0 or rc > 2:
        return f"exit {rc}: {where}\n{err[-2000:]}"
    for bad in ("LLVM ERROR", "Stack dump", "PLEASE submit", "Assertion",
                "AddressSanitizer", "runtime error:"):
        if bad in err:
            return f"'{bad}': {where}\n{err[-2000:]}"
    if rc == 0:
        return None
    if kind == "opt":
        return None if "error:" in err else f"failure without an error: {where}"
    # Progress lines may come first; the reason is the last line, and no
    # other line reports an error.
    lines = [line for line in err.splitlines() if line.strip()]
    if (not lines or not lines[-1].startswith(name + ": ")
            or any("error" in line for line in lines[:-1])):
        return f"not a one-line error: {where}\n{err[-2000:]}"
    return None


def main():
    bin_dir, src_dir, work = sys.argv[1:4]
    every = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    tool = lambda name: os.path.join(bin_dir, name)
    examples = os.path.join(src_dir, "examples")
    os.makedirs(work, exist_ok=True)
    step = os.path.join(work, "step.mlir")
    with open(step, "w") as f:
        f.write(STEP)
    npy = os.path.join(work, "x.npy")
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 64), }"
    header = header.ljust(118) + "\n"
    with open(npy, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little")
                + header.encode() + bytes(4 * 128))
    cases = open(os.path.join(work, "cases.txt"), "w")
    cases.write("c check %s train_step\n" % step)
    cases.close()

    runs = []  # (kind, tool name, argv)
    mlp = os.path.join(examples, "mlp_train_step.mlir")
    for option in tool_options(tool("fp4-train"), ["--help"],
                               "fp4-train options:"):
        if option in ("--help", "--version"):
            continue
        for value in VALUES:
            # --steps sets the run's length itself; every other run is short.
            base = ["--recipe", "f32"] + ([] if option == "--steps"
                                          else ["--steps", "2"])
            if option == "--recipe":
                base = ["--steps", "2"]
            runs.append(("tool", "fp4-train",
                         [tool("fp4-train"), mlp] + base
                         + [f"{option}={value}"]))
    for value in VALUES:
        for option in ("--eval-every", "--eval-batches", "--seeds", "--jobs"):
            runs.append(("tool", "fp4-train",
                         [tool("fp4-train"), os.path.join(work, "gpt.mlir"),
                          "--recipe", "f32", "--steps", "2",
                          f"{option}={value}"]))
    quant = ["--format", "--scale-mode", "--block", "--axis", "--rounding",
             "--hadamard", "--signs", "--step", "--seed", "--amax"]
    for option in quant:
        for value in VALUES:
            base = ["--format", "mxfp4"] if option != "--format" else []
            if option in ("--step",):
                base += ["--hadamard", "16", "--signs", "random"]
            runs.append(("tool", "fp4-quant",
                         [tool("fp4-quant"), "quantize"] + base
                         + [option, value, npy, os.path.join(work, "q")]))
    for value in VALUES:
        runs.append(("tool", "fp4-quant",
                     [tool("fp4-quant"), "stats", "--bf16", value]))
        for option in ("--chip", "--toolkit", "--out"):
            args = {"--chip": "sm_90a", "--toolkit": "/usr/local/cuda",
                    "--out": os.path.join(work, "prepared")}
            args[option] = value
            argv = [tool("fp4-gpu-prepare")]
            for key, val in args.items():
                argv += [key, val]
            runs.append(("tool", "fp4-gpu-prepare",
                         argv + [os.path.join(work, "cases.txt")]))
        if os.path.exists(tool("fp4-gpu-run")):
            runs.append(("tool", "fp4-gpu-run",
                         [tool("fp4-gpu-run"), "--reps", value, work]))
    passes = pass_options(tool("fp4-opt"))
    # The full GPU pipelines share their options with the kernel halves.
    for name in ("fp4train-cuda-pipeline", "fp4train-rocm-pipeline"):
        passes.pop(name, None)
    for name, options in sorted(passes.items()):
        for option in options:
            for value in VALUES:
                runs.append(("opt", "fp4-opt",
                             [tool("fp4-opt"), step, "-o", os.devnull,
                              f"--pass-pipeline=builtin.module({name}"
                              f"{{{option}={value}}})"]))

    # The GPT step for the language-model options: the bundled generator's
    # smallest configuration.
    subprocess.run([sys.executable, os.path.join(examples, "gpt_train_step.py"),
                    "--layers", "1", "--d-model", "32", "--heads", "2", "--mlp", "64",
                    "--seq", "32", "-o", os.path.join(work, "gpt.mlir")],
                   check=True)

    runs = runs[::every]
    findings = []
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        futures = []
        for i, (kind, name, argv) in enumerate(runs):
            cwd = os.path.join(work, "cwd%d" % i)
            os.makedirs(cwd, exist_ok=True)
            futures.append((kind, name, argv,
                            pool.submit(run, argv, cwd)))
        for kind, name, argv, future in futures:
            rc, _, err = future.result()
            finding = judge(kind, name, argv, rc, err)
            if finding:
                findings.append(finding)
                print(finding)
    print(f"{len(runs) - len(findings)} passed, {len(findings)} failed")
    return 1 if findings else 0


STEP = """
func.func @train_step(%x: tensor<32x64xf32>, %w: tensor<16x64xf32> {fp4train.param}, %dy: tensor<32x16xf32>, %step: i64)
    -> (tensor<32x16xf32>, tensor<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<32x64xf32>, tensor<16x64xf32>) outs(%init : tensor<32x16xf32>) -> tensor<32x16xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(n, k, m) -> (m, n)>, affine_map<(n, k, m) -> (m, k)>, affine_map<(n, k, m) -> (n, k)>]
      ins(%dy, %x : tensor<32x16xf32>, tensor<32x64xf32>) outs(%init2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y, %dw : tensor<32x16xf32>, tensor<16x64xf32>
}
"""

if __name__ == "__main__":
    sys.exit(main())
