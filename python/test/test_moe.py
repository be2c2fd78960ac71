"""Mixture-of-experts GEMMs ([ROLE7], [MOE1]): one quantized step of the expert
MLPs of test/Pipelines/Inputs/moe_experts.mlir on the CPU JIT equals an
independent emulation built on the numerics library's quantize, expert by
expert, with [GEMM1] evaluated in numpy."""

import fp4train
import numpy as np
import pytest

from conftest import SOURCE_ROOT

STEP = SOURCE_ROOT / "test" / "Pipelines" / "Inputs" / "moe_experts.mlir"
E, C, D, F = 4, 32, 64, 128
SCALE = np.float32(0.0001220703125)  # 1 / (E · C · D)


def make_inputs(seed):
    """The step's data (Xe, target) and weights (W1, W2), normal; expert
    e's W1 at a scale 4^e of its own, so that quantization mixing experts
    (a block, or a global scale) would show."""
    rng = np.random.default_rng(seed)
    xe = rng.standard_normal((E, C, D), np.float32)
    target = rng.standard_normal((E, C, D), np.float32)
    w1 = (rng.standard_normal((E, F, D), np.float32) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((E, D, F), np.float32) * 0.1).astype(np.float32)
    w1 *= np.float32(4.0) ** np.arange(E, dtype=np.float32)[:, None, None]
    return xe, target, w1, w2


def gemm(a, b, format_a, format_b, axis_a, axis_b, **options):
    """[GEMM1] of A and B quantized along their K axes, per expert: returns
    f32 [E, M, N] for A [E, ·, ·] and B [E, ·, ·] whose K axes are axis_a and
    axis_b. Each expert's operands are quantized on their own, so no block
    straddles experts; options go to both quantizes (a rotation). Block
    terms are exact in double (E2M1 and FP8 products with power-of-two
    scales), rounded to f32 once, and summed in f32 in K order."""
    qa = fp4train.quantize(np.ascontiguousarray(a), format_a, axis=axis_a,
                           **options)
    qb = fp4train.quantize(np.ascontiguousarray(b), format_b, axis=axis_b,
                           **options)
    a = np.moveaxis(qa.dequantize(), axis_a, -1).astype(np.float64)
    b = np.moveaxis(qb.dequantize(), axis_b, -1).astype(np.float64)
    k = a.shape[-1]
    total = np.zeros((a.shape[0], a.shape[1], b.shape[1]), np.float32)
    for start in range(0, k, 32):
        term = np.einsum("emk,enk->emn", a[..., start:start + 32],
                         b[..., start:start + 32])
        total = total + term.astype(np.float32)
    return total


def emulate(xe, target, w1, w2, formats):
    """The step's loss and gradients with each GEMM as `gemm` computes it:
    formats = (Fprop X, Fprop W, dY, Dgrad W, Wgrad X)."""
    fx, fw, fdy, fdw, fwx = formats
    h = gemm(xe, w1, fx, fw, 2, 2)
    y = gemm(h, w2, fx, fw, 2, 2)
    diff = y - target
    dy = diff * np.float32(2.0) * SCALE
    dw2 = gemm(dy, h, fdy, fwx, 1, 1)
    dh = gemm(dy, w2, fdy, fdw, 2, 1)
    dw1 = gemm(dh, xe, fdy, fwx, 1, 1)
    loss = np.float32((diff.astype(np.float64) ** 2).sum() * float(SCALE))
    return loss, dw1, dw2


@pytest.mark.parametrize("recipe, formats", [
    ("mxfp4", ("mxfp4",) * 5),
    ("mxfp8", ("mxfp8-e4m3", "mxfp8-e4m3", "mxfp8-e5m2", "mxfp8-e4m3",
               "mxfp8-e4m3")),
])
def test_quantized_expert_step_equals_emulation(ctx, recipe, formats):
    module = ctx.parse(STEP.read_text())
    quantized = fp4train.compile(
        module, "train_step",
        f"fp4train-cpu-pipeline{{recipe={recipe} numerics=runtime}}")
    reference = fp4train.compile(
        ctx.parse(STEP.read_text()), "train_step",
        "fp4train-cpu-pipeline{recipe=none}")
    xe, target, w1, w2 = make_inputs(7)
    step = quantized(xe, target, w1, w2, 0)
    f32 = reference(xe, target, w1, w2, 0)
    emulated = emulate(xe, target, w1, w2, formats)
    # The gradients are the emulation's bit for bit; the loss is summed in
    # another order (f32 in the step, double here).
    loss, want, exact = (float(v) for v in (step[0], emulated[0], f32[0]))
    assert abs(loss - want) <= 1e-5 * abs(want)
    assert abs(loss - want) <= 1e-3 * abs(loss - exact)
    for name, got, expected in zip(("dW1", "dW2"), step[1:], emulated[1:]):
        assert np.array_equal(np.asarray(got), expected), name


def nvfp4_values(x, axis, block, per_expert, seeds=None):
    """x [E, ·, ·] quantized to NVFP4 along `axis` (or in 16x16 tiles of
    its last two axes): the elements times their block scales, and each
    expert's global decode scale, from one amax per expert or one for the
    whole tensor ([MOE1]). seeds: expert e rounds stochastically with
    seeds[e] ([SR1]); None: to nearest."""
    if per_expert:
        rounding = ([{}] * x.shape[0] if seeds is None else
                    [dict(rounding="sr", seed=seed) for seed in seeds])
        parts = [fp4train.quantize(np.ascontiguousarray(x[e]), "nvfp4",
                                   axis=axis - 1, block=block, **rounding[e])
                 for e in range(x.shape[0])]
    else:
        parts = [fp4train.quantize(np.ascontiguousarray(x), "nvfp4",
                                   axis=axis, block=block)]
    values = np.concatenate([
        q.dequantize(global_scale=False).reshape((-1,) + x.shape[1:])
        for q in parts])
    decode = np.array([q.global_scale[1] for q in parts], np.float32)
    return values, np.broadcast_to(decode, (x.shape[0],))


