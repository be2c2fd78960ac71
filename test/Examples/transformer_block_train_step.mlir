// Executes examples/transformer_block_train_step.mlir on the CPU and checks
// its backward pass (the parameter gradients it returns) against f64 central
// finite differences of the loss, for every parameter: see
// Inputs/check_train_step.py.
// REQUIRES: execution-engine

// The example parses and verifies as written.
// RUN: fp4-opt %fp4train_src/examples/transformer_block_train_step.mlir > /dev/null

// The CPU lowering runs only upstream passes.
// RUN: cat %fp4train_src/examples/transformer_block_train_step.mlir %S/Inputs/pattern.mlir \
// RUN:     %S/Inputs/transformer_block_train_step_driver.mlir \
// RUN:   | fp4-opt %lower_to_llvm \
// RUN:   | %run_main \
// RUN:   | python3 %S/Inputs/check_train_step.py transformer \
// RUN:   | FileCheck %s

// CHECK: loss: OK
// CHECK: g1[64]: OK
// CHECK: wq[64, 64]: OK
// CHECK: wk[64, 64]: OK
// CHECK: wv[64, 64]: OK
// CHECK: wo[64, 64]: OK
// CHECK: g2[64]: OK
// CHECK: w1[128, 64]: OK
// CHECK: w2[64, 128]: OK
// CHECK: all gradients OK
