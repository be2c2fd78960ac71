#!/usr/bin/env bash
#===- scripts/demo.sh - The main job on the bundled examples -------------===#
#
# Usage: scripts/demo.sh BUILD_DIR
#
# 1. Reads the bundled transformer-block training step (forward, backward),
#    prints the role of every matmul (Fprop/Dgrad/Wgrad/other), and rewrites
#    it with the NVFP4 recipe, printing what each GEMM became.
# 2. Verifies and round-trips the hand-written quantized linear layer.
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
example="$root/examples/quantized_linear.mlir"
echo "== fp4-opt: verify and round-trip $(basename "$example")"
"$opt" "$example" -verify-roundtrip -canonicalize -cse -o "$out/quantized_linear.mlir"
grep -oE '= fp4train\.[a-z_]+' "$out/quantized_linear.mlir" | cut -c3- | sort | uniq -c
echo "verified and round-tripped (generic + bytecode): $out/quantized_linear.mlir"
