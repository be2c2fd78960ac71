#!/usr/bin/env bash
#===- scripts/demo.sh - The main job on the bundled example --------------===#
#
# Usage: scripts/demo.sh BUILD_DIR
#
# Runs fp4-opt on the bundled quantized linear layer: parses it, verifies
# every op, round-trips it through the generic and bytecode forms, and prints
# the canonicalized IR with a per-op summary.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
opt="$build/bin/fp4-opt"
example="$root/examples/quantized_linear.mlir"
out="$build/demo"
mkdir -p "$out"

echo "== fp4-opt: verify and round-trip $(basename "$example")"
"$opt" "$example" -verify-roundtrip -canonicalize -cse -o "$out/quantized_linear.mlir"
cat "$out/quantized_linear.mlir"

echo
echo "== fp4train ops in the verified module"
grep -oE 'fp4train\.[a-z_]+ ' "$out/quantized_linear.mlir" | sort | uniq -c
echo "verified and round-tripped (generic + bytecode): $out/quantized_linear.mlir"
