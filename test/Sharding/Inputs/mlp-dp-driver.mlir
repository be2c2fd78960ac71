// The driver of mlp-dp.test: every process builds the whole batch and the
// parameters of examples/mlp_train_step.mlir, runs its half of the batch
// through the data-parallel step and the whole batch through the unsharded
// one, and prints, per result, how many elements differ in their bits and
// how many differ by more than 2^-16 of the largest magnitude of the result
// (a normwise bound: the reassociated sums over the batch are off by a few
// units in the last place of their terms, not of their possibly cancelled
// result).

func.func private @exit(i32)
func.func private @train_step(tensor<32x32xf32>, tensor<32x32xf32>,
    tensor<64x32xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>,
    tensor<32x64xf32>, tensor<32xf32>, f32, i64)
    -> (tensor<f32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64x64xf32>,
        tensor<64xf32>, tensor<32x64xf32>, tensor<32xf32>)
func.func private @train_step_reference(tensor<64x32xf32>, tensor<64x32xf32>,
    tensor<64x32xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>,
    tensor<32x64xf32>, tensor<32xf32>, f32, i64)
    -> (tensor<f32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64x64xf32>,
        tensor<64xf32>, tensor<32x64xf32>, tensor<32xf32>)

// ((i * 131 + salt) mod 97 - 48) / 64 at flat position i.
func.func @data(%n: index, %salt: index) -> tensor<?xf32> {
  %t = tensor.generate %n {
  ^bb0(%i: index):
    %c131 = arith.constant 131 : index
    %c97 = arith.constant 97 : index
    %c48 = arith.constant 48 : index
    %a = arith.muli %i, %c131 : index
    %b = arith.addi %a, %salt : index
    %m = arith.remui %b, %c97 : index
    %v = arith.subi %m, %c48 : index
    %vi = arith.index_cast %v : index to i32
    %vf = arith.sitofp %vi : i32 to f32
    %scale = arith.constant 0.015625 : f32
    %x = arith.mulf %vf, %scale : f32
    tensor.yield %x : f32
  } : tensor<?xf32>
  return %t : tensor<?xf32>
}

func.func @matrix(%rows: index, %cols: index, %salt: index) -> tensor<?x?xf32> {
  %n = arith.muli %rows, %cols : index
  %flat = call @data(%n, %salt) : (index, index) -> tensor<?xf32>
  %shape = tensor.from_elements %rows, %cols : tensor<2xindex>
  %m = tensor.reshape %flat(%shape) : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %m : tensor<?x?xf32>
}

// How many elements of two results differ in their bits, and by more than
// 2^-16 of the reference's largest magnitude.
func.func @compare(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (i64, i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %rel = arith.constant 1.52587890625e-05 : f32
  %fzero = arith.constant 0.0 : f32
  %largest = scf.for %i = %c0 to %n step %c1 iter_args(%m = %fzero) -> f32 {
    %v = tensor.extract %y[%i] : tensor<?xf32>
    %av = math.absf %v : f32
    %m2 = arith.maximumf %m, %av : f32
    scf.yield %m2 : f32
  }
  %lim = arith.mulf %largest, %rel : f32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%bits = %zero, %far = %zero) -> (i64, i64) {
    %u = tensor.extract %x[%i] : tensor<?xf32>
    %v = tensor.extract %y[%i] : tensor<?xf32>
    %ub = arith.bitcast %u : f32 to i32
    %vb = arith.bitcast %v : f32 to i32
    %ne = arith.cmpi ne, %ub, %vb : i32
    %nb = arith.select %ne, %one, %zero : i64
    %d = arith.subf %u, %v : f32
    %ad = math.absf %d : f32
    %big = arith.cmpf ugt, %ad, %lim : f32
    %nf = arith.select %big, %one, %zero : i64
    %bits2 = arith.addi %bits, %nb : i64
    %far2 = arith.addi %far, %nf : i64
    scf.yield %bits2, %far2 : i64, i64
  }
  return %r#0, %r#1 : i64, i64
}

func.func @report(%bits: i64, %far: i64) -> i64 {
  vector.print str " "
  vector.print %bits : i64 punctuation <no_punctuation>
  vector.print str "/"
  vector.print %far : i64 punctuation <no_punctuation>
  return %far : i64
}

