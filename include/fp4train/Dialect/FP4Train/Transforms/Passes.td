//===- Passes.td - fp4train transformation passes ----------*- tablegen -*-===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_PASSES_TD
#define FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP4TrainAnnotateRoles : Pass<"fp4train-annotate-roles", "ModuleOp"> {
  let summary = "Classify the contractions of a training step as Fprop, Dgrad or Wgrad";
  let description = [{
    Reads training steps written in linalg on tensors ([ROLE1]-[ROLE6]) and
    gives every contraction (`linalg.matmul` with any indexing maps,
    `linalg.batch_matmul`, and `linalg.generic` contractions) a role:

    - parameters are function arguments marked `{fp4train.param}` or listed
      by `params`; the matrix parameters used as a contraction operand are
      the weights;
    - a contraction with a weight operand (seen through transposes, casts,
      reshapes, slices and broadcasts) is **Fprop** when it contracts the
      weight's `in` dimension and **Dgrad** when it contracts its `out`
      dimension (`weight-layout` says which dimension is which);
    - a contraction with no weight operand whose result reaches, through
      layout and elementwise ops, a returned tensor of a weight's shape or
      an elementwise update of a weight, is **Wgrad**;
    - an explicit `fp4train.role` attribute wins; every other contraction
      (attention `Q.K^T`, `P.V`, ...) is `other` and left alone.

    Each classified contraction gets an `fp4train.role` attribute. With
    `report`, a JSON array with one object per contraction in program order
    is written to the file (`-` for stdout; `report-format=table` writes a
    table with the same fields instead):
    `{"loc", "op", "role", "param", "m", "n", "k", "batch"}`, where `param`
    is the weight's argument index (for Wgrad: the weight it updates, when
    that is unambiguous) or null, and sizes are null when dynamic.

    Example (PyTorch layout, `W : [out, in]`):

    ```mlir
    // Before
    %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (n, k)>,
                                        affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %w : tensor<32x64xf32>, tensor<16x64xf32>) outs(%init : tensor<32x16xf32>)
        -> tensor<32x16xf32>
    // After
    %y = linalg.matmul indexing_maps = [...] ins(%x, %w : ...) outs(%init : ...)
        {fp4train.role = #fp4train.role<fprop>} -> tensor<32x16xf32>
    ```
  }];
  let options = [
    ListOption<"params", "params", "unsigned",
               "argument indices of the parameters, in addition to those "
               "marked {fp4train.param}">,
    Option<"weightLayout", "weight-layout", "std::string", "\"out-in\"",
           "layout of weight matrices: out-in (PyTorch) or in-out (JAX)">,
    Option<"report", "report", "std::string", "\"\"",
           "write the role report to this file ('-' for stdout)">,
    Option<"reportFormat", "report-format", "::mlir::fp4train::ReportFormat",
           "::mlir::fp4train::ReportFormat::JSON",
           "format of the report", "::mlir::fp4train::getReportFormatValues()">
  ];
  let dependentDialects = ["::mlir::fp4train::FP4TrainDialect"];
}

