"""[TE1] fp4train's NVFP4 against TransformerEngine's reference algorithm.

TransformerEngine's pure-PyTorch ``NVFP4QuantizerRef`` is not installable
here (TE needs CUDA), so ``te_rht`` and ``te_quantize`` below restate its
algorithm in torch, op for op as TE computes it: the 16-point random
Hadamard transform as a bf16 matmul by ``diag(s) . H16 * 0.25`` (the sign
vector is TE's), S_enc = min(2688 / amax, FLT_MAX) (1 when 0), E4M3 block
scales from ``amax_block * (S_enc / 6)`` clamped to +-448, the element scale
``min(1 / (s_blk * S_dec), FLT_MAX)``, and codes by interval tests on the
clamped product. fp4train's side is the IR a recipe with
``hadamard_precision = operand`` emits ([H2]: ``fp4train.hadamard`` in f32,
then ``arith.truncf`` to bf16), JIT-compiled, and the numerics library's
NVFP4 quantizer ([NV1], what every fp4train path equals bit for bit).

Codes, block scales, amax and the decode scale must be identical, outside
the differences docs/numerics.md [TE1] names: the sign of zero codes
(compared as magnitudes where the product is a zero) and tensors holding
NaN or rotations past FLT_MAX (not generated here).
"""

import fp4train
import fp4train.numerics as fn
import numpy as np
import pytest
import torch

FLT_MAX = float(np.finfo(np.float32).max)
# TransformerEngine's sign vector of the 16-point RHT (fp4train's `fixed`).
TE_SIGNS = [1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1]
ROWS, COLS = 64, 256


def te_rht(x):
    """TE's RHT of a bf16 [rows, 16k] tensor along its last dimension."""
    h = torch.ones(1, 1)
    while h.shape[0] < 16:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    matrix = (torch.diag(torch.tensor(TE_SIGNS, dtype=torch.float32)) @ h)
    transform = (matrix * 0.25).to(torch.bfloat16)
    return (x.reshape(-1, 16) @ transform).reshape(x.shape)


def te_quantize(x):
    """TE's NVFP4 quantization of an f32 [rows, 16k] tensor in 1x16 blocks:
    (codes, E4M3 scale codes, amax, S_dec)."""
    amax = x.abs().max().to(torch.float32)
    encode = torch.div(torch.tensor(448.0 * 6.0), amax)
    encode = torch.minimum(encode, torch.tensor(FLT_MAX))
    if encode == 0.0:
        encode = torch.tensor(1.0)
    decode = torch.div(torch.tensor(1.0), encode)
    blocks = x.reshape(x.shape[0], -1, 16)
    block_amax = blocks.abs().amax(dim=-1, keepdim=True)
    scale = block_amax * (encode * torch.reciprocal(torch.tensor(6.0)))
    scale = torch.minimum(scale, torch.tensor(FLT_MAX))
    scale = torch.clamp(scale, -448.0, 448.0).to(torch.float8_e4m3fn)
    element_scale = torch.minimum(
        torch.div(torch.tensor(1.0), scale.to(torch.float32) * decode),
        torch.tensor(FLT_MAX))
    v = torch.clamp(blocks * element_scale, -6.0, 6.0)
    codes = torch.zeros_like(v, dtype=torch.uint8)
    # Round to nearest, ties to even, by intervals (E2M1: 0 .5 1 1.5 2 3 4 6).
    bounds = [(0.0, 0.25, True, True), (0.25, 0.75, False, False),
              (0.75, 1.25, True, True), (1.25, 1.75, False, False),
              (1.75, 2.5, True, True), (2.5, 3.5, False, False),
              (3.5, 5.0, True, True)]
    for code, (lo, hi, lo_in, hi_in) in enumerate(bounds):
        for sign, offset in ((1.0, 0), (-1.0, 8)):
            a = v * sign
            inside = ((a >= lo) if lo_in else (a > lo)) & (
                (a <= hi) if hi_in else (a < hi))
            if sign < 0 and code == 0:
                inside = (v >= -0.25) & (v < -0.0)
            codes[inside] = code + offset
    codes[v > 5.0] = 7
    codes[v < -5.0] = 15
    scale_codes = scale.view(torch.uint8).reshape(x.shape[0], -1)
    return (codes.reshape(x.shape).numpy(), scale_codes.numpy(),
            float(amax), float(decode))


