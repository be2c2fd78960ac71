// The f32 contractions of fp4train-cpu-pipeline become loops over vectors of
// outputs with plain (unfused, non-fast-math) multiplies and adds, also
// after LLVM's -O2, which the JIT runs (JitFunction.cpp).
// The loops are in functions of their own ([JIT1]), @step calls them.
// RUN: fp4-opt %s --fp4train-cpu-pipeline="recipe=none out-params=1" \
// RUN:   | FileCheck %s --implicit-check-not=fastmath \
// RUN:       --implicit-check-not=llvm.intr.fma --implicit-check-not=llvm.intr.fmuladd
// RUN: fp4-opt %s --fp4train-cpu-pipeline="recipe=none out-params=1" \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O2 -S \
// RUN:   | FileCheck %s --check-prefix=LLVM --implicit-check-not=@llvm.fma \
// RUN:       --implicit-check-not=@llvm.fmuladd

//       CHECK:   llvm.func internal @step_nest
//       CHECK:   llvm.fmul %{{.*}} : vector<16xf32>
//       CHECK:   llvm.fadd %{{.*}} : vector<16xf32>
// CHECK-LABEL: llvm.func @step(
//       CHECK:   llvm.call @step_nest
//       CHECK:   llvm.return

//   LLVM-NOT:   {{fmul|fadd}} {{(fast|contract|reassoc)}}
//       LLVM:   define internal {{.*}} @step_nest
//   LLVM-NOT:   {{fmul|fadd}} {{(fast|contract|reassoc)}}
//       LLVM:   fmul <16 x float>
//   LLVM-NOT:   {{fmul|fadd}} {{(fast|contract|reassoc)}}
//       LLVM:   fadd <16 x float>
//   LLVM-NOT:   {{fmul|fadd}} {{(fast|contract|reassoc)}}
//       LLVM:   define {{.*}} @step(
//       LLVM:   call {{.*}} @step_nest
//       LLVM:   ret void
func.func @step(%x: tensor<7x33xf32>, %w: tensor<21x33xf32>, %dy: tensor<7x21xf32>)
    -> (tensor<7x21xf32>, tensor<21x33xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7x21xf32>
  %y0 = linalg.fill ins(%zero : f32) outs(%e : tensor<7x21xf32>) -> tensor<7x21xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<7x33xf32>, tensor<21x33xf32>) outs(%y0 : tensor<7x21xf32>) -> tensor<7x21xf32>
  %ew = tensor.empty() : tensor<21x33xf32>
  %dw0 = linalg.fill ins(%zero : f32) outs(%ew : tensor<21x33xf32>) -> tensor<21x33xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                       affine_map<(m, n, k) -> (k, n)>,
                                       affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %x : tensor<7x21xf32>, tensor<7x33xf32>) outs(%dw0 : tensor<21x33xf32>) -> tensor<21x33xf32>
  return %y, %dw : tensor<7x21xf32>, tensor<21x33xf32>
}
