// Kernel outlining names device symbols after the host function; a host
// symbol the GPU assembly printers cannot write (`@"up/../../x"` makes
// `up/../../x_kernel`) ended the process in the NVPTX and AMDGPU backends
// ("LLVM ERROR: Symbol name with unsupported characters"). The pipelines
// check device symbols before serializing them (docs/robustness.md).
//
// RUN: not fp4-opt %s --fp4train-cuda-pipeline="recipe=none chip=sm_120a format=isa" 2>&1 | FileCheck %s
// RUN: not fp4-opt %s --fp4train-cuda-pipeline="recipe=none chip=sm_90a format=llvm" 2>&1 | FileCheck %s
// RUN: not fp4-opt %s --fp4train-rocm-pipeline="recipe=none format=isa" 2>&1 | FileCheck %s
//
// CHECK: error: 'llvm.func' op has the device symbol name 'up/../../x_kernel', which the GPU assembly printers cannot write: device symbols take letters, digits, '_', '$' and '.' (rename the function the kernel is outlined from)
// CHECK-NOT: LLVM ERROR

func.func @"up/../../x"(%x: tensor<64x256xf32>)
    -> !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU> {
  %q = fp4train.quantize %x : tensor<64x256xf32>
      -> !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
  return %q : !fp4train.scaled<64x256xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
}
