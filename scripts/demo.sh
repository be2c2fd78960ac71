#!/usr/bin/env bash
#===- scripts/demo.sh - The main job on the bundled examples -------------===#
#
# Usage: scripts/demo.sh BUILD_DIR
#
# 1. Reads the bundled transformer-block training step (forward, backward),
#    prints the role of every matmul (Fprop/Dgrad/Wgrad/other), and rewrites
#    it with the NVFP4 recipe, printing what each GEMM became.
# 2. Compiles the same step for gfx950 with the MXFP4 recipe (NVFP4 has no
#    native gfx950 path) and reports each GEMM kernel's assembly.
# 3. Compiles it for sm_120a with the NVFP4 recipe and reports each kernel's
#    PTX (block-scaled mma.sync per K step, registers, shared memory, spills
#    from ptxas -v when the CUDA toolkit is there), then for sm_100a (the
#    tcgen05 kernels: MMAs per pipeline stage) and for sm_90a (Hopper: one
#    wgmma per scale block, NVFP4 on f16 values that carry their scales).
# 4. Trains the MLP example on the CPU under f32, mxfp4-hadamard and nvfp4
#    and prints the comparison table.
# 5. Verifies and round-trips the hand-written quantized linear layer.
# Outputs land in BUILD_DIR/demo/.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
opt="$build/bin/fp4-opt"
out="$build/demo"
mkdir -p "$out"

block="$root/examples/transformer_block_train_step.mlir"
recipe=nvfp4
echo "== Roles of the matmuls in $(basename "$block")"
"$opt" "$block" -fp4train-annotate-roles="report=$out/roles.json" -o /dev/null
python3 - "$out/roles.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
print("%3s  %-6s %-5s %-19s %5s %5s %5s %5s" % ("#", "role", "param", "op", "m", "n", "k", "batch"))
for i, r in enumerate(rows, 1):
    param = "-" if r["param"] is None else "#%d" % r["param"]
    print("%3d  %-6s %-5s %-19s %5s %5s %5s %5s" % (i, r["role"], param, r["op"], r["m"], r["n"], r["k"], r["batch"]))
PY

echo
echo "== Quantized with recipe=$recipe (step from argument #10)"
"$opt" "$block" --fp4train-quantize-pipeline="recipe=$recipe step-arg=10 report=$out/quantize.json" \
  -o "$out/transformer_block_$recipe.mlir"
python3 - "$out/quantize.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
def describe(o):
    return "%s %s %s" % (o["format"], "x".join(map(str, o["block"])), o["rounding"])
for i, r in enumerate(rows, 1):
    if not r["quantized"]:
        what = "kept (%s)" % r["kept"]
    else:
        what = " | ".join(describe(o) for o in r["operands"])
        if r["hadamard"]:
            what += " | Hadamard-%d %s" % (r["hadamard"]["size"], r["hadamard"]["signs"])
    print("%3d  %-6s %s" % (i, r["role"], what))
PY
echo "ops in the quantized module:"
grep -oE '= (fp4train|linalg)\.[a-z_]+' "$out/transformer_block_$recipe.mlir" | cut -c3- | sort | uniq -c
echo "quantized IR: $out/transformer_block_$recipe.mlir"

echo
echo "== gfx950: $(basename "$block") with recipe=mxfp4 (assembly in $out/gfx950/)"
"$opt" "$block" --fp4train-rocm-pipeline="recipe=mxfp4 chip=gfx950 format=isa step-arg=10" \
  -o "$out/transformer_block_gfx950.mlir"
python3 "$root/scripts/isa_report.py" "$out/transformer_block_gfx950.mlir" "$out/gfx950"

echo
echo "== sm_120a: $(basename "$block") with recipe=$recipe (PTX in $out/sm120a/)"
"$opt" "$block" --fp4train-cuda-pipeline="recipe=$recipe chip=sm_120a format=isa step-arg=10" \
  -o "$out/transformer_block_sm120a.mlir"
/usr/bin/python3 "$root/scripts/ptx_report.py" "$out/transformer_block_sm120a.mlir" "$out/sm120a"

echo
echo "== sm_100a: $(basename "$block") with recipe=$recipe, tcgen05 (PTX in $out/sm100a/)"
"$opt" "$block" --fp4train-cuda-pipeline="recipe=$recipe chip=sm_100a format=isa step-arg=10" \
  -o "$out/transformer_block_sm100a.mlir"
/usr/bin/python3 "$root/scripts/ptx_report.py" --chip sm_100a "$out/transformer_block_sm100a.mlir" "$out/sm100a"

echo
echo "== sm_90a: $(basename "$block") with recipe=$recipe, wgmma on f16 values that carry their block scales (PTX in $out/sm90a/)"
"$opt" "$block" --fp4train-cuda-pipeline="recipe=$recipe chip=sm_90a format=isa step-arg=10" \
  -o "$out/transformer_block_sm90a.mlir"
/usr/bin/python3 "$root/scripts/ptx_report.py" --chip sm_90a "$out/transformer_block_sm90a.mlir" "$out/sm90a"

echo
echo "== Training the MLP example on the CPU (400 steps per recipe, same seed and data)"
"$build/bin/fp4-train" "$root/examples/mlp_train_step.mlir" \
  --compare f32,mxfp4-hadamard,nvfp4 --steps 400 --out "$out/train"

echo
example="$root/examples/quantized_linear.mlir"
echo "== fp4-opt: verify and round-trip $(basename "$example")"
"$opt" "$example" -verify-roundtrip -canonicalize -cse -o "$out/quantized_linear.mlir"
grep -oE '= fp4train\.[a-z_]+' "$out/quantized_linear.mlir" | cut -c3- | sort | uniq -c
echo "verified and round-tripped (generic + bytecode): $out/quantized_linear.mlir"
