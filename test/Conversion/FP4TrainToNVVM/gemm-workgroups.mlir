// The persistent tcgen05 GEMM's grid: min(output tiles, gemm-workgroups),
// 148 by default (one workgroup per SM of a B200), whatever the batch; the
// option is the pipeline's too, and only the tcgen05 chips take it.
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_100a" --split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: fp4-opt %s --fp4train-to-nvvm="chip=sm_103a gemm-workgroups=3" --split-input-file | FileCheck %s --check-prefix=THREE
// RUN: fp4-opt %s --fp4train-cuda-kernel-pipeline="recipe=none chip=sm_100a gemm-workgroups=3" --split-input-file | FileCheck %s --check-prefix=PIPELINE
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_120a gemm-workgroups=3" --split-input-file 2>&1 | FileCheck %s --check-prefix=SM120
// RUN: not fp4-opt %s --fp4train-to-nvvm="chip=sm_100a gemm-workgroups=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// SM120: error: fp4train-to-nvvm: gemm-workgroups sets the grid of the persistent tcgen05 GEMM (sm_100a, sm_103a); sm_120a's GEMM kernels take one workgroup per tile
// NEGATIVE: for the --gemm-workgroups option: '-1' value invalid for uint argument!

// 3 x 3 tiles: one workgroup each by default; three workgroups of three
// tiles with gemm-workgroups=3.
// DEFAULT-LABEL: func.func @nine_tiles
// DEFAULT:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c9{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c288
// THREE-LABEL:   func.func @nine_tiles
// THREE:           gpu.launch blocks({{.*}}) in (%{{.*}} = %c3{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c288
// PIPELINE-LABEL: func.func @nine_tiles
// PIPELINE:         gpu.launch_func @nine_tiles_kernel::@nine_tiles_kernel blocks in (%c3, %c1, %c1) threads in (%c288, %c1, %c1)
!a = !fp4train.scaled<300x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<260x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
func.func @nine_tiles(%a: !a, %b: !b, %acc: tensor<300x260xf32>) -> tensor<300x260xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<300x260xf32>
  return %c : tensor<300x260xf32>
}

// -----

// 65536 batch entries or 65536 row tiles: past what a grid of one
// workgroup per tile could launch in z or y (65535), a persistent grid of
// 148 (or 3) walks them.
// DEFAULT-LABEL: func.func @grid_batch
// DEFAULT:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c148{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// THREE-LABEL:   func.func @grid_batch
// THREE:           gpu.launch blocks({{.*}}) in (%{{.*}} = %c3{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// PIPELINE-LABEL: func.func @grid_batch
// PIPELINE:         gpu.launch_func @grid_batch_kernel::@grid_batch_kernel blocks in (%c3, %c1, %c1)
!a = !fp4train.scaled<65536x64x64xf4E2M1FN, block = [1, 1, 32], scale = f8E8M0FNU>
func.func @grid_batch(%a: !a, %b: !a, %acc: tensor<65536x64x64xf32>) -> tensor<65536x64x64xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !a, tensor<65536x64x64xf32>
  return %c : tensor<65536x64x64xf32>
}

// -----

// DEFAULT-LABEL: func.func @grid_rows
// DEFAULT:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c148{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
!a = !fp4train.scaled<8388608x32xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
!b = !fp4train.scaled<16x32xf8E4M3FN, block = [1, 32], scale = f8E8M0FNU>
func.func @grid_rows(%a: !a, %b: !b, %acc: tensor<8388608x16xf32>) -> tensor<8388608x16xf32> {
  %c = fp4train.scaled_matmul %a, %b, %acc : !a, !b, tensor<8388608x16xf32>
  return %c : tensor<8388608x16xf32>
}
