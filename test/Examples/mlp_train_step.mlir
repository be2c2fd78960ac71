// Executes examples/mlp_train_step.mlir on the CPU and checks its backward
// pass (through the SGD update it returns) against f64 central finite
// differences of the loss, for every parameter: see Inputs/check_train_step.py.
// REQUIRES: execution-engine

// The example parses and verifies as written.
// RUN: fp4-opt %fp4train_src/examples/mlp_train_step.mlir > /dev/null

// The CPU lowering runs only upstream passes.
// RUN: cat %fp4train_src/examples/mlp_train_step.mlir %S/Inputs/pattern.mlir \
// RUN:     %S/Inputs/mlp_train_step_driver.mlir \
// RUN:   | fp4-opt %lower_to_llvm \
// RUN:   | %run_main \
// RUN:   | python3 %S/Inputs/check_train_step.py mlp \
// RUN:   | FileCheck %s

// CHECK: loss: OK
// CHECK: w1[64, 32]: OK
// CHECK: b1[64]: OK
// CHECK: w2[64, 64]: OK
// CHECK: b2[64]: OK
// CHECK: w3[32, 64]: OK
// CHECK: b3[32]: OK
// CHECK: all gradients OK
