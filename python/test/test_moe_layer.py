"""A whole mixture-of-experts MLP ([ROLE7], [MOE1]) as its own training step:
the generator's router (softmax), top-2 routing with a capacity that drops
tokens, the dispatch and combine gathers, and the experts' GELU MLPs as
batched GEMMs. One quantized step on the CPU JIT equals an independent
emulation in numpy: the experts' gradients bit for bit, the router's (kept
in f32, [MOE1]) and the loss to f32 reordering.

Bit for bit needs the emulation to see the same f32 values the step sees at
every quantizer:
- the router logits are single products (each router row has one nonzero
  weight, make_inputs), so no summation order enters them;
- exp and tanh are the C library's expf and tanhf, which the JIT calls
  (math-to-llvm, then the backend's libcalls), called here through ctypes;
- every other f32 operation is the step's, in the step's order (the
  generator's bodies, gpt_train_step.py moe_forward / moe_backward)."""

import ctypes
import ctypes.util
import importlib.util

import fp4train
import numpy as np
import pytest

from conftest import EXAMPLES
from test_moe import gemm, nvfp4_gemm

T, D, F, E, K, C = 96, 64, 128, 4, 2, 32  # 192 choices, 128 slots: drops
SCALE = np.float32(1.0 / (T * D))
STEP = 3  # the training step, keying stochastic rounding


