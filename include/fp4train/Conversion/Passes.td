//===- Passes.td - fp4train conversion passes --------------*- tablegen -*-===//

#ifndef FP4TRAIN_CONVERSION_PASSES_TD
#define FP4TRAIN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP4TrainExpand : Pass<"fp4train-expand", "ModuleOp"> {
  let summary = "Expand fp4train ops and types into exact upstream tensor code";
  let description = [{
    Lowers every fp4train op and type to `arith`, `math`, `linalg` and
    `tensor` ops on tensors, bit-identical to the numerics library
    ([FMT1], docs/numerics.md). Afterwards the module holds no fp4train
    op or type, calls nothing at run time, and any upstream pipeline
    (bufferization, loops or vectors, LLVM) can take it on.

    `!fp4train.scaled<...>` values become, 1:N, an `i8` tensor of element
    codes, an `i8` tensor of block-scale codes and (with a global scale) an
    `f32` decode scale, through function signatures, calls and returns too.
    Tensors of the narrow float types (what `fp4train.unpack` returns) become
    `i8` tensors of their codes.

    - `quantize`: block amax as an integer max of magnitude bits; [MX1]
      floor / [MX2] rceil scales from exponent bits, [MX3] NaN blocks; [NV1]
      two-level scales with the tensor amax computed or supplied; RNE with
      satfinite, or [SR1] stochastic rounding with Philox4x32-10 in IR;
    - `dequantize`: exact decode and one f32 product ([MX1]) or two ([NV1]);
    - `hadamard`: [H1] butterflies in the library's order, signs `none`,
      `fixed` (a constant) or `random` (Philox in IR), and `inverse`;
    - `scaled_matmul`: [GEMM1] with exact integer block products, each block
      term rounded once to f32, summed over K blocks in increasing order;
    - `transpose`: `linalg.transpose` of codes and scales; `pack`/`unpack`
      disappear.

    Example:

    ```mlir
    // Before
    %q = fp4train.quantize %x : tensor<4x64xf32>
        -> !fp4train.scaled<4x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
    %y = fp4train.dequantize %q : !fp4train.scaled<...> -> tensor<4x64xf32>
    // After
    %amax = linalg.generic ... // tensor<4x2xi32>: magnitude bits per block
    %scales = linalg.generic ... // tensor<4x2xi8>, tensor<4x2xf32>
    %codes = linalg.generic ... // tensor<4x2x32xi8>
    %y = linalg.generic ... // tensor<4x2x32xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FP4TrainToRuntime : Pass<"fp4train-to-runtime", "ModuleOp"> {
  let summary = "Lower fp4train ops to calls of the CPU runtime library";
  let description = [{
    The fast alternative to `fp4train-expand` on the CPU: `quantize`,
    `dequantize`, `hadamard` and `scaled_matmul` become calls to the C entry
    points of `fp4train/Runtime/Runtime.h`, which run the numerics library
    (the single source of truth, [CHK2]). Both lowerings use the same
    1:N type conversion (i8 codes, i8 scales, f32 global decode scale), so a
    module lowered either way computes the same bits.

    Operands cross to the calls as unranked memrefs
    (`bufferization.to_buffer`, any strides), results are fresh
    `memref.alloc` buffers returned to tensors with
    `bufferization.to_tensor restrict writable`, so one-shot bufferization
    takes the module on unchanged. Static attributes (format, block, scale
    mode, rounding, Hadamard signs) become scalar arguments. `pack`, `unpack`
    and `transpose` lower as in `fp4train-expand`.

    Each configuration is checked against the numerics library at compile
    time; one it rejects is an error on the op.

    Example:

    ```mlir
    // Before
    %q = fp4train.quantize %x : tensor<4x64xf32>
        -> !fp4train.scaled<4x64xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>
    // After
    %xb = bufferization.to_buffer %x read_only : tensor<4x64xf32>
        to memref<4x64xf32, strided<[?, ?], offset: ?>>
    %codes = memref.alloc() : memref<4x64xi8>
    %scales = memref.alloc() : memref<4x2xi8>
    %g = func.call @fp4train_rt_quantize(%x_unranked, %codes_unranked,
        %scales_unranked, %c0_i32, %c32, %c1, %c0_i32, %seed, %amax)
        : (memref<*xf32>, memref<*xi8>, memref<*xi8>, i32, i64, i64, i32,
           i64, f32) -> f32
    %ct = bufferization.to_tensor %codes restrict writable : ...
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FP4TrainToAMDGPU : Pass<"fp4train-to-amdgpu", "ModuleOp"> {
  let summary = "Lower fp4train.scaled_matmul to gfx950 scaled-MFMA GPU kernels";
  let description = [{
    Rewrites every `fp4train.scaled_matmul` whose operands are MX formats
    (E2M1, E4M3 or E5M2 elements with E8M0 scales of 32-element blocks) into
    a `gpu.launch` of a tiled GEMM kernel on `amdgpu.scaled_mfma`
    (`v_mfma_scale_f32_32x32x64_f8f6f4` or `_16x16x128_f8f6f4`), with the
    operand tiles staged through double-buffered LDS and f32 accumulation;
    the epilogue writes `acc + A.B^T` in f32 ([GEMM1]). docs/amdgpu.md gives
    the tiling, the instruction choice and the fragment layouts.

    The kernel reads and writes buffers made with `bufferization.to_buffer`
    / `memref.alloc` + `bufferization.to_tensor restrict writable`, so the
    module stays on tensors and one-shot bufferization applies unchanged.
    Types follow the 1:N conversion of `fp4train-expand` (i8 codes, E2M1 two
    per byte [PK1], i8 scale codes), through function signatures too. Static-shaped `hadamard` ops
    become kernels too (a fast Walsh-Hadamard transform bit-identical to the
    library's [H1] order), and so do MX quantize ops blocked along the last
    dimension. The fp4train ops without a GPU lowering yet (other quantize
    ops, dequantize, pack, unpack, transpose) are lowered in the same
    conversion by `fp4train-expand`'s exact patterns, so they run on the
    host; afterwards no fp4train op or type is left.

    `chip` must have the block-scaled MFMA (gfx950); any other chip, and
    NVFP4 operands (E4M3 scales of 16-element blocks, which gfx950 cannot
    consume), are errors naming the chip and the format.

    Example:

    ```mlir
    // Before
    %c = fp4train.scaled_matmul %a, %b, %acc
        : !fp4train.scaled<256x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
          !fp4train.scaled<128x512xf4E2M1FN, block = [1, 32], scale = f8E8M0FNU>,
          tensor<256x128xf32>
    // After
    %out = memref.alloc() {alignment = 64 : i64} : memref<1x256x128xf32>
    gpu.launch blocks(...) in (%x = %c2, %y = %c4, %z = %c1)
               threads(...) in (%tx = %c256, ...)
               workgroup(%lds : memref<...xi8, #gpu.address_space<workgroup>>) {
      ...
      %d = amdgpu.scaled_mfma 16x16x128 (%sa[0] * %fa) * (%sb[0] * %fb) + %acc
          : f8E8M0FNU, vector<32xf4E2M1FN>, f8E8M0FNU, vector<32xf4E2M1FN>,
            vector<4xf32>
      ...
    }
    %t = bufferization.to_tensor %out restrict writable : ...
    ```
  }];
  let options = [
    Option<"chip", "chip", "::mlir::fp4train::GPUChip",
           /*default=*/"::mlir::fp4train::GPUChip::GFX950",
           "AMD chip to generate code for",
           "::mlir::fp4train::getGPUChipValues("
           "::mlir::fp4train::GPUVendor::AMD)">,
    Option<"mfma", "mfma", "::mlir::fp4train::MFMAOption",
           /*default=*/"::mlir::fp4train::MFMAOption::Auto",
           "scaled MFMA form", "::mlir::fp4train::getMFMAOptionValues()">,
    Option<"tile", "tile", "::mlir::fp4train::MFMATileOption",
           /*default=*/"::mlir::fp4train::MFMATileOption::Auto",
           "GEMM workgroup tile",
           "::mlir::fp4train::getMFMATileOptionValues()">
  ];
  let dependentDialects = [
    "::mlir::amdgpu::AMDGPUDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::ROCDL::ROCDLDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FP4TrainToNVVM : Pass<"fp4train-to-nvvm", "ModuleOp"> {
  let summary = "Lower fp4train ops to NVIDIA block-scaled tensor-core GPU kernels";
  let description = [{
    Rewrites every `fp4train.scaled_matmul` into a `gpu.launch` of the
    shared tiled GEMM kernel (docs/nvvm.md) on the chip's block-scaled MMA:
    on sm_120a `nvvm.mma.block_scale` m16n8k64 (`mma.sync.aligned ...
    kind::mxf4.block_scale.scale_vec::2X` with UE8M0 scales for MXFP4,
    `kind::mxf4nvf4 ... scale_vec::4X` with UE4M3 scales for NVFP4, 1-D or
    16x16 weight blocks, the global scales applied in the epilogue) or
    m16n8k32 (`kind::mxf8f6f4 ... scale_vec::1X`, MXFP8). A 256-thread
    workgroup (8 warps, 2x4) computes a 128x128 tile of C; operand tiles are
    staged through double-buffered shared memory, each global byte loaded
    once per workgroup; f32 or fused bf16 epilogue; ragged M, N and K.
    On sm_100a / sm_103a the kernel is tcgen05's, persistent: a grid of
    `gemm-workgroups` workgroups (148 by default) of 288 threads walks the
    128x128 output tiles ([PERS1], docs/nvvm.md): 4 producer warps load
    the tiles in the 128-byte swizzle (by TMA on tensor maps the host makes,
    [TMA1], or by `cp.async` where E2M1 rows are 8 mod 16 bytes) and copy
    the scale atoms over a 4-stage mbarrier ring, one thread copies the scales to tensor
    memory with `tcgen05.cp` and issues
    `tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16` /
    `.block32` or `kind::mxf8f6f4.block_scale.block32` into one of two
    tensor-memory accumulators, and 4 epilogue warps drain the other through
    `tcgen05.ld`; sm_103a emits the same intrinsics through
    `llvm.call_intrinsic` (MLIR's per-op chip check rejects it).

    Quantize ops blocked along the last dimension (MXFP4, MXFP8, NVFP4 with
    the tensor amax computed by a reduction kernel or supplied), and NVFP4
    16x16 weight blocks, become a kernel with one lane per block (per block
    row for 16x16 blocks, which combine their amax in shared memory): block scales by the exact integer
    recipes of [MX1]/[MX2]/[MX3]/[NV1], elements by
    `cvt.rn.satfinite.{e2m1x2,e4m3x2}.f32`, and [SR1] stochastic rounding
    in software (sm_120a has no stochastic FP4 conversion, and that of
    sm_100a does not draw its bits as [SR1] does), with Philox in
    the kernel (its 32-bit widening multiplies as `mul.lo.u32` +
    `mul.hi.u32`, `llvm.nvvm.mulhi.ui`, which ptxas pairs into one wide
    multiply). Static-shaped `hadamard` ops become the shared Hadamard
    kernel. Other fp4train ops are lowered by `fp4train-expand`'s patterns
    in the same conversion and run on the host; buffers cross as in
    `fp4train-to-amdgpu`.

    `chip` is a row of the table of targets (docs/targets.md). sm_120a and
    sm_121a use the warp-level block-scaled MMA; sm_100a and sm_103a the
    tcgen05 kernel. sm_90a and sm_89 have FP8 tensor cores only: every format pair runs one
    FP8 MMA per K block with C = 0 on E2M1 widened to E4M3 (sm_90a:
    `wgmma.mma_async` m64n128k32 per warpgroup for 32-element blocks with
    E8M0 scales, [WG1]; otherwise `mma.sync` m16n8k32, NVFP4 16-blocks
    m16n8k16), each block's f32(sa·sb·P) added in K order ([GEMM1] bit for
    bit for MXFP4/NVFP4), and quantize encodes E2M1 in software. Any other chip (sm_80, the `f` family targets) is not a
    value of `chip`; mixed FP4 x FP8 operands on sm_120a and sm_100a /
    sm_103a are an error naming the chip and the operand formats.

    Example:

    ```mlir
    // Before
    %c = fp4train.scaled_matmul %a, %b, %acc
        : !fp4train.scaled<256x512xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>,
          !fp4train.scaled<128x512xf4E2M1FN, block = [1, 16], scale = f8E4M3FN, global>,
          tensor<256x128xf32>
    // After
    gpu.launch blocks(...) in (%x = %c1, %y = %c2, %z = %c1)
               threads(...) in (%tx = %c256, ...)
               workgroup(%smem : memref<...xi8, #gpu.address_space<workgroup>>) {
      ...
      %d = nvvm.mma.block_scale A[...] B[...] C[...] scaleA[...] scaleB[...]
          {kind = #nvvm.block_scale_kind<mxf4nvf4>, ...}
          : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      ...
    }
    ```
  }];
  let options = [
    Option<"chip", "chip", "::mlir::fp4train::GPUChip",
           /*default=*/"::mlir::fp4train::GPUChip::SM120a",
           "NVIDIA chip to generate code for",
           "::mlir::fp4train::getGPUChipValues("
           "::mlir::fp4train::GPUVendor::NVIDIA)">,
    Option<"sr", "sr", "::mlir::fp4train::NVVMStochasticRounding",
           /*default=*/"::mlir::fp4train::NVVMStochasticRounding::Software",
           "stochastic rounding of the quantize kernels (hardware: 8 random "
           "bits per element, not [SR1])",
           "::mlir::fp4train::getNVVMStochasticRoundingValues()">,
    Option<"gemmWorkgroups", "gemm-workgroups", "unsigned", /*default=*/"0",
           "workgroups of the persistent tcgen05 GEMM (sm_100a, sm_103a; 0: "
           "148, one per SM of a B200)">,
    Option<"gemmCtaPair", "gemm-cta-pair", "bool", /*default=*/"false",
           "the tcgen05 GEMM on CTA pairs (sm_100a, sm_103a): clusters of two "
           "workgroups compute 256 x 128 tiles with cta_group::2 MMAs">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FP4TrainGPUDeviceMemory : Pass<"fp4train-gpu-device-memory", "ModuleOp"> {
  let summary = "Give GPU kernels device buffers, with copies where host and device meet";
  let description = [{
    After bufferization and kernel outlining, every `gpu.launch_func`
    reads and writes the host function's buffers (`memref.alloc`, function
    arguments, `memref.get_global`), which a GPU can touch only with
    unified memory (XNACK / HMM). This pass gives each buffer a kernel uses
    a device twin (`gpu.alloc` of the same type) and makes every access
    happen on the side that holds the current contents:

    - a launch gets the twin (through the same view ops as its operand);
      the host contents are copied in (`gpu.memcpy`) only when the twin is
      stale and the host buffer holds data (a fresh `memref.alloc` that
      no host op wrote, such as a kernel's result buffer, is not copied);
    - buffers the kernel writes (stores through the argument in the
      `gpu.func`, or uses the pass cannot see through) become current on
      the device only;
    - a host op that reads such a buffer first copies it back; a host op
      that writes one makes the twin stale;
    - at `memref.dealloc` of a buffer its twin is freed; at the end of the
      block every buffer still alive (arguments, results, globals) is made
      current on the host and the remaining twins are freed.

    Ops with regions that contain launches are processed region by region,
    with every buffer current on the host at region boundaries. The host
    function keeps its signature: it takes and returns host buffers.

    Example:

    ```mlir
    // Before
    %out = memref.alloc() : memref<64xi8>
    gpu.launch_func @k::@k ... args(%x : memref<64xf32>, %out : memref<64xi8>)
    "host.use"(%out) : (memref<64xi8>) -> ()
    // After
    %out = memref.alloc() : memref<64xi8>
    %x_d = gpu.alloc () : memref<64xf32>
    gpu.memcpy %x_d, %x : memref<64xf32>, memref<64xf32>
    %out_d = gpu.alloc () : memref<64xi8>
    gpu.launch_func @k::@k ... args(%x_d : memref<64xf32>, %out_d : memref<64xi8>)
    gpu.memcpy %out, %out_d : memref<64xi8>, memref<64xi8>
    "host.use"(%out) : (memref<64xi8>) -> ()
    ```
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def FP4TrainCheckNoOutlinedGPUCode
    : Pass<"fp4train-check-no-outlined-gpu-code", "ModuleOp"> {
  let summary = "Reject inputs of the GPU pipelines that already hold outlined GPU code";
  let description = [{
    The first pass of `fp4train-rocm-pipeline` and `fp4train-cuda-pipeline`.
    Those pipelines outline, serialize and launch the kernels they create; a
    `gpu.module`, `gpu.launch_func` or `gpu.binary` in their input (a nested
    `gpu.container_module` that launches its own kernel) would go through
    kernel outlining, device memory and `gpu-to-llvm` as if it were theirs,
    and upstream `gpu-to-llvm` fails on it with invalid IR. This pass
    reports the first such op and fails. A `gpu.launch` region of the input
    is supported: it is outlined with the pipeline's own kernels.
  }];
}

def FP4TrainMergeIdenticalKernels
    : Pass<"fp4train-merge-identical-kernels", "ModuleOp"> {
  let summary = "Keep one gpu.module per distinct outlined kernel";
  let description = [{
    Kernel outlining makes one `gpu.module` per `gpu.launch`; a training
    step whose layers, experts or evaluation function repeat shapes holds
    many copies of the same kernel, each compiled again by the back end.
    This pass compares the modules with their own names and the names of
    their symbols set aside (the printed module, each symbol renamed by its
    position), keeps the first module of each distinct text, points every
    `gpu.launch_func` of a copy at the kept module's symbol in the same
    position, and erases the copies nothing else names ([KRN1] in
    docs/passes.md). Runs in both GPU pipelines after kernel outlining.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FP4TrainCheckDeviceSymbolNames
    : Pass<"fp4train-check-device-symbol-names", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Reject device symbols that the GPU assembly printers cannot write";
  let description = [{
    Runs on each `gpu.module` before `gpu-module-to-binary`. The NVPTX and
    AMDGPU assembly printers do not quote symbol names, and both end the
    process (`LLVM ERROR: Symbol name with unsupported characters`) on a
    name such as `up/../x_kernel`, which kernel outlining derives from a host
    function `@"up/../x"`. This pass reports every symbol of the module
    whose name is not letters, digits, `_`, `$` and `.` (not first; a digit
    not first either), the set both printers accept, and fails.
  }];
}

def FP4TrainSingleWorkgroupOccupancy
    : Pass<"fp4train-single-workgroup-occupancy", "ModuleOp"> {
  let summary = "Mark NVIDIA kernels that fit one workgroup per SM with nvvm.minctasm = 1";
  let description = [{
    Sets `nvvm.minctasm = 1` (PTX `.minnctapersm 1`, [PTX7] in
    docs/nvvm.md) on every `gpu.func` launched by a `gpu.launch_func` whose
    constant dynamic shared memory size is more than half of the largest
    NVIDIA SM's 228 KiB: one workgroup per SM is all that fits, so ptxas may
    give each thread the registers that occupancy no longer needs. Without
    the hint ptxas caps such kernels near 64 registers and spills (the
    tcgen05 GEMM with ragged M, N and K). Launches with a dynamic size or
    less shared memory are left alone.
  }];
}

def FP4TrainKernelClusterSize
    : Pass<"fp4train-kernel-cluster-size", "ModuleOp"> {
  let summary = "Record the constant cluster size of each kernel's launches on the kernel";
  let description = [{
    Sets `known_cluster_size` on every `gpu.func` launched by a
    `gpu.launch_func` with constant cluster dimensions (gpu-kernel-outlining
    keeps them on the launch only). convert-gpu-to-nvvm turns it into
    `nvvm.cluster_dim`, PTX `.explicitcluster` and `.reqnctapercluster`: the
    cluster shape becomes part of the kernel, so a launch without cluster
    dimensions (cuLaunchKernel) still runs it in clusters, as the CTA-pair
    GEMM ([PAIR1] in docs/nvvm.md) requires. Launches of one kernel with
    different cluster sizes are an error.
  }];
}

def FP4TrainCheckNoLibdevice
    : Pass<"fp4train-check-no-libdevice", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Reject GPU modules that call libdevice (__nv_*) functions";
  let description = [{
    Runs on each `gpu.module` in the LLVM dialect. fp4train kernels use no
    math library; a declaration of a libdevice function (`__nv_*`) means
    some op was lowered to a library call, which `format=isa` would leave as
    a silent `.extern .func __nv_*` in the PTX and `format=bin` would fail
    to link without libdevice ([PTX3] in docs/nvvm.md). This pass reports
    every such declaration and fails.
  }];
}

def FP4TrainFreeTensorMaps : Pass<"fp4train-free-tensor-maps", "ModuleOp"> {
  let summary = "Free the device copies of the TMA tensor maps the host encodes";
  let description = [{
    Runs on the host code after `convert-nvgpu-to-nvvm`, which turns each
    `nvgpu.tma.create.descriptor` into a call of the CUDA runtime wrappers'
    `mgpuTensorMapEncodeTiledMemref`: that encodes the map and copies it to
    a fresh device allocation it never frees ([TMA1] in docs/nvvm.md), so a
    training loop would lose 128 bytes of device memory per map and step.
    For every such call whose uses (the launches that take the map) all lie
    in its block, this pass frees the map at the end of the block with
    `mgpuMemFree`, where the device buffers of the block are freed too
    (`cuMemFree` waits for the kernels that use it). A map used in another
    block is left alone.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def FP4TrainCheckPtxas : Pass<"fp4train-check-ptxas", "ModuleOp"> {
  let summary = "Fail early when format=bin has no ptxas to run";
  let description = [{
    `fp4train-cuda-pipeline{format=bin}` serializes the device code with
    ptxas from the CUDA toolkit: `toolkit`/bin/ptxas, the toolkit being the
    option, else `$CUDA_ROOT`, `$CUDA_HOME` or `$CUDA_PATH`, else
    /usr/local/cuda (as `gpu-module-to-binary` looks for it). This pass
    fails with a message naming that path when it is not an executable, so
    the user learns it before any lowering instead of from upstream's late
    error. It does not change the module.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"\"",
           "CUDA toolkit root holding bin/ptxas (empty: the environment's "
           "or /usr/local/cuda)">
  ];
}

#endif // FP4TRAIN_CONVERSION_PASSES_TD
