// RUN: fp4-opt %s --fp4train-check-indices --verify-diagnostics --split-input-file

// The callee's name taken by another symbol is an error, not a wrong call.
// expected-error @+1 {{'func.func' op uses the name @fp4train_rt_index_error, which fp4train-check-indices declares as '(i64, i64, i64, i64) -> ()'}}
func.func @fp4train_rt_index_error(%x: i64) {
  return
}
func.func @f(%t: tensor<4xf32>, %i: index) -> f32 {
  %v = tensor.extract %t[%i] : tensor<4xf32>
  return %v : f32
}