def generator():
    spec = importlib.util.spec_from_file_location(
        "gpt_train_step", EXAMPLES / "gpt_train_step.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def layer_step_text():
    """@train_step(hn, target, wr, w1, w2, step) -> (loss, dWr, dW1, dW2):
    block 0's MoE MLP of a generated GPT (the generator's own code) on
    inputs Hn [T, D], with loss = Σ (out − target)² / (T·D)."""
    gpt = generator()
    cfg = gpt.Config(layers=1, d_model=D, heads=1, mlp=F, seq=T, batch=1,
                     vocab=2, moe=E, topk=K, capacity=C)
    step = gpt.Step(cfg)
    e, ty = step.e, gpt.ty
    for name, value in (("zero", 0.0), ("half", 0.5), ("one", 1.0),
                        ("two", 2.0), ("three", 3.0),
                        ("sqrt_2_over_pi", 0.7978845608),
                        ("gelu_cubic", 0.044715), ("scale", float(SCALE))):
        e.const(name, value)
    e.consts.append("  %minus_inf = arith.constant 0xFF800000 : f32")
    out, saved = step.moe_forward(0, "%hn")
    saved["hn"] = "%hn"
    td = ty([T, D])
    e.section("loss = Σ (out − target)² · scale, "
              "dOut = (out − target) · 2 · scale")
    dy = e.generic("dout", ["#id", "#id", "#id"], ["parallel"] * 2,
                   [(out, td), ("%target", td)], (e.empty([T, D]), td),
                   ["y", "t", "o"],
                   ["%d = arith.subf %y, %t : f32",
                    "%d2 = arith.mulf %d, %two : f32",
                    "%g = arith.mulf %d2, %scale : f32"], "%g")
    e.prologue.append("  %loss_init = tensor.empty() : tensor<f32>")
    e.prologue.append("  %loss_zero = linalg.fill ins(%zero : f32) "
                      "outs(%loss_init : tensor<f32>) -> tensor<f32>")
    loss = e.generic("loss", ["#id", "#id", "#all"], ["reduction"] * 2,
                     [(out, td), ("%target", td)],
                     ("%loss_zero", "tensor<f32>"),
                     ["y", "t", "acc"],
                     ["%d = arith.subf %y, %t : f32",
                      "%sq = arith.mulf %d, %d : f32",
                      "%s = arith.mulf %sq, %scale : f32",
                      "%r = arith.addf %acc, %s : f32"], "%r")
    _, grads = step.moe_backward(0, dy, saved)
    shapes = {"wr": [E, D], "w1": [E, F, D], "w2": [E, D, F]}
    rtypes = ["tensor<f32>"] + [ty(s) for s in shapes.values()]
    lines = [gpt.MAPS, "#all = affine_map<(t, f) -> ()>",
             "func.func @train_step(%%hn: %s, %%target: %s," % (td, td),
             "    %%l0_wr: %s {fp4train.param, fp4train.router},"
             % ty(shapes["wr"]),
             "    %%l0_w1: %s {fp4train.param}," % ty(shapes["w1"]),
             "    %%l0_w2: %s {fp4train.param}, %%step: i64)"
             % ty(shapes["w2"]),
             "    -> (%s) {" % ", ".join(rtypes)]
    lines += e.consts + e.prologue + e.body
    lines.append("  return %s, %s : %s" % (
        loss, ", ".join(grads[n] for n in shapes), ", ".join(rtypes)))
    lines.append("}")
    return "\n".join(lines) + "\n"


def make_inputs(seed):
    """Hn, target, W1, W2 normal; Wr with one nonzero weight per expert, in
    a column of its own, so that each logit is one rounded product."""
    rng = np.random.default_rng(seed)
    hn = rng.standard_normal((T, D), np.float32)
    target = rng.standard_normal((T, D), np.float32)
    wr = np.zeros((E, D), np.float32)
    columns = rng.permutation(D)[:E]
    wr[np.arange(E), columns] = rng.standard_normal(E, np.float32)
    w1 = (rng.standard_normal((E, F, D), np.float32) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((E, D, F), np.float32) * 0.2).astype(np.float32)
    return hn, target, wr, w1, w2, columns


def libm(name):
    function = getattr(ctypes.CDLL(ctypes.util.find_library("m")), name)
    function.restype, function.argtypes = ctypes.c_float, [ctypes.c_float]
    return np.vectorize(lambda x: np.float32(function(float(x))),
                        otypes=[np.float32])


EXPF, TANHF = libm("expf"), libm("tanhf")
F32 = np.float32


def gelu_parts(z):
    """The generator's GELU body: (gelu(z), 1 + t, t, z²)."""
    z2 = z * z
    inner = z + F32(0.044715) * (z2 * z)
    t = TANHF(F32(0.7978845608) * inner)
    one_plus_t = F32(1) + t
    return (F32(0.5) * z) * one_plus_t, one_plus_t, t, z2


def dgelu(g, z):
    _, one_plus_t, t, z2 = gelu_parts(z)
    left = F32(0.5) * one_plus_t
    sech2 = F32(1) - t * t
    darg = F32(0.7978845608) * (F32(1) + (F32(3) * F32(0.044715)) * z2)
    right = ((F32(0.5) * z) * sech2) * darg
    return g * (left + right)


def route(probs):
    """Top-K (highest probability first, lowest index on ties) and slots:
    choice j of token t takes its expert's next free slot, all first
    choices before second ones, in token order. Returns [(expert, slot)]
    per choice, slot ≥ C when dropped."""
    masked = probs.copy()
    choices, taken = [], np.zeros(E, np.int64)
    for _ in range(K):
        sel = np.argmax(masked, axis=1)  # the first maximum: lowest index
        slot = np.empty(T, np.int64)
        for t in range(T):
            slot[t] = taken[sel[t]]
            taken[sel[t]] += 1
        choices.append((sel, slot))
        masked[np.arange(T), sel] = -np.inf
    return choices


# The layer step's contractions in program order (as its role report
# lists them, checked below), numbered as the quantize pass numbers them.
ROLES = ["fprop", "fprop", "fprop", "wgrad", "dgrad", "wgrad", "dgrad",
         "other", "wgrad", "dgrad"]  # router, W1, W2, W2, W2, W1, W1, router


def emulate(hn, target, wr, w1, w2, columns, gemm):
    """loss, dWr, dW1, dW2 of the layer step (and the number of dropped
    choices) with contraction i as gemm(i, a, b, axis_a, axis_b)
    computes it; a and b are [E, ·, ·] with K along axis_a and axis_b."""
    rows = np.arange(E)
    logits = hn[:, columns] * wr[rows, columns]
    shifted = logits - logits.max(axis=1, keepdims=True)
    ex = EXPF(shifted)
    total = np.zeros(T, F32)
    for x in range(E):  # the step's reduction order
        total = total + ex[:, x]
    probs = ex / total[:, None]
    choices = route(probs)
    gates = [probs[np.arange(T), sel] for sel, _ in choices]

    slot_tok = np.full((E, C), -1)
    slot_gate = np.zeros((E, C), F32)
    for (sel, slot), gate in zip(choices, gates):
        kept = slot < C
        slot_tok[sel[kept], slot[kept]] = np.nonzero(kept)[0]
        slot_gate[sel[kept], slot[kept]] = gate[kept]
    full = slot_tok >= 0
    xe = np.where(full[..., None], hn[np.maximum(slot_tok, 0)], F32(0))

    ue = gemm(1, xe, w1, 2, 2)
    ge = gelu_parts(ue)[0]
    ye = gemm(2, ge, w2, 2, 2)
    out = np.zeros((T, D), F32)
    for (sel, slot), gate in zip(choices, gates):
        kept = slot < C
        term = gate[:, None] * ye[sel, np.minimum(slot, C - 1)]
        out = out + np.where(kept[:, None], term, F32(0))
    diff = out - target
    dout = (diff * F32(2)) * SCALE
    loss = F32((diff.astype(np.float64) ** 2).sum() * float(SCALE))

    slot_dout = dout[np.maximum(slot_tok, 0)]
    dye = np.where(full[..., None], slot_gate[..., None] * slot_dout, F32(0))
    dw2 = gemm(3, dye, ge, 1, 1)
    due = dgelu(gemm(4, dye, w2, 2, 1), ue)
    dw1 = gemm(5, due, xe, 1, 1)

    # The router in double: its GEMMs stay in f32 ([MOE1]), compared to
    # f32 reordering below.
    dgate = np.where(full, np.einsum("ecd,ecd->ec", slot_dout.astype(float),
                                     ye.astype(float)), 0.0)
    dprobs = np.zeros((T, E))
    for sel, slot in choices:
        kept = slot < C
        dprobs[np.nonzero(kept)[0], sel[kept]] += dgate[sel[kept], slot[kept]]
    p = probs.astype(np.float64)
    dlogits = p * (dprobs - (p * dprobs).sum(axis=1, keepdims=True))
    dwr = dlogits.T @ hn.astype(np.float64)
    return loss, dwr, dw1, dw2, sum(int((s >= C).sum()) for _, s in choices)


def mx_gemm(formats, wgrad_hadamard=None):
    """gemm for an MX recipe: formats = (Fprop X, Fprop W, dY, W, X); Wgrad
    operands rotated in blocks of wgrad_hadamard (fixed signs) when set."""
    fx, fw, fdy, fdw, fwx = formats
    formats = {"fprop": (fx, fw), "dgrad": (fdy, fdw), "wgrad": (fdy, fwx)}

    def multiply(i, a, b, axis_a, axis_b):
        rotation = {}
        if ROLES[i] == "wgrad" and wgrad_hadamard:
            rotation = dict(hadamard=wgrad_hadamard)
        return gemm(a, b, *formats[ROLES[i]], axis_a, axis_b, **rotation)
    return multiply


def nvfp4_gemm_by(step=None):
    """gemm for nvfp4 without rotation, per-expert global scales, 2-D
    weight tiles in Fprop and Dgrad. step None: rounding to nearest;
    else the recipe's stochastic rounding of gradients, expert e of
    contraction i with seed (step << 32) + 2·(i + N·(e + 1)) (passes.md,
    "Random bits are reproducible"; the gradient is operand 0)."""
    def multiply(i, a, b, axis_a, axis_b):
        seeds = None
        if step is not None and ROLES[i] != "fprop":
            seeds = [(step << 32) + 2 * (i + len(ROLES) * (e + 1))
                     for e in range(E)]
        block = 16 if ROLES[i] == "wgrad" else "16x16"
        return nvfp4_gemm(a, b, axis_a, axis_b, block, True, seeds)
    return multiply


@pytest.fixture(scope="module")
def layer_text():
    return layer_step_text()


def test_contractions_in_order(ctx, layer_text):
    report = fp4train.role_report(ctx.parse(layer_text))
    assert [c["role"] for c in report] == ROLES
    assert [c["param"] for c in report] == [2, 3, 4, 4, 4, 3, 3, None, 2, 2]


@pytest.mark.parametrize("pipeline, emulated_gemm", [
    ("recipe=mxfp4", mx_gemm(("mxfp4",) * 5)),
    ("recipe=mxfp4-hadamard", mx_gemm(("mxfp4",) * 5, wgrad_hadamard=32)),
    ("recipe=mxfp8", mx_gemm(("mxfp8-e4m3", "mxfp8-e4m3", "mxfp8-e5m2",
                              "mxfp8-e4m3", "mxfp8-e4m3"))),
    ("recipe=nvfp4 stochastic-rounding=0 hadamard=0", nvfp4_gemm_by()),
    ("recipe=nvfp4 hadamard=0 step-arg=5", nvfp4_gemm_by(STEP)),
], ids=["mxfp4", "mxfp4-hadamard", "mxfp8", "nvfp4", "nvfp4-sr"])
def test_quantized_moe_layer_step_equals_emulation(ctx, layer_text, pipeline,
                                                   emulated_gemm):
    hn, target, wr, w1, w2, columns = make_inputs(5)
    step = fp4train.compile(
        ctx.parse(layer_text), "train_step",
        f"fp4train-cpu-pipeline{{{pipeline} numerics=runtime}}")
    loss, dwr, dw1, dw2 = (np.asarray(v) for v in step(hn, target, wr, w1,
                                                       w2, STEP))
    want = emulate(hn, target, wr, w1, w2, columns, emulated_gemm)
    assert want[4] > 0, "the capacity drops no token: the test lost its drops"
    assert np.array_equal(dw1, want[2]), "dW1"
    assert np.array_equal(dw2, want[3]), "dW2"
    assert abs(float(loss) - float(want[0])) <= 1e-5 * abs(float(want[0]))
    np.testing.assert_allclose(dwr, want[1], rtol=1e-4,
                               atol=1e-6 * np.abs(want[1]).max())
