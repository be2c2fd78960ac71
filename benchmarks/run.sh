#!/usr/bin/env bash
# Runs the numerics benchmarks of BUILD_DIR and prints each quantization
# throughput with its ratio to the memcpy bandwidth measured in the same run.
#
#   benchmarks/run.sh BUILD_DIR [extra Google Benchmark flags]
#
# The thread count is FP4TRAIN_NUM_THREADS (default 2, the issue's target).
set -euo pipefail

build=${1:?usage: benchmarks/run.sh BUILD_DIR}
shift
bench="$build/benchmarks/fp4train-bench-quantize"
if [[ ! -x "$bench" ]]; then
  echo "run.sh: $bench not found; build the fp4train-benchmarks target" >&2
  exit 1
fi
export FP4TRAIN_NUM_THREADS=${FP4TRAIN_NUM_THREADS:-2}
json=$(mktemp)
trap 'rm -f "$json"' EXIT
"$bench" --benchmark_out="$json" --benchmark_out_format=json \
  --benchmark_min_time=1 "$@"

python3 - "$json" <<'PY'
import json, sys
runs = [b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b.get("run_type", "iteration") == "iteration"]
copy = next(b["bytes_per_second"] for b in runs if b["name"].startswith("BM_Memcpy"))
threads = int(runs[0].get("threads", 0) or 0)
print()
print("Quantization of 8192x8192 f32 on %s thread(s); memcpy %.2f GB/s"
      % (runs[0].get("threads", "?"), copy / 1e9))
print("%-28s %10s %12s" % ("configuration", "GB/s", "x memcpy"))
for b in runs:
    if not b["name"].startswith("BM_Quantize"):
        continue
    rate = b["bytes_per_second"]
    print("%-28s %10.2f %12.2f" % (b.get("label", b["name"]), rate / 1e9, rate / copy))
PY