def nvfp4_gemm(a, b, axis_a, axis_b, block_b, per_expert, seeds_a=None):
    """[GEMM1] for NVFP4 operands with 16-element K blocks:
    T = sum of f32(sa·sb·P) per block in f32, then f32(g · T) with
    g = f32(S_dec,a · S_dec,b) per expert; A's experts round stochastically
    with seeds_a (per-expert only). Operands in 1-D blocks are quantized
    with K innermost, as the quantize pass lays them out (which decides
    where each element's random bits fall)."""
    a = np.moveaxis(a, axis_a, -1)
    va, ga = nvfp4_values(a, 2, 16, per_expert, seeds_a)
    if block_b != "16x16":
        b, axis_b = np.moveaxis(b, axis_b, -1), 2
    vb, gb = nvfp4_values(b, axis_b, block_b, per_expert)
    va = va.astype(np.float64)
    vb = np.moveaxis(vb, axis_b, -1).astype(np.float64)
    total = np.zeros((va.shape[0], va.shape[1], vb.shape[1]), np.float32)
    for start in range(0, va.shape[-1], 16):
        term = np.einsum("emk,enk->emn", va[..., start:start + 16],
                         vb[..., start:start + 16])
        total = total + term.astype(np.float32)
    g = (ga * gb).astype(np.float32)
    return g[:, None, None] * total


def emulate_nvfp4(xe, target, w1, w2, per_expert):
    """The step under nvfp4 with rounding to nearest and no rotation: 2-D
    weight tiles for Fprop and Dgrad, 16-element blocks elsewhere."""
    gemm = lambda a, b, axis_a, axis_b, block_b: nvfp4_gemm(
        a, b, axis_a, axis_b, block_b, per_expert)
    h = gemm(xe, w1, 2, 2, "16x16")
    y = gemm(h, w2, 2, 2, "16x16")
    diff = y - target
    dy = diff * np.float32(2.0) * SCALE
    dw2 = gemm(dy, h, 1, 1, 16)
    dh = gemm(dy, w2, 2, 1, "16x16")
    dw1 = gemm(dh, xe, 1, 1, 16)
    loss = np.float32((diff.astype(np.float64) ** 2).sum() * float(SCALE))
    return loss, dw1, dw2


def test_nvfp4_global_scales_per_expert_and_per_tensor(ctx):
    """[MOE1] With per-expert global scales (the default) each expert's
    GEMMs equal an emulation that quantizes each expert's slices on their
    own; with per-expert-global-scale=0, one that quantizes whole tensors.
    Experts at scales 4^e apart (make_inputs) make the two differ."""
    xe, target, w1, w2 = make_inputs(11)
    results = {}
    for per_expert in (True, False):
        step = fp4train.compile(
            ctx.parse(STEP.read_text()), "train_step",
            "fp4train-cpu-pipeline{recipe=nvfp4 stochastic-rounding=0 "
            f"hadamard=0 per-expert-global-scale={int(per_expert)} "
            "numerics=runtime}")(xe, target, w1, w2, 0)
        emulated = emulate_nvfp4(xe, target, w1, w2, per_expert)
        loss, want = float(step[0]), float(emulated[0])
        assert abs(loss - want) <= 1e-5 * abs(want)
        for name, got, expected in zip(("dW1", "dW2"), step[1:],
                                       emulated[1:]):
            assert np.array_equal(np.asarray(got), expected), (name,
                                                               per_expert)
        results[per_expert] = np.asarray(step[1])
    assert not np.array_equal(results[True], results[False])


def test_an_outlier_expert_leaves_the_others_alone(ctx):
    """[MOE1] One expert's weights 1000x larger: with per-expert global
    scales the other experts' NVFP4 gradients are the bits they were
    without the outlier (each expert's amax is its own); with one scale per
    tensor the outlier's amax moves their block scales, so their bits
    change. (Their error against f32 barely does, 0.2280 against 0.2279
    relative L2 here: a 1000x smaller tensor amax still leaves their block
    scales among E4M3's normal numbers.)"""
    xe, target, w1, _ = make_inputs(5)
    # Experts of one scale, so that only the outlier stands out.
    w1 = np.ascontiguousarray(w1 / (np.float32(4.0) ** np.arange(
        E, dtype=np.float32)[:, None, None]))
    w2 = np.ascontiguousarray(make_inputs(6)[3])
    loud = w1.copy()
    loud[0] *= np.float32(1000.0)

    def gradients(w, per_expert):
        step = fp4train.compile(
            ctx.parse(STEP.read_text()), "train_step",
            "fp4train-cpu-pipeline{recipe=nvfp4 stochastic-rounding=0 "
            f"hadamard=0 per-expert-global-scale={int(per_expert)} "
            "numerics=runtime}")(xe, target, w, w2, 0)
        return [np.asarray(g)[1:] for g in step[1:]]

    for quiet, outlier in zip(gradients(w1, True), gradients(loud, True)):
        assert np.array_equal(quiet, outlier)
    for quiet, outlier in zip(gradients(w1, False), gradients(loud, False)):
        assert not np.array_equal(quiet, outlier)
