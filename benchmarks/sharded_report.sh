#!/usr/bin/env bash
# Sharded training steps (docs/sharding.md), on the byte-level GPT of
# examples/gpt_train_step.py at its defaults but for two sequences per step
# (so that the batch splits in two):
#  - the bytes each kind of collective moves per step when the step is data
#    parallel over 2 processes (fp4train-shard-step dp=2) or Megatron tensor
#    parallel (tp=2), for the f32 step and each FP4 recipe, summed from
#    fp4train-partition's report (each process's buffer per collective),
#    with what its gathers would move unquantized ([SH4]);
#  - the step time of the unsharded step on 1 process and of the data-
#    parallel step on 2 processes (mpiexec, MPICH) on this machine,
#    measured in this run by fp4-train over STEPS steps (default 100).
#
#   benchmarks/sharded_report.sh BUILD_DIR [STEPS]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/report_setup.sh"
steps=${2:-100}
python=/usr/bin/python3
"$python" "$root/examples/gpt_train_step.py" --batch 2 -o "$out/gpt.mlir"
"$fp4opt" "$out/gpt.mlir" --fp4train-shard-step=dp=2 -o "$out/gpt_dp2.mlir"

# Megatron tensor parallelism of every block: Wq, Wk, Wv, W1 by output
# features, Wo, W2 by input features (arguments 3-9 of block 0, then 8 per
# block).
tp_split=$("$python" -c "
import sys
layers = 4
print(','.join('%d:%d' % (3 + 8 * l + i, d) for l in range(layers)
               for i, d in ((0, 0), (1, 0), (2, 0), (3, 1), (5, 0), (6, 1))))")
"$fp4opt" "$out/gpt.mlir" --fp4train-shard-step="tp=2 tp-split=$tp_split" \
  -o "$out/gpt_tp2.mlir"

echo
echo "Collectives per step of the GPT (examples/gpt_train_step.py --batch 2)" \
  "over 2 processes, data (dp) or tensor (tp) parallel"
for split in dp tp; do
  for recipe in none mxfp4-hadamard nvfp4; do
    "$fp4opt" "$out/gpt_${split}2.mlir" -o /dev/null \
      --fp4train-quantize-pipeline="recipe=$recipe" \
      --fp4train-partition="report=$out/collectives-$split-$recipe.json"
  done
done
"$python" - "$out" <<'PY'
import collections, json, sys
print("%-4s %-16s %-12s %6s %14s %14s" % ("", "recipe", "collective", "count",
                                          "bytes/process", "f32 gathers"))
for split in ("dp", "tp"):
    for recipe in ("none", "mxfp4-hadamard", "nvfp4"):
        report = json.load(open("%s/collectives-%s-%s.json" % (sys.argv[1], split, recipe)))
        kinds = collections.OrderedDict()
        for c in report:
            count, size, replaced = kinds.get(c["collective"], (0, 0, 0))
            kinds[c["collective"]] = (count + 1, size + c["bytes"],
                                      replaced + c.get("replaces_bytes", c["bytes"]))
        for kind, (count, size, replaced) in kinds.items():
            print("%-4s %-16s %-12s %6d %14d %14s" % (
                split, recipe.replace("none", "f32"), kind, count, size,
                replaced if kind == "all_gather" else ""))
print("f32 gathers: the bytes of the same gathers unquantized; a gather that"
      " only feeds a quantize moves codes and scales instead ([SH4]). The"
      " GPT's gathers (its heads, for attention) feed no quantize.")
PY

train="$build/bin/fp4-train"
if ! command -v mpiexec >/dev/null || [[ ! -x $train ]]; then
  echo "sharded_report.sh: no mpiexec or fp4-train; no step times" >&2
  exit 0
fi
echo
echo "Step time of the GPT under nvfp4, $steps steps (fp4-train, runtime" \
  "numerics, 1 thread per process)"
one=$("$train" "$out/gpt.mlir" --recipe nvfp4 --steps "$steps" --eval-every "$steps" --eval-batches 1)
two=$(mpiexec -n 2 "$train" "$out/gpt_dp2.mlir" --recipe nvfp4 --steps "$steps" \
  --eval-every "$steps" --eval-batches 1)
"$python" - "$steps" "$one" "$two" <<'PY'
import re, sys
steps = int(sys.argv[1])
def seconds(text):
    return float(re.search(r"([0-9.]+) s$", text.strip().splitlines()[-1]).group(1))
one, two = seconds(sys.argv[2]), seconds(sys.argv[3])
print("%-28s %10s %8s" % ("run", "ms/step", "x 1"))
print("%-28s %10.1f %8.2f" % ("1 process (unsharded)", 1e3 * one / steps, 1.0))
print("%-28s %10.1f %8.2f" % ("2 processes (dp=2)", 1e3 * two / steps, two / one))
print("Each process computes half the batch; the 2-process time includes its"
      " all-reduces (shared memory, one machine).")
PY
