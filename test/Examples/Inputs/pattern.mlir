// Deterministic test data for the training-step drivers, shared with the
// checker (check_train_step.py computes the same values in Python):
//
//   pattern(i, j; seed) = ((t² mod 97) − 48) · scale,
//   t = (13 + 2·seed)·i + (29 + 3·seed)·j + seed
//
// Integer arithmetic and a power-of-two scale make every value exact in f32,
// so the checker sees bit-identical inputs.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @pattern(%rows: index, %cols: index, %seed: i64, %scale: f32)
    -> tensor<?x?xf32> {
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %c13 = arith.constant 13 : i64
  %c29 = arith.constant 29 : i64
  %c48 = arith.constant 48 : i64
  %c97 = arith.constant 97 : i64
  %seed2 = arith.muli %seed, %c2 : i64
  %a = arith.addi %c13, %seed2 : i64
  %seed3 = arith.muli %seed, %c3 : i64
  %b = arith.addi %c29, %seed3 : i64
  %empty = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %values = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                            iterator_types = ["parallel", "parallel"]}
      outs(%empty : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i_idx = linalg.index 0 : index
    %j_idx = linalg.index 1 : index
    %i = arith.index_cast %i_idx : index to i64
    %j = arith.index_cast %j_idx : index to i64
    %ai = arith.muli %a, %i : i64
    %bj = arith.muli %b, %j : i64
    %ai_bj = arith.addi %ai, %bj : i64
    %t = arith.addi %ai_bj, %seed : i64
    %t2 = arith.muli %t, %t : i64
    %r = arith.remsi %t2, %c97 : i64
    %centered = arith.subi %r, %c48 : i64
    %f = arith.sitofp %centered : i64 to f32
    %v = arith.mulf %f, %scale : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %values : tensor<?x?xf32>
}

// A 1-D pattern: row 0 of the 2-D one.
func.func @pattern_vec(%n: index, %seed: i64, %scale: f32) -> tensor<?xf32> {
  %c1 = arith.constant 1 : index
  %row = call @pattern(%c1, %n, %seed, %scale)
      : (index, index, i64, f32) -> tensor<?x?xf32>
  %vec = tensor.extract_slice %row[0, 0] [1, %n] [1, 1]
      : tensor<?x?xf32> to tensor<?xf32>
  return %vec : tensor<?xf32>
}
