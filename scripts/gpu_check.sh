#!/bin/bash
# make gpu-check: prepares, on this machine (no GPU needed), one
# self-contained folder that checks fp4train's NVIDIA kernels on a real
# device: the runner, the cubins, every kernel's inputs and expected outputs,
# and run.sh, which needs nothing but the NVIDIA driver.
# Usage: scripts/gpu_check.sh BUILD CHIP
set -euo pipefail
BUILD=${1:?usage: gpu_check.sh BUILD CHIP}
CHIP=${2:?usage: gpu_check.sh BUILD CHIP}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$BUILD/gpu-check
PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
[ -x "$PTXAS" ] || { echo "gpu-check: needs CUDA's ptxas (PATH or /usr/local/cuda/bin)" >&2; exit 1; }
[ -x "$BUILD/bin/fp4-gpu-run" ] || { echo "gpu-check: fp4-gpu-run was not built (no cuda.h)" >&2; exit 1; }
TOOLKIT=$(dirname "$(dirname "$(readlink -f "$PTXAS")")")

rm -rf "$OUT"
"$BUILD/bin/fp4-gpu-prepare" --chip "$CHIP" --toolkit "$TOOLKIT" --out "$OUT" \
  "$SRC/benchmarks/gpu-check/cases.txt"
cp "$BUILD/bin/fp4-gpu-run" "$OUT/"
strip "$OUT/fp4-gpu-run" 2>/dev/null || true
cat > "$OUT/run.sh" <<'RUN'
#!/bin/sh
# Runs every check of this folder on the first CUDA device (needs only the
# NVIDIA driver): each recorded kernel launch gets its recorded inputs, its
# outputs are compared bit for bit with the emulator's, and it is timed.
# Options go to fp4-gpu-run (--reps N, --no-flush).
cd "$(dirname "$0")" && exec ./fp4-gpu-run "$@" .
RUN
chmod +x "$OUT/run.sh"
cat > "$OUT/README.txt" <<README
fp4train GPU check for $CHIP, prepared by make gpu-check (fp4-gpu-prepare).
Run ./run.sh on a machine with an NVIDIA GPU of that architecture and its
driver; nothing else is needed. It prints one row per kernel launch (time,
GB/s against the device's memory bandwidth, bit-exact or the differing
bytes) and one per case (GEMM TFLOP/s against the FP8 dense peak), and exits
0 only if every output is bit-identical to the lane-exact emulator's.
Cases: $SRC/benchmarks/gpu-check/cases.txt
README
size=$(du -sb "$OUT" | cut -f1)
echo "gpu-check: $OUT is ready ($((size / 1048576)) MiB); run $OUT/run.sh on a $CHIP GPU"
if [ "$size" -ge $((64 * 1048576)) ]; then
  echo "gpu-check: the folder is over 64 MiB" >&2
  exit 1
fi