func.func @flat2(%t: tensor<?x?xf32>) -> tensor<?xf32> {
  %f = tensor.collapse_shape %t [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  return %f : tensor<?xf32>
}

func.func @main() -> i32 {
  mpi.init
  %comm = mpi.comm_world : !mpi.comm
  %rank32 = mpi.comm_rank(%comm) : i32
  %rank = arith.index_cast %rank32 : i32 to index
  %ones = memref.alloca() : memref<1xi32>
  %count = memref.alloca() : memref<1xi32>
  %i0 = arith.constant 0 : index
  %one32 = arith.constant 1 : i32
  memref.store %one32, %ones[%i0] : memref<1xi32>
  mpi.allreduce(%ones, %count, MPI_SUM, %comm) : memref<1xi32>, memref<1xi32>
  %size = memref.load %count[%i0] : memref<1xi32>
  %two = arith.constant 2 : i32
  %wrong = arith.cmpi ne, %size, %two : i32
  scf.if %wrong {
    vector.print str "mlp-dp-driver: needs 2 processes\n"
    mpi.finalize
    func.call @exit(%one32) : (i32) -> ()
  }

  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %x_d = call @matrix(%c64, %c32, %c1) : (index, index, index) -> tensor<?x?xf32>
  %t_d = call @matrix(%c64, %c32, %c2) : (index, index, index) -> tensor<?x?xf32>
  %w1_d = call @matrix(%c64, %c32, %c3) : (index, index, index) -> tensor<?x?xf32>
  %b1_d = call @data(%c64, %c4) : (index, index) -> tensor<?xf32>
  %w2_d = call @matrix(%c64, %c64, %c5) : (index, index, index) -> tensor<?x?xf32>
  %b2_d = call @data(%c64, %c6) : (index, index) -> tensor<?xf32>
  %w3_d = call @matrix(%c32, %c64, %c7) : (index, index, index) -> tensor<?x?xf32>
  %b3_d = call @data(%c32, %c8) : (index, index) -> tensor<?xf32>
  %x = tensor.cast %x_d : tensor<?x?xf32> to tensor<64x32xf32>
  %t = tensor.cast %t_d : tensor<?x?xf32> to tensor<64x32xf32>
  %w1 = tensor.cast %w1_d : tensor<?x?xf32> to tensor<64x32xf32>
  %b1 = tensor.cast %b1_d : tensor<?xf32> to tensor<64xf32>
  %w2 = tensor.cast %w2_d : tensor<?x?xf32> to tensor<64x64xf32>
  %b2 = tensor.cast %b2_d : tensor<?xf32> to tensor<64xf32>
  %w3 = tensor.cast %w3_d : tensor<?x?xf32> to tensor<32x64xf32>
  %b3 = tensor.cast %b3_d : tensor<?xf32> to tensor<32xf32>
  %lr = arith.constant 0.125 : f32
  %step = arith.constant 7 : i64

  // Process r holds samples [32 r, 32 r + 32).
  %row = arith.muli %rank, %c32 : index
  %x_l = tensor.extract_slice %x[%row, 0] [32, 32] [1, 1] : tensor<64x32xf32> to tensor<32x32xf32>
  %t_l = tensor.extract_slice %t[%row, 0] [32, 32] [1, 1] : tensor<64x32xf32> to tensor<32x32xf32>
  %s:7 = call @train_step(%x_l, %t_l, %w1, %b1, %w2, %b2, %w3, %b3, %lr, %step)
      : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<64x32xf32>, tensor<64xf32>,
         tensor<64x64xf32>, tensor<64xf32>, tensor<32x64xf32>, tensor<32xf32>, f32, i64)
      -> (tensor<f32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64x64xf32>,
          tensor<64xf32>, tensor<32x64xf32>, tensor<32xf32>)
  %r:7 = call @train_step_reference(%x, %t, %w1, %b1, %w2, %b2, %w3, %b3, %lr, %step)
      : (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>,
         tensor<64x64xf32>, tensor<64xf32>, tensor<32x64xf32>, tensor<32xf32>, f32, i64)
      -> (tensor<f32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64x64xf32>,
          tensor<64xf32>, tensor<32x64xf32>, tensor<32xf32>)

  vector.print str "process "
  vector.print %rank32 : i32 punctuation <no_punctuation>
  vector.print str ", differing bits/beyond the bound: loss"
  %ls = tensor.expand_shape %s#0 [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %lr1 = tensor.expand_shape %r#0 [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %lsd = tensor.cast %ls : tensor<1xf32> to tensor<?xf32>
  %lrd = tensor.cast %lr1 : tensor<1xf32> to tensor<?xf32>
  %l:2 = call @compare(%lsd, %lrd) : (tensor<?xf32>, tensor<?xf32>) -> (i64, i64)
  %f0 = call @report(%l#0, %l#1) : (i64, i64) -> i64

  vector.print str ", w1"
  %a1 = tensor.cast %s#1 : tensor<64x32xf32> to tensor<?x?xf32>
  %e1 = tensor.cast %r#1 : tensor<64x32xf32> to tensor<?x?xf32>
  %a1f = call @flat2(%a1) : (tensor<?x?xf32>) -> tensor<?xf32>
  %e1f = call @flat2(%e1) : (tensor<?x?xf32>) -> tensor<?xf32>
  %q1:2 = call @compare(%a1f, %e1f) : (tensor<?xf32>, tensor<?xf32>) -> (i64, i64)
  %f1 = call @report(%q1#0, %q1#1) : (i64, i64) -> i64

  vector.print str ", b1"
  %a2 = tensor.cast %s#2 : tensor<64xf32> to tensor<?xf32>
  %e2 = tensor.cast %r#2 : tensor<64xf32> to tensor<?xf32>
  %q2:2 = call @compare(%a2, %e2) : (tensor<?xf32>, tensor<?xf32>) -> (i64, i64)
  %f2 = call @report(%q2#0, %q2#1) : (i64, i64) -> i64

  vector.print str ", w2"
  %a3 = tensor.cast %s#3 : tensor<64x64xf32> to tensor<?x?xf32>
  %e3 = tensor.cast %r#3 : tensor<64x64xf32> to tensor<?x?xf32>
  %a3f = call @flat2(%a3) : (tensor<?x?xf32>) -> tensor<?xf32>
  %e3f = call @flat2(%e3) : (tensor<?x?xf32>) -> tensor<?xf32>
  %q3:2 = call @compare(%a3f, %e3f) : (tensor<?xf32>, tensor<?xf32>) -> (i64, i64)
  %f3 = call @report(%q3#0, %q3#1) : (i64, i64) -> i64

  vector.print str ", b2"
  %a4 = tensor.cast %s#4 : tensor<64xf32> to tensor<?xf32>
  %e4 = tensor.cast %r#4 : tensor<64xf32> to tensor<?xf32>
  %q4:2 = call @compare(%a4, %e4) : (tensor<?xf32>, tensor<?xf32>) -> (i64, i64)
  %f4 = call @report(%q4#0, %q4#1) : (i64, i64) -> i64

  vector.print str ", w3"
  %a5 = tensor.cast %s#5 : tensor<32x64xf32> to tensor<?x?xf32>
  %e5 = tensor.cast %r#5 : tensor<32x64xf32> to tensor<?x?xf32>
  %a5f = call @flat2(%a5) : (tensor<?x?xf32>) -> tensor<?xf32>
  %e5f = call @flat2(%e5) : (tensor<?x?xf32>) -> tensor<?xf32>
  %q5:2 = call @compare(%a5f, %e5f) : (tensor<?xf32>, tensor<?xf32>) -> (i64, i64)
  %f5 = call @report(%q5#0, %q5#1) : (i64, i64) -> i64

  vector.print str ", b3"
  %a6 = tensor.cast %s#6 : tensor<32xf32> to tensor<?xf32>
  %e6 = tensor.cast %r#6 : tensor<32xf32> to tensor<?xf32>
  %q6:2 = call @compare(%a6, %e6) : (tensor<?xf32>, tensor<?xf32>) -> (i64, i64)
  %f6 = call @report(%q6#0, %q6#1) : (i64, i64) -> i64
  vector.print str "\n"
  mpi.finalize

  // The exit status: 1 if anything differs by more than the tolerance.
  %s01 = arith.addi %f0, %f1 : i64
  %s2 = arith.addi %s01, %f2 : i64
  %s3 = arith.addi %s2, %f3 : i64
  %s4 = arith.addi %s3, %f4 : i64
  %s5 = arith.addi %s4, %f5 : i64
  %s6 = arith.addi %s5, %f6 : i64
  %zero64 = arith.constant 0 : i64
  %bad = arith.cmpi ne, %s6, %zero64 : i64
  %status = arith.extui %bad : i1 to i32
  return %status : i32
}