def FP4TrainQuantizeMatmuls : Pass<"fp4train-quantize-matmuls", "ModuleOp"> {
  let summary = "Rewrite Fprop, Dgrad and Wgrad contractions into block-scaled GEMMs";
  let description = [{
    Rewrites every contraction that `fp4train-annotate-roles` annotated as
    Fprop, Dgrad or Wgrad ([ROLE1]-[ROLE6]; its `#fp4train.role` names the
    weight and which operand it is, so role inference runs once, in the
    annotation pass, with its `params` and `weight-layout`) into the quantized sequence that `recipe` prescribes for its role
    ([RCP1], [RCP2] in docs/recipes.md):

    1. both operands are brought to the K-major layout `[batch..., rows, K]`
       (`linalg.transpose`, `tensor.collapse_shape`), zero-padded along K to
       a whole number of blocks (and of Hadamard blocks);
    2. an optional Hadamard rotation with the same matrix on both operands
       along K [H1] (for Wgrad, K is the token dimension);
    3. `fp4train.quantize` of each operand with the format, rounding and
       scale mode of its recipe entry; with 2-D weight blocks the weight is
       quantized in its own `[out, in]` layout in 16x16 tiles and Dgrad
       reads it through `fp4train.transpose`, so Fprop and Dgrad share one
       quantized weight after CSE;
    4. `fp4train.scaled_matmul` [GEMM1] with the contraction's init as the
       f32 accumulator, then the result is brought back to the original
       layout and element type.

    `recipe` is a preset name (`nvfp4`, `mxfp4`, `mxfp4-hadamard`,
    `mxfp4-random-hadamard`, `mxfp4-sr`, `mxfp8`, `mxfp4-fprop-dgrad`,
    `none`) or a `#fp4train.recipe<...>` attribute. The recipe overrides
    ([RO1] in docs/recipes.md; `--help` lists them with their values) each
    change one choice of the recipe; an unset one keeps the recipe's:

    - `stochastic-rounding=0|1`: stochastic rounding of the output-gradient
      operand (dY) of Dgrad and Wgrad (E2M1 formats only);
    - `hadamard=0|16|32|...` and `hadamard-signs=none|fixed|random`: the
      Wgrad rotation;
    - `scale-mode=floor|rceil`: the scale mode of every MX operand;
    - `weights-2d=0|1`, `keep-first=N`, `keep-last=N`: as in the recipe.
      Linear layers are counted in the program order of their Fprop; a kept
      layer keeps its Fprop, Dgrad and Wgrad in high precision.
    - `roles=fprop,dgrad,...`: the roles quantized (the recipe's `roles`);
      the others keep the graph's own precision. `recipe=mxfp4
      roles=fprop,dgrad` is the MXFP4 paper's "Fprop + Dgrad" row.

    Random bits are deterministic: with `step-arg=N` the training step is
    read from function argument N, otherwise the step is the constant 0.
    Contraction `i` (program order within its function) uses, for
    stochastic rounding of operand `o`, the seed `(step << 32) + 2*i + o`,
    and for a random Hadamard the seed `i` with the step. So two runs give
    the same IR and the same numbers.

    A K (or, for 16x16 weight blocks, weight row count) that is not a
    multiple of the block is zero-padded, which leaves the product
    unchanged; `pad=0` turns that into an error. Contractions with dynamic
    shapes are rejected. Running the pass twice quantizes nothing twice:
    rewritten contractions are gone.

    `report=FILE` writes the role report of `fp4train-annotate-roles`
    extended, per contraction, with whether it was quantized, why it was
    kept, and each operand's format, block, rounding and scale mode and
    the Hadamard rotation.
  }];
  let options = [
    Option<"recipe", "recipe", "std::string", "\"\"",
           "recipe preset name or #fp4train.recipe attribute">,
    Option<"stepArg", "step-arg", "int", "-1",
           "index of the function argument holding the training step">,
    Option<"pad", "pad", "bool", "true",
           "zero-pad dimensions that are not a multiple of the block">,
    Option<"report", "report", "std::string", "\"\"",
           "write the quantization report to this file ('-' for stdout)">,
    Option<"reportFormat", "report-format", "::mlir::fp4train::ReportFormat",
           "::mlir::fp4train::ReportFormat::JSON",
           "format of the report", "::mlir::fp4train::getReportFormatValues()">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::fp4train::FP4TrainDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FP4TrainCheckIndices : Pass<"fp4train-check-indices", "ModuleOp"> {
  let summary = "Guard data-dependent element accesses with a bounds check that reports instead of reading or writing out of bounds";
  let description = [{
    A training step indexes tensors with values it computes from its data:
    an embedding lookup `tensor.extract %wte[%token, %d]` of token ids, a
    cross-entropy target's logit `tensor.extract %logits[%t, %target]`. An
    id out of range makes the compiled step read (or, for `tensor.insert`,
    write) outside the buffer: a wrong result, or a SIGSEGV that takes an
    embedding host down ([IDX1] in docs/robustness.md).

    This pass wraps every `tensor.extract`, `tensor.insert`, `memref.load`
    and `memref.store` inside a function whose indices are not all constants
    within bounds in an `scf.if` on `0 <= index < size` for every dimension
    (one unsigned compare each). When the check holds, the access runs as
    before; when it fails, the access does not run: the `else` branch calls

    ```mlir
    func.func private @fp4train_rt_index_error(i64, i64, i64, i64)
    ```

    with the access's site number, the first dimension out of bounds, the
    index and the dimension's size, and yields zero (the tensor unchanged
    for `tensor.insert`). The step runs to its end without touching memory
    it does not own; the host then turns the recorded failure into an
    error. The site numbers index the module attribute
    `fp4train.index_checks`, an array of strings naming each access and its
    location, which the pass extends.

    The JIT host (`JitFunction`, so `fp4-train`, the C API and Python)
    runs this pass before the pipeline by default and defines the callee;
    accesses inside `gpu.launch` bodies are left alone (device code cannot
    call the host).

    Example:

    ```mlir
    // Before
    %e = tensor.extract %wte[%row, %d] : tensor<256x128xf32>
    // After
    %c256 = arith.constant 256 : index
    %ok0 = arith.cmpi ult, %row, %c256 : index
    %ok1 = arith.cmpi ult, %d, %c128 : index
    %ok = arith.andi %ok0, %ok1 : i1
    %e = scf.if %ok -> (f32) {
      %v = tensor.extract %wte[%row, %d] : tensor<256x128xf32>
      scf.yield %v : f32
    } else {
      // site 0; the first failing dimension, its index and size
      func.call @fp4train_rt_index_error(%c0_i64, %dim, %index, %size)
          : (i64, i64, i64, i64) -> ()
      scf.yield %zero : f32
    }
    ```

    A `cf.assert` in such a function (torch-mlir guards embedding lookups
    with them) would abort the whole process when it fails; the pass
    replaces it by an `scf.if` on the negated condition that calls the same
    callee with dimension -2 and the assertion's site (its message and
    location), and the host raises "the check ... failed".
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::ub::UBDialect"
  ];
}

def FP4TrainOutlineLoopNests : Pass<"fp4train-outline-loop-nests", "ModuleOp"> {
  let summary = "Move each top-level loop nest of a function into a function of its own, called once, never inlined";
  let description = [{
    A training step lowered to loops is one function with hundreds to
    thousands of loop nests (one or more per linalg op). LLVM's loop
    passes cost time in proportion to the size of the function they run
    in, once per loop, so optimizing such a function is quadratic in its
    size: on a 4-block GPT step exported from PyTorch, IndVarSimplify alone
    took 92 % of `opt -O2` on it ([JIT1] in docs/passes.md).

    This pass moves every `scf.for` and `scf.parallel` at the top level of a
    function body (after `convert-linalg-to-loops`) into a new private
    function `@<function>_nest<N>` (internal linkage) that takes the values
    the nest uses from above (constants are cloned in), and calls it with
    `no_inline`. The
    loops, their bodies and their order are unchanged, so every result is
    bit-identical; LLVM then optimizes each nest in a function of its own
    size. Functions without a body, and loops that yield results, are left
    as they are.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def FP4TrainInterchangeContractions
    : Pass<"fp4train-interchange-contractions"> {
  let summary = "Reorder the loops of f32 contractions so that the innermost one runs over independent contiguous outputs";
  let description = [{
    Lowered naively (`convert-linalg-to-loops`), a contraction iterates its
    reduction dimension innermost: `C[m, n] += A[m, k] * B[k, n]` in the
    order m, n, k. LLVM cannot vectorize that loop without reassociating the
    sum (fast-math), so f32 contractions that stay in high precision run
    scalar.

    This pass rewrites every contraction on tensors whose operands and result
    have element type f32 (`linalg.matmul` with any indexing maps,
    `linalg.batch_matmul`, contraction-like `linalg.generic`) into a
    `linalg.generic` iterating

    1. the parallel dimensions except `n` (batch, m, ... in their order),
    2. the reduction dimensions in their order,
    3. `n`, the dimension of the result's last (contiguous) index,

    so that the innermost loop updates independent outputs along contiguous
    memory, which `fp4train-vectorize-contractions` turns into loops over
    vectors with plain vector `fmul` and `fadd`. An
    input that `n` indexes in another position than its last (`B[n, k]` in
    `A · Bᵀ`) is first copied into a transposed tensor with `n` last.

    Every output element is still the same sequence of separately rounded
    multiplies and adds in increasing reduction order: only loops over
    distinct outputs move, so the results are bit-identical to the original
    loop nest. Tensor semantics guarantee that the result does not alias an
    input, so the new order reads no partially updated value.

    Example:

    ```mlir
    // Before
    %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (n, k)>,
                                        affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %b : tensor<32x64xf32>, tensor<16x64xf32>)
        outs(%init : tensor<32x16xf32>) -> tensor<32x16xf32>
    // After
    %bt = linalg.transpose ins(%b : tensor<16x64xf32>)
        outs(%empty : tensor<64x16xf32>) permutation = [1, 0]
    %c = linalg.generic {
        indexing_maps = [affine_map<(m, k, n) -> (m, k)>,
                         affine_map<(m, k, n) -> (k, n)>,
                         affine_map<(m, k, n) -> (m, n)>],
        iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%a, %bt : tensor<32x64xf32>, tensor<64x16xf32>)
        outs(%init : tensor<32x16xf32>) {
      ^bb0(%x: f32, %y: f32, %acc: f32):
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
    } -> tensor<32x16xf32>
    ```

    Contractions on buffers, with another element type, or with a
    zero-dimensional result are left alone.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FP4TrainVectorizeContractions
    : Pass<"fp4train-vectorize-contractions"> {
  let summary = "Lower f32 contractions on buffers to loops over vectors of independent outputs";
  let description = [{
    Lowers every f32 contraction on buffers (as left by
    `fp4train-interchange-contractions` and bufferization) whose result's
    last, contiguous index `n` is also the contiguous last index of every
    input that uses it, and whose output overlaps no input (distinct
    allocations, or an allocation and an argument), into:

    - loops over the other parallel dimensions;
    - loops over `n` in blocks of `unroll` vectors of `width` lanes, then
      single vectors masked to the end;
    - per block, the outputs loaded into registers, the reduction loops (in
      their order) updating them with elementwise vector `arith.mulf` and
      `arith.addf` (the inputs that do not use `n` loaded once and
      broadcast), and the outputs stored back.

    Every lane is one output element and sees the same sequence of
    separately rounded multiplies and adds, in increasing reduction order,
    as in `convert-linalg-to-loops`, so the results are bit-identical: there
    is no `vector.contract`, no fused multiply-add and no reduction across
    lanes. Ops it does not lower are left to `convert-linalg-to-loops`.

    Example (`C[m, n] += A[m, k] * B[k, n]`, `width=16 unroll=1`):

    ```mlir
    // Before
    linalg.generic {indexing_maps = [(m, k, n) -> (m, k), (m, k, n) -> (k, n),
                                     (m, k, n) -> (m, n)], ...}
        ins(%a, %b : memref<8x64xf32>, memref<64x32xf32>)
        outs(%c : memref<8x32xf32>)
    // After
    scf.for %m = %c0 to %c8 step %c1 {
      scf.for %n = %c0 to %c32 step %c16 {
        %init = vector.load %c[%m, %n] : memref<8x32xf32>, vector<16xf32>
        %acc = scf.for %k = %c0 to %c64 step %c1 iter_args(%s = %init)
            -> (vector<16xf32>) {
          %x = memref.load %a[%m, %k] : memref<8x64xf32>
          %xs = vector.broadcast %x : f32 to vector<16xf32>
          %y = vector.load %b[%k, %n] : memref<64x32xf32>, vector<16xf32>
          %p = arith.mulf %xs, %y : vector<16xf32>
          %t = arith.addf %s, %p : vector<16xf32>
          scf.yield %t : vector<16xf32>
        }
        vector.store %acc, %c[%m, %n] : memref<8x32xf32>, vector<16xf32>
      }
      // ... the masked remainder (vector.maskedload / maskedstore)
    }
    ```
  }];
  let options = [
    Option<"width", "width", "int64_t", "16", "f32 lanes per vector">,
    Option<"unroll", "unroll", "int64_t", "4",
           "vectors of outputs accumulated at once">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FP4TrainDropParamMarkers : Pass<"fp4train-drop-param-markers", "ModuleOp"> {
  let summary = "Remove {fp4train.param} argument attributes before LLVM lowering";
  let description = [{
    The `{fp4train.param}` argument markers serve role inference only. The
    dialect verifies that they sit on tensors or memrefs, which the
    arguments stop being once functions are lowered to the LLVM dialect, so
    the CPU and GPU pipelines remove them from every `func.func` right
    before `finalize-memref-to-llvm`.

    Example:

    ```mlir
    // Before
    func.func @step(%w: memref<16x64xf32> {fp4train.param}, %x: memref<32x64xf32>)
    // After
    func.func @step(%w: memref<16x64xf32>, %x: memref<32x64xf32>)
    ```
  }];
}

#endif // FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_PASSES_TD