def fp4train_rht(x):
    """The rotation of a bf16 tensor as a recipe with hadamard_precision =
    operand emits it, JIT-compiled for the CPU, as f32 values."""
    t = f"tensor<{ROWS}x{COLS}"
    text = f"""
    func.func @rotate(%x: {t}xf32>) -> {t}xf32> {{
      %b = arith.truncf %x : {t}xf32> to {t}xbf16>
      %e = arith.extf %b : {t}xbf16> to {t}xf32>
      %r = fp4train.hadamard %e with #fp4train.hadamard<16, fixed> along 1
          : {t}xf32>
      %rb = arith.truncf %r : {t}xf32> to {t}xbf16>
      %re = arith.extf %rb : {t}xbf16> to {t}xf32>
      return %re : {t}xf32>
    }}"""
    function = fp4train.compile(fp4train.Context().parse(text), "rotate",
                                "fp4train-cpu-pipeline{recipe=none}")
    (rotated,) = function(x.to(torch.float32).numpy())
    return rotated


def tensors():
    """bf16 tensors of the kinds the comparison needs: normal, heavy-tailed,
    wide and tiny magnitudes, E4M3-subnormal block scales, zero blocks,
    E2M1 ties."""
    g = torch.Generator().manual_seed(7)
    normal = torch.randn(ROWS, COLS, generator=g)
    yield "normal", normal
    yield "heavy-tailed", normal / torch.rand(ROWS, COLS, generator=g).pow(2)
    yield "wide", normal * torch.pow(
        10.0, torch.randint(-12, 12, (ROWS, COLS), generator=g).float())
    yield "tiny", normal * 1e-30
    outlier = normal.clone()
    outlier[0, 0] = 1e6  # blocks far below the tensor's amax: tiny scales
    yield "outlier", outlier
    zeros = normal.clone()
    zeros[:, :64] = 0.0
    yield "zero-blocks", zeros
    grid = torch.tensor([0.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0])
    ties = grid[torch.randint(0, 9, (ROWS, COLS), generator=g)]
    signs = torch.randint(0, 2, (ROWS, COLS), generator=g) * 2.0 - 1.0
    yield "ties", ties * signs


def check_quantize(values, name):
    """fp4train's NVFP4 of `values` (f32) against TE's, bit for bit."""
    q = fn.quantize(np.ascontiguousarray(values.numpy()), "nvfp4")
    codes, scales, amax, decode = te_quantize(values)
    assert np.array_equal(q.scales, scales), name
    assert float(q.global_scale[0]) == amax, name
    assert float(q.global_scale[1]) == decode, name
    # [TE1] 1: a product that is -0.0 is code 0x8 here, 0x0 in TE's.
    zero_product = (q.codes == 8) & (codes == 0)
    assert np.array_equal(np.where(zero_product, 0, q.codes), codes), name


def test_nvfp4_equals_te_reference():
    for name, values in tensors():
        x = values.to(torch.bfloat16).to(torch.float32)
        check_quantize(x, name)
        check_quantize(te_rht(x.to(torch.bfloat16)).to(torch.float32),
                       name + " rotated by TE")


def test_rht16_equals_te_reference():
    """[H2]: bit for bit wherever a block's f32 sums are exact (magnitudes
    within 2^12 of each other, no subnormals); elsewhere both sides round
    once in f32, in different orders, before rounding to bf16: at most one
    bf16 ulp apart, and only in such blocks."""
    for name, values in tensors():
        x = values.to(torch.bfloat16)
        ours = fp4train_rht(x)
        theirs = te_rht(x).to(torch.float32).numpy()
        differ = ours.view(np.uint32) != theirs.view(np.uint32)
        if not differ.any():
            continue
        magnitudes = np.abs(x.to(torch.float32).numpy()).reshape(ROWS, -1, 16)
        nonzero = np.where(magnitudes > 0, magnitudes, np.inf)
        spread = magnitudes.max(-1) / nonzero.min(-1)
        wide_blocks = np.repeat(spread >= 2.0**12, 16, axis=1)
        assert not (differ & ~wide_blocks).any(), name
        ulps = np.abs(ours.view(np.int32).astype(np.int64) -
                      theirs.view(np.int32).astype(np.int64)) >> 16
        assert ulps[differ].max() <= 1, name
        assert differ.sum() <= differ.size // 1000, name
