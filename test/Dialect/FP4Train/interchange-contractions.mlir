// RUN: fp4-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(fp4train-interchange-contractions))' | FileCheck %s
// RUN: fp4-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(fp4train-interchange-contractions,fp4train-interchange-contractions))' | FileCheck %s
// RUN: fp4-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(fp4train-interchange-contractions),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(convert-linalg-to-loops))' | FileCheck %s --check-prefix=LOOPS

// A plain matmul iterates (m, k, n): n, contiguous in C and B, innermost.
// CHECK-DAG: #[[$MK:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$KN:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$MN:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @matmul
//  CHECK-NOT:   linalg.transpose
//      CHECK:   linalg.generic {indexing_maps = [#[[$MK]], #[[$KN]], #[[$MN]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:       ins(%{{.*}}, %{{.*}} : tensor<7x33xf32>, tensor<33x5xf32>)
// CHECK-SAME:       {fp4train.role = #fp4train.role<fprop>}
//      CHECK:     arith.mulf
// CHECK-NEXT:     arith.addf
// CHECK-NEXT:     linalg.yield
//  CHECK-NOT:   linalg.matmul

// LOOPS-LABEL: func @matmul
//       LOOPS:   scf.for %[[M:.+]] = %{{.*}} to %{{.*}} step
//       LOOPS:     scf.for %[[K:.+]] = %{{.*}} to %{{.*}} step
//       LOOPS:       scf.for %[[N:.+]] = %{{.*}} to %{{.*}} step
//   LOOPS-DAG:         memref.load %{{.*}}[%[[M]], %[[K]]] : memref<7x33xf32>
//   LOOPS-DAG:         memref.load %{{.*}}[%[[K]], %[[N]]] : memref<33x5xf32>
//   LOOPS-DAG:         memref.load %{{.*}}[%[[M]], %[[N]]] : memref<7x5xf32>
//       LOOPS:         %[[P:.+]] = arith.mulf
//  LOOPS-NEXT:         %[[S:.+]] = arith.addf %{{.*}}, %[[P]] : f32
//  LOOPS-NEXT:         memref.store %[[S]], %{{.*}}[%[[M]], %[[N]]]
func.func @matmul(%a: tensor<7x33xf32>, %b: tensor<33x5xf32>, %c: tensor<7x5xf32>) -> tensor<7x5xf32> {
  %r = linalg.matmul {fp4train.role = #fp4train.role<fprop>}
      ins(%a, %b : tensor<7x33xf32>, tensor<33x5xf32>) outs(%c : tensor<7x5xf32>) -> tensor<7x5xf32>
  return %r : tensor<7x5xf32>
}

// -----

// A · Bᵀ: B[n, k] is copied into a [k, n] tensor so that n is contiguous.
// CHECK-DAG: #[[$MK:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$KN:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$MN:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @matmul_transpose_b
// CHECK-SAME:    %[[A:[^:]+]]: tensor<7x33xf32>, %[[B:[^:]+]]: tensor<5x33xf32>
//      CHECK:   %[[E:.+]] = tensor.empty() : tensor<33x5xf32>
//      CHECK:   %[[BT:.+]] = linalg.transpose ins(%[[B]] : tensor<5x33xf32>) outs(%[[E]] : tensor<33x5xf32>) permutation = [1, 0]
//      CHECK:   linalg.generic {indexing_maps = [#[[$MK]], #[[$KN]], #[[$MN]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:       ins(%[[A]], %[[BT]] : tensor<7x33xf32>, tensor<33x5xf32>)
func.func @matmul_transpose_b(%a: tensor<7x33xf32>, %b: tensor<5x33xf32>, %c: tensor<7x5xf32>) -> tensor<7x5xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<7x33xf32>, tensor<5x33xf32>) outs(%c : tensor<7x5xf32>) -> tensor<7x5xf32>
  return %r : tensor<7x5xf32>
}

// -----

// Aᵀ · B (a Wgrad): A[k, m] does not move along n and needs no copy.
// CHECK-DAG: #[[$KM:.+]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-DAG: #[[$KN:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$MN:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @matmul_transpose_a
//  CHECK-NOT:   linalg.transpose
//      CHECK:   linalg.generic {indexing_maps = [#[[$KM]], #[[$KN]], #[[$MN]]], iterator_types = ["parallel", "reduction", "parallel"]}
func.func @matmul_transpose_a(%a: tensor<33x7xf32>, %b: tensor<33x5xf32>, %c: tensor<7x5xf32>) -> tensor<7x5xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                      affine_map<(m, n, k) -> (k, n)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<33x7xf32>, tensor<33x5xf32>) outs(%c : tensor<7x5xf32>) -> tensor<7x5xf32>
  return %r : tensor<7x5xf32>
}

