// RUN: fp4-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(fp4train-vectorize-contractions{width=8 unroll=2}))' | FileCheck %s

// C[m, n] += A[m, k] * B[k, n] into a fresh buffer: blocks of 2 x 8 outputs
// accumulated in registers over k, then masked single vectors to the end.
// CHECK-LABEL: func @matmul
// CHECK-SAME:    %[[A:[^:]+]]: memref<7x33xf32>, %[[B:[^:]+]]: memref<33x21xf32>
//      CHECK:   %[[C:.+]] = memref.alloc() : memref<7x21xf32>
//  CHECK-DAG:   %[[C0:.+]] = arith.constant 0 : index
//  CHECK-DAG:   %[[C1:.+]] = arith.constant 1 : index
//  CHECK-DAG:   %[[C7:.+]] = arith.constant 7 : index
//  CHECK-DAG:   %[[C21:.+]] = arith.constant 21 : index
//  CHECK-DAG:   %[[C33:.+]] = arith.constant 33 : index
//  CHECK-DAG:   %[[PAD:.+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
//      CHECK:   scf.for %[[M:.+]] = %[[C0]] to %[[C7]] step %[[C1]] {
//      CHECK:     %[[C16:.+]] = arith.constant 16 : index
//      CHECK:     %[[REST:.+]] = arith.remsi %[[C21]], %[[C16]] : index
//      CHECK:     %[[FULL:.+]] = arith.subi %[[C21]], %[[REST]] : index
//      CHECK:     scf.for %[[N:.+]] = %[[C0]] to %[[FULL]] step %[[C16]] {
//      CHECK:       %[[N8:.+]] = arith.addi %[[N]], %{{.+}} : index
//      CHECK:       %[[I0:.+]] = vector.load %[[C]][%[[M]], %[[N]]] : memref<7x21xf32>, vector<8xf32>
//      CHECK:       %[[I1:.+]] = vector.load %[[C]][%[[M]], %[[N8]]] : memref<7x21xf32>, vector<8xf32>
//      CHECK:       %[[R:.+]]:2 = scf.for %[[K:.+]] = %[[C0]] to %[[C33]] step %[[C1]] iter_args(%[[S0:.+]] = %[[I0]], %[[S1:.+]] = %[[I1]])
//      CHECK:         %[[X:.+]] = memref.load %[[A]][%[[M]], %[[K]]] : memref<7x33xf32>
//      CHECK:         %[[XS:.+]] = vector.broadcast %[[X]] : f32 to vector<8xf32>
//      CHECK:         %[[Y0:.+]] = vector.load %[[B]][%[[K]], %[[N]]] : memref<33x21xf32>, vector<8xf32>
//      CHECK:         %[[P0:.+]] = arith.mulf %[[XS]], %[[Y0]] : vector<8xf32>
//      CHECK:         %[[T0:.+]] = arith.addf %[[S0]], %[[P0]] : vector<8xf32>
//      CHECK:         %[[Y1:.+]] = vector.load %[[B]][%[[K]], %[[N8]]] : memref<33x21xf32>, vector<8xf32>
//      CHECK:         %[[P1:.+]] = arith.mulf %[[XS]], %[[Y1]] : vector<8xf32>
//      CHECK:         %[[T1:.+]] = arith.addf %[[S1]], %[[P1]] : vector<8xf32>
//      CHECK:         scf.yield %[[T0]], %[[T1]]
//      CHECK:       vector.store %[[R]]#0, %[[C]][%[[M]], %[[N]]]
//      CHECK:       vector.store %[[R]]#1, %[[C]][%[[M]], %[[N8]]]
//      CHECK:     scf.for %[[N:.+]] = %[[FULL]] to %[[C21]] step %{{.+}} {
//      CHECK:       %[[LEFT:.+]] = arith.subi %[[C21]], %[[N]] : index
//      CHECK:       %[[MASK:.+]] = vector.create_mask %[[LEFT]] : vector<8xi1>
//      CHECK:       %[[I:.+]] = vector.maskedload %[[C]][%[[M]], %[[N]]], %[[MASK]], %[[PAD]]
//      CHECK:       scf.for %[[K:.+]] = %[[C0]] to %[[C33]] step %[[C1]] iter_args(%[[S:.+]] = %[[I]])
//      CHECK:         vector.maskedload %[[B]][%[[K]], %[[N]]], %[[MASK]], %[[PAD]]
//      CHECK:         arith.mulf
//      CHECK:         arith.addf %[[S]]
//      CHECK:       vector.maskedstore %[[C]][%[[M]], %[[N]]], %[[MASK]]
//  CHECK-NOT:   linalg.generic
//  CHECK-NOT:   vector.fma
//  CHECK-NOT:   vector.contract
func.func @matmul(%a: memref<7x33xf32>, %b: memref<33x21xf32>) -> memref<7x21xf32> {
  %c = memref.alloc() : memref<7x21xf32>
  linalg.generic {indexing_maps = [affine_map<(m, k, n) -> (m, k)>,
                                   affine_map<(m, k, n) -> (k, n)>,
                                   affine_map<(m, k, n) -> (m, n)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<7x33xf32>, memref<33x21xf32>) outs(%c : memref<7x21xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return %c : memref<7x21xf32>
}

// -----

// A named batch matmul qualifies as it is: n is last in B and C.
// CHECK-LABEL: func @batch_matmul
//      CHECK:   scf.for
//      CHECK:     scf.for
//      CHECK:       scf.for
//      CHECK:         scf.for {{.*}} iter_args
//      CHECK:           memref.load %{{.*}} : memref<2x7x33xf32>
//      CHECK:           vector.load %{{.*}} : memref<2x33x5xf32>, vector<8xf32>
//  CHECK-NOT:   linalg.batch_matmul
func.func @batch_matmul(%a: memref<2x7x33xf32>, %b: memref<2x33x5xf32>) -> memref<2x7x5xf32> {
  %c = memref.alloc() : memref<2x7x5xf32>
  linalg.batch_matmul ins(%a, %b : memref<2x7x33xf32>, memref<2x33x5xf32>) outs(%c : memref<2x7x5xf32>)
  return %c : memref<2x7x5xf32>
}

// -----

// Left to convert-linalg-to-loops: outputs that may overlap an input (two
// function arguments; a loop-carried buffer, which may be any buffer),
// B[n, k] (n not contiguous), a strided n, and bf16.
// CHECK-LABEL: func @untouched
//      CHECK:   linalg.matmul ins(%{{.*}} : memref<7x33xf32>, memref<33x5xf32>) outs(%{{.*}} : memref<7x5xf32>)
//      CHECK:   linalg.matmul indexing_maps
//      CHECK:   linalg.matmul ins(%{{.*}} : memref<7x33xf32>, memref<33x5xf32, strided<[10, 2]>>)
//      CHECK:   linalg.matmul ins(%{{.*}} : memref<7x33xbf16>, memref<33x5xbf16>)
//      CHECK:   scf.for
//      CHECK:     linalg.matmul ins(%{{.*}} : memref<7x33xf32>, memref<33x5xf32>) outs(%{{.*}} : memref<7x5xf32>)
//  CHECK-NOT:   vector.
func.func @untouched(%a: memref<7x33xf32>, %b: memref<33x5xf32>, %c: memref<7x5xf32>,
                     %bt: memref<5x33xf32>, %bs: memref<33x5xf32, strided<[10, 2]>>,
                     %ha: memref<7x33xbf16>, %hb: memref<33x5xbf16>) {
  linalg.matmul ins(%a, %b : memref<7x33xf32>, memref<33x5xf32>) outs(%c : memref<7x5xf32>)
  %d = memref.alloc() : memref<7x5xf32>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %bt : memref<7x33xf32>, memref<5x33xf32>) outs(%d : memref<7x5xf32>)
  linalg.matmul ins(%a, %bs : memref<7x33xf32>, memref<33x5xf32, strided<[10, 2]>>) outs(%d : memref<7x5xf32>)
  linalg.matmul ins(%ha, %hb : memref<7x33xbf16>, memref<33x5xbf16>) outs(%d : memref<7x5xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = memref.alloc() : memref<33x5xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%buffer = %e) -> (memref<33x5xf32>) {
    linalg.matmul ins(%a, %buffer : memref<7x33xf32>, memref<33x5xf32>) outs(%d : memref<7x5xf32>)
    scf.yield %buffer : memref<33x5xf32>
  }
  return
}
