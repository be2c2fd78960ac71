#!/usr/bin/env bash
# Static report of the 4096^3 NVFP4 GEMM kernel on an NVIDIA chip (no GPU
# needed): lowers benchmarks/sm120a_gemm_4096.mlir with the CUDA pipeline
# (chip sm_120a, or CHIP: sm_90a) to PTX, assembles it with ptxas -v when
# the CUDA toolkit is there (registers, spills, shared memory, occupancy),
# and prints the main loop's PTX statements per warp and iteration against
# the tensor-core rate (scripts/ptx_report.py --loop), then the grid's waves
# and each wave's DRAM traffic with L2 reuse assumed (scripts/
# wave_report.py). With FORMAT mxfp4 it
# reports the 4096^3 MXFP4 GEMM of benchmarks/gfx950_gemm_4096.mlir (@gemm)
# instead: on sm_90a the wgmma kernels ([WG1]-[WG3]), whose block loop
# ptx_report.py counts on the path that real scales take (a folded block
# for MXFP4; NVFP4 has one path) (docs/nvvm.md). sm_90a's MXFP4 GEMM runs
# after two kernels that write its operands as E4M3, B^T folded ([WG4]):
# their DRAM time joins the GEMM's for the end-to-end figure.
#
#   benchmarks/sm120a_report.sh BUILD_DIR [CHIP [FORMAT]]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/report_setup.sh"
chip=${2:-sm_120a}
format=${3:-nvfp4}

case $format in
  nvfp4) input=$root/benchmarks/sm120a_gemm_4096.mlir; block=16 ;;
  mxfp4) input=$root/benchmarks/gfx950_gemm_4096.mlir; block=32 ;;
  *) echo "sm120a_report.sh: FORMAT must be nvfp4 or mxfp4, not '$format'" >&2
     exit 1 ;;
esac
# Only @gemm: the MXFP4 file also holds the 8192 and bf16 variants.
"$fp4opt" "$input" -o "$out/gemm.mlir" \
  --symbol-privatize="exclude=gemm" --symbol-dce \
  --fp4train-cuda-pipeline="recipe=none chip=$chip format=isa"

if [[ $chip == sm_120a ]]; then
  mma="mma.sync m16n8k64 kind::mxf4nvf4 (two K steps of 128 per loop iteration)"
elif [[ $block == 16 && $chip == sm_90a ]]; then
  mma="E2M1 x UE4M3 staged as f16 values, wgmma m64n128k16 f16 per 16-element" \
  mma="$mma block and warpgroup, one f32 add per accumulator (one block per loop" \
  mma="$mma iteration)"
elif [[ $block == 16 ]]; then
  mma="E2M1 widened to E4M3, mma.sync m16n8k16 e4m3 per 16-element block and" \
  mma="$mma f32 scaling (one block per loop iteration)"
elif [[ $chip == sm_90a ]]; then
  mma="A and B^T written as E4M3 by two staging kernels, B^T's scales folded" \
  mma="$mma ([WG4]), wgmma m64n128k32 e4m3 per 32-element block and warpgroup," \
  mma="$mma f32 scaling (one block per loop iteration)"
else
  mma="E2M1 widened to E4M3, mma.sync m16n8k32 e4m3 per 32-element block and" \
  mma="$mma f32 scaling (one block per loop iteration)"
fi
echo
echo "Static $chip report: 4096x4096x4096 ${format^^} GEMM, $mma, 128x128" \
  "workgroup tiles; from the PTX, no GPU"
# The GEMM is the module's last kernel: sm_90a's MXFP4 staging kernels
# ([WG4]) are outlined before it.
gemm_kernel=gemm_kernel
bytes=$(/usr/bin/python3 -c "print(0.5 + 1 / $block)")
staging=()
if [[ $block == 32 && $chip == sm_90a ]]; then
  gemm_kernel=gemm_kernel_1
  staging=(--staging "$bytes" 1)
  bytes=$(/usr/bin/python3 -c "print(1 + 1 / $block)")
fi
report=$(/usr/bin/python3 "$root/scripts/ptx_report.py" --loop "$gemm_kernel" \
  "$out/gemm.mlir" "$out/ptx")
echo "$report"
if (( ${#staging[@]} )); then
  bound=$(sed -n 's/.*per K step.*issue bound \([0-9]*\)%.*/\1/p' <<<"$report")
  staging+=(--issue-bound "$bound")
fi
# Waves of one workgroup per SM and DRAM per wave (scripts/wave_report.py):
# RTX 5090 (sm_120a) 170 SMs, 1676 dense FP4 TFLOPS, 1.792 TB/s; H100 SXM
# (sm_90a) 132 SMs, 1979 dense FP8 TFLOPS, 3.35 TB/s. Global bytes per
# element: an E2M1 code (1/2), or a staged E4M3 one (1), and its share of a
# scale byte.
if [[ $chip == sm_120a ]]; then chip_args=(--sms 170 --tflops 1676 --dram 1.792)
else chip_args=(--sms 132 --tflops 1979 --dram 3.35); fi
/usr/bin/python3 "$root/scripts/wave_report.py" "${chip_args[@]}" \
  --bytes "$bytes" "${staging[@]}" 4096 4096 4096