// -----

// CHECK-DAG: #[[$A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func @batch_matmul
//      CHECK:   linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
func.func @batch_matmul(%a: tensor<4x7x33xf32>, %b: tensor<4x33x5xf32>, %c: tensor<4x7x5xf32>) -> tensor<4x7x5xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x7x33xf32>, tensor<4x33x5xf32>)
      outs(%c : tensor<4x7x5xf32>) -> tensor<4x7x5xf32>
  return %r : tensor<4x7x5xf32>
}

// -----

// Two reductions keep their relative order, (k1, k2), around the innermost
// n; B[n, k1, k2] gets a [k1, k2, n] copy. Dynamic sizes come from tensor.dim.
// CHECK-DAG: #[[$A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func @generic_two_reductions
// CHECK-SAME:    %{{[^:]+}}: tensor<?x3x4xf32>, %[[B:[^:]+]]: tensor<?x3x4xf32>
//      CHECK:   %[[N:.+]] = tensor.dim %[[B]], %{{.*}} : tensor<?x3x4xf32>
//      CHECK:   %[[E:.+]] = tensor.empty(%[[N]]) : tensor<3x4x?xf32>
//      CHECK:   %[[BT:.+]] = linalg.transpose ins(%[[B]] : tensor<?x3x4xf32>) outs(%[[E]] : tensor<3x4x?xf32>) permutation = [1, 2, 0]
//      CHECK:   linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:       ins(%{{.*}}, %[[BT]] : tensor<?x3x4xf32>, tensor<3x4x?xf32>)
func.func @generic_two_reductions(%a: tensor<?x3x4xf32>, %b: tensor<?x3x4xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, k1, n, k2) -> (m, k1, k2)>,
                                        affine_map<(m, k1, n, k2) -> (n, k1, k2)>,
                                        affine_map<(m, k1, n, k2) -> (m, n)>],
                       iterator_types = ["parallel", "reduction", "parallel", "reduction"]}
      ins(%a, %b : tensor<?x3x4xf32>, tensor<?x3x4xf32>) outs(%c : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// Left alone: bf16 operands, buffers, a scalar result, and a contraction
// whose loops are in the target order already.
// CHECK-LABEL: func @untouched
//      CHECK:   linalg.matmul ins(%{{.*}} : tensor<7x33xbf16>, tensor<33x5xbf16>)
//      CHECK:   linalg.matmul ins(%{{.*}} : memref<7x33xf32>, memref<33x5xf32>)
//      CHECK:   linalg.dot
//      CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME:       {already}
func.func @untouched(%a: tensor<7x33xbf16>, %b: tensor<33x5xbf16>, %c: tensor<7x5xf32>,
                     %ma: memref<7x33xf32>, %mb: memref<33x5xf32>, %mc: memref<7x5xf32>,
                     %x: tensor<33xf32>, %y: tensor<33xf32>, %s: tensor<f32>,
                     %fa: tensor<7x33xf32>, %fb: tensor<33x5xf32>)
    -> (tensor<7x5xf32>, tensor<f32>, tensor<7x5xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<7x33xbf16>, tensor<33x5xbf16>) outs(%c : tensor<7x5xf32>) -> tensor<7x5xf32>
  linalg.matmul ins(%ma, %mb : memref<7x33xf32>, memref<33x5xf32>) outs(%mc : memref<7x5xf32>)
  %d = linalg.dot ins(%x, %y : tensor<33xf32>, tensor<33xf32>) outs(%s : tensor<f32>) -> tensor<f32>
  %g = linalg.generic {indexing_maps = [affine_map<(m, k, n) -> (m, k)>,
                                        affine_map<(m, k, n) -> (k, n)>,
                                        affine_map<(m, k, n) -> (m, n)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%fa, %fb : tensor<7x33xf32>, tensor<33x5xf32>) outs(%c : tensor<7x5xf32>) attrs = {already} {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %q = arith.addf %acc, %p : f32
    linalg.yield %q : f32
  } -> tensor<7x5xf32>
  return %r, %d, %g : tensor<7x5xf32>, tensor<f32>, tensor<7x5xf32>
}
