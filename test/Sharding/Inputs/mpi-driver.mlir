// The driver of mpi-run.mlir: every process builds the whole data, runs its
// part of the sharded steps and the unsharded references, and prints (and
// returns whether) any of its results differ.

func.func private @exit(i32)
func.func private @k_split(tensor<16x32xf32>, tensor<8x32xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>
func.func private @k_reference(tensor<16x64xf32>, tensor<8x64xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>
func.func private @m_split(tensor<16x64xf32>, tensor<8x64xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>
func.func private @m_reference(tensor<32x64xf32>, tensor<8x64xf32>, tensor<32x8xf32>, i64) -> tensor<32x8xf32>
func.func private @gathered(tensor<8x64xf32>, tensor<8x64xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>
func.func private @gathered_reference(tensor<16x64xf32>, tensor<8x64xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>

// Deterministic data of a range of magnitudes: ((i * 131 + j * 71 + salt)
// mod 97 - 48) * 2^((i + j) mod 7 - 3) / 7.
func.func @data(%rows: index, %cols: index, %salt: index) -> tensor<?x?xf32> {
  %t = tensor.generate %rows, %cols {
  ^bb0(%i: index, %j: index):
    %c131 = arith.constant 131 : index
    %c71 = arith.constant 71 : index
    %c97 = arith.constant 97 : index
    %c48 = arith.constant 48 : index
    %c7 = arith.constant 7 : index
    %c3 = arith.constant 3 : index
    %ii = arith.muli %i, %c131 : index
    %jj = arith.muli %j, %c71 : index
    %s0 = arith.addi %ii, %jj : index
    %s1 = arith.addi %s0, %salt : index
    %m = arith.remui %s1, %c97 : index
    %v = arith.subi %m, %c48 : index
    %vi = arith.index_cast %v : index to i32
    %vf = arith.sitofp %vi : i32 to f32
    %ij = arith.addi %i, %j : index
    %e0 = arith.remui %ij, %c7 : index
    %e1 = arith.subi %e0, %c3 : index
    %ei = arith.index_cast %e1 : index to i32
    %ef = arith.sitofp %ei : i32 to f32
    %scale = math.exp2 %ef : f32
    %seven = arith.constant 7.0 : f32
    %x = arith.mulf %vf, %scale : f32
    %y = arith.divf %x, %seven : f32
    tensor.yield %y : f32
  } : tensor<?x?xf32>
  return %t : tensor<?x?xf32>
}

// How many elements of two 16x8 results differ in their bits.
func.func @differ(%x: tensor<16x8xf32>, %y: tensor<16x8xf32>) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %n = scf.for %i = %c0 to %c16 step %c1 iter_args(%a = %zero) -> i64 {
    %m = scf.for %j = %c0 to %c8 step %c1 iter_args(%b = %a) -> i64 {
      %u = tensor.extract %x[%i, %j] : tensor<16x8xf32>
      %v = tensor.extract %y[%i, %j] : tensor<16x8xf32>
      %ub = arith.bitcast %u : f32 to i32
      %vb = arith.bitcast %v : f32 to i32
      %ne = arith.cmpi ne, %ub, %vb : i32
      %add = arith.select %ne, %one, %zero : i64
      %next = arith.addi %b, %add : i64
      scf.yield %next : i64
    }
    scf.yield %m : i64
  }
  return %n : i64
}

func.func @main() -> i32 {
  mpi.init
  %comm = mpi.comm_world : !mpi.comm
  %rank32 = mpi.comm_rank(%comm) : i32
  // The steps are partitioned for a grid of two processes. (MLIR 22 does
  // not lower mpi.comm_size: count the processes with an all-reduce.)
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
    vector.print str "mpi-driver: needs 2 processes\n"
    mpi.finalize
    %failure = arith.constant 1 : i32
    func.call @exit(%failure) : (i32) -> ()
  }
  %rank = arith.index_cast %rank32 : i32 to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %seed = arith.constant 20261203 : i64

  // K split: process r holds columns [32 r, 32 r + 32) of both operands.
  %ka = call @data(%c16, %c64, %c1) : (index, index, index) -> tensor<?x?xf32>
  %kb = call @data(%c8, %c64, %c2) : (index, index, index) -> tensor<?x?xf32>
  %kacc = call @data(%c16, %c8, %c8) : (index, index, index) -> tensor<?x?xf32>
  %ka_s = tensor.cast %ka : tensor<?x?xf32> to tensor<16x64xf32>
  %kb_s = tensor.cast %kb : tensor<?x?xf32> to tensor<8x64xf32>
  %kacc_s = tensor.cast %kacc : tensor<?x?xf32> to tensor<16x8xf32>
  %k0 = arith.muli %rank, %c32 : index
  %ka_l = tensor.extract_slice %ka_s[0, %k0] [16, 32] [1, 1] : tensor<16x64xf32> to tensor<16x32xf32>
  %kb_l = tensor.extract_slice %kb_s[0, %k0] [8, 32] [1, 1] : tensor<8x64xf32> to tensor<8x32xf32>
  // Called 4096 times: more all-reduces than MPICH has communicators, which
  // the split communicator's cache makes one [SH6]; the last result counts.
  %c4095 = arith.constant 4095 : index
  scf.for %it = %c0 to %c4095 step %c1 {
    %r = func.call @k_split(%ka_l, %kb_l, %kacc_s, %seed) : (tensor<16x32xf32>, tensor<8x32xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>
  }
  %kc = call @k_split(%ka_l, %kb_l, %kacc_s, %seed) : (tensor<16x32xf32>, tensor<8x32xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>
  %kr = call @k_reference(%ka_s, %kb_s, %kacc_s, %seed) : (tensor<16x64xf32>, tensor<8x64xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>
  %kd = call @differ(%kc, %kr) : (tensor<16x8xf32>, tensor<16x8xf32>) -> i64

  // M split: process r holds rows [16 r, 16 r + 16) of A and of the
  // accumulator, and all of B.
  %ma = call @data(%c32, %c64, %c16) : (index, index, index) -> tensor<?x?xf32>
  %mb = call @data(%c8, %c64, %c32) : (index, index, index) -> tensor<?x?xf32>
  %macc = call @data(%c32, %c8, %c64) : (index, index, index) -> tensor<?x?xf32>
  %ma_s = tensor.cast %ma : tensor<?x?xf32> to tensor<32x64xf32>
  %mb_s = tensor.cast %mb : tensor<?x?xf32> to tensor<8x64xf32>
  %macc_s = tensor.cast %macc : tensor<?x?xf32> to tensor<32x8xf32>
  %m0 = arith.muli %rank, %c16 : index
  %ma_l = tensor.extract_slice %ma_s[%m0, 0] [16, 64] [1, 1] : tensor<32x64xf32> to tensor<16x64xf32>
  %macc_l = tensor.extract_slice %macc_s[%m0, 0] [16, 8] [1, 1] : tensor<32x8xf32> to tensor<16x8xf32>
  %mc = call @m_split(%ma_l, %mb_s, %macc_l, %seed) : (tensor<16x64xf32>, tensor<8x64xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>
  %mr = call @m_reference(%ma_s, %mb_s, %macc_s, %seed) : (tensor<32x64xf32>, tensor<8x64xf32>, tensor<32x8xf32>, i64) -> tensor<32x8xf32>
  %mr_l = tensor.extract_slice %mr[%m0, 0] [16, 8] [1, 1] : tensor<32x8xf32> to tensor<16x8xf32>
  %md = call @differ(%mc, %mr_l) : (tensor<16x8xf32>, tensor<16x8xf32>) -> i64

  // Gathered: process r holds rows [8 r, 8 r + 8) of A; the product is
  // whole on both.
  %ga = call @data(%c16, %c64, %c8) : (index, index, index) -> tensor<?x?xf32>
  %ga_s = tensor.cast %ga : tensor<?x?xf32> to tensor<16x64xf32>
  %g0 = arith.muli %rank, %c8 : index
  %ga_l = tensor.extract_slice %ga_s[%g0, 0] [8, 64] [1, 1] : tensor<16x64xf32> to tensor<8x64xf32>
  %gc = call @gathered(%ga_l, %kb_s, %kacc_s, %seed) : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>
  %gr = call @gathered_reference(%ga_s, %kb_s, %kacc_s, %seed) : (tensor<16x64xf32>, tensor<8x64xf32>, tensor<16x8xf32>, i64) -> tensor<16x8xf32>
  %gd = call @differ(%gc, %gr) : (tensor<16x8xf32>, tensor<16x8xf32>) -> i64

  vector.print str "process "
  vector.print %rank32 : i32 punctuation <no_punctuation>
  vector.print str ": k_split "
  vector.print %kd : i64 punctuation <no_punctuation>
  vector.print str " of 128 differ, m_split "
  vector.print %md : i64 punctuation <no_punctuation>
  vector.print str " of 128 differ, gathered "
  vector.print %gd : i64 punctuation <no_punctuation>
  vector.print str " of 128 differ\n"
  mpi.finalize
  // The exit status: 1 if anything differs.
  %sum0 = arith.addi %kd, %md : i64
  %sum = arith.addi %sum0, %gd : i64
  %zero = arith.constant 0 : i64
  %differs = arith.cmpi ne, %sum, %zero : i64
  %status = arith.extui %differs : i1 to i32
  return %status : i32
}
