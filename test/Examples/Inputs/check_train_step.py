#!/usr/bin/env python3
"""Checks the backward pass of a bundled training-step example numerically.

Reads, on stdin, what the example's driver printed with printMemrefF32 when it
ran the example's @train_step in f32 on the CPU, and compares the analytic
gradients it contains with central finite differences of the loss computed
here, in f64, by an independent forward implementation of the same model on
the same inputs (pattern.mlir's data, which is exact in f32).

    check_train_step.py {mlp|mlp_jax|transformer} < runner-output

For every parameter it checks a few random entries, the entry with the largest
gradient, and the directional derivative along a random ±1 direction (which
involves every entry). Python standard library only. Exits 1 on failure.
"""

import math
import operator
import random
import re
import sys

# Tolerance on the relative error of an f32 analytic gradient:
#  - the f64 central differences (step H) are accurate to ~1e-9 relative
#    (truncation H²·L'''/6, cancellation 1e-16·L/H), so the error measured is
#    that of the f32 program;
#  - f32 rounding (u = 2^-24 ≈ 6e-8) in contractions of length K ≤ 128 gives
#    at most K·u ≈ 8e-6 relative per contraction (much less in practice,
#    errors being random), through a chain of at most ~12 of them: ≲ 1e-4;
#  - printMemrefF32 prints 6 significant digits: 5e-7.
# 1e-3 leaves a margin of ~10 over that bound; a wrong gradient (a missing term,
# a transposed operand, a wrong factor or sign) is off by 1e-2 to 1e0.
TOLERANCE = 1e-3
# An entry's error is relative to max(|fd|, FLOOR·max|grad|), so entries that are
# tiny through cancellation are judged against the parameter's gradient scale.
FLOOR = 1e-2
H = 1e-5  # finite-difference step
ENTRIES = 4  # random entries checked per parameter (plus the largest one)
# The forward pass here and the f32 one must compute the same function.
LOSS_TOLERANCE = 1e-4


# ---------------------------------------------------------------- input data --


def pattern(n_rows, n_cols, seed, scale):
    """pattern.mlir's @pattern, row-major flat."""
    a, b = 13 + 2 * seed, 29 + 3 * seed
    return [
        (((a * i + b * j + seed) ** 2) % 97 - 48) * scale
        for i in range(n_rows)
        for j in range(n_cols)
    ]


def pattern_vec(n, seed, scale):
    return pattern(1, n, seed, scale)


def parse_memrefs(text):
    """The (sizes, flat values) of every printMemrefF32 output, in order."""
    out = []
    for m in re.finditer(r"sizes = \[([0-9, ]*)\].*?data =\s*\n(.*?)(?=Unranked Memref|\Z)", text, re.S):
        sizes = [int(s) for s in m.group(1).split(",") if s.strip()]
        values = [float(v) for v in re.findall(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)", m.group(2))]
        out.append((sizes, values))
    return out


# ------------------------------------------------------------- f64 tensor ops --
# Matrices are lists of rows.


def rows(flat, cols):
    return [flat[i : i + cols] for i in range(0, len(flat), cols)]


def transpose(a):
    return [list(col) for col in zip(*a)]


def matmul_nt(a, b):
    """A · Bᵀ."""
    return [[sum(map(operator.mul, ra, rb)) for rb in b] for ra in a]


def add_bias(a, bias):
    return [[v + c for v, c in zip(row, bias)] for row in a]


def gelu(z):
    """tanh approximation, as in the examples."""
    u = 0.7978845608 * (z + 0.044715 * z * z * z)
    return 0.5 * z * (1.0 + math.tanh(u))


def apply(f, a):
    return [[f(v) for v in row] for row in a]


def mse(y, target):
    n = sum(len(row) for row in y)
    return sum((v - t) ** 2 for ry, rt in zip(y, target) for v, t in zip(ry, rt)) / n


# -------------------------------------------------------------------- models --
# Each model: the parameters (name -> (shape, flat f64 values)) and inputs the
# driver built, the loss as a function of the parameters, and the analytic
# gradients read from the driver's output.


def mlp_model(printed, layout):
    """examples/mlp_train_step.mlir (layout "out_in") and
    examples/mlp_train_step_jax.mlir (layout "in_out"); see their drivers."""
    x = rows(pattern(64, 32, 1, 2.0**-6), 32)
    target = rows(pattern(64, 32, 2, 2.0**-6), 32)
    lr = 1024.0
    # (name, [out, in], seed, scale); biases are [out].
    weights = [("w1", (64, 32), 3, 2.0**-7), ("w2", (64, 64), 5, 2.0**-8), ("w3", (32, 64), 7, 2.0**-8)]
    biases = [("b1", 64, 4), ("b2", 64, 6), ("b3", 32, 8)]
    params = {}
    for (wname, (out_f, in_f), wseed, wscale), (bname, n, bseed) in zip(weights, biases):
        shape = (out_f, in_f) if layout == "out_in" else (in_f, out_f)
        params[wname] = (shape, pattern(*shape, wseed, wscale))
        params[bname] = ((n,), pattern_vec(n, bseed, 2.0**-8))

    def weight_rows_out_in(p, name):
        w = rows(p[name], params[name][0][1])
        return w if layout == "out_in" else transpose(w)

    def loss(p):
        h = x
        for layer, ((wname, *_), (bname, *_)) in enumerate(zip(weights, biases)):
            z = add_bias(matmul_nt(h, weight_rows_out_in(p, wname)), p[bname])
            h = apply(gelu, z) if layer < len(weights) - 1 else z
        return mse(h, target)

    # Printed: loss, then every parameter after P_new = P − lr·dP.
    names = ["w1", "b1", "w2", "b2", "w3", "b3"]
    expect_outputs(printed, [()] + [params[n][0] for n in names])
    grads = {
        n: [(p - q) / lr for p, q in zip(params[n][1], printed[1 + i][1])] for i, n in enumerate(names)
    }
    return params, loss, printed[0][1][0], grads


def transformer_model(printed):
    """examples/transformer_block_train_step.mlir; see its driver."""
    T, D, HEADS, DH, F = 32, 64, 4, 16, 128
    x = rows(pattern(T, D, 1, 2.0**-6), D)
    target = rows(pattern(T, D, 2, 2.0**-6), D)
    params = {
        "g1": ((D,), pattern_vec(D, 3, 2.0**-6)),
        "wq": ((D, D), pattern(D, D, 4, 2.0**-8)),
        "wk": ((D, D), pattern(D, D, 5, 2.0**-8)),
        "wv": ((D, D), pattern(D, D, 6, 2.0**-8)),
        "wo": ((D, D), pattern(D, D, 7, 2.0**-8)),
        "g2": ((D,), pattern_vec(D, 8, 2.0**-6)),
        "w1": ((F, D), pattern(F, D, 9, 2.0**-8)),
        "w2": ((D, F), pattern(D, F, 10, 2.0**-9)),
    }

    def rmsnorm(a, g):
        out = []
        for row in a:
            r = 1.0 / math.sqrt(sum(v * v for v in row) / D + 1e-5)
            out.append([v * r * w for v, w in zip(row, g)])
        return out

    def causal_attention(q, k, v):
        """softmax(Q_h·K_hᵀ/√DH, keys j ≤ query i) · V_h per head, heads merged."""
        o = [[0.0] * D for _ in range(T)]
        for h in range(HEADS):
            cols = slice(h * DH, (h + 1) * DH)
            qh, kh, vh = ([row[cols] for row in m] for m in (q, k, v))
            for i in range(T):
                s = [sum(map(operator.mul, qh[i], kh[j])) / math.sqrt(DH) for j in range(i + 1)]
                m = max(s)
                e = [math.exp(val - m) for val in s]
                z = sum(e)
                for c in range(DH):
                    o[i][h * DH + c] = sum(e[j] * vh[j][c] for j in range(i + 1)) / z
        return o

    def add(a, b):
        return [[u + w for u, w in zip(ra, rb)] for ra, rb in zip(a, b)]

    def loss(p):
        def w(name):
            return rows(p[name], params[name][0][1])

        xn = rmsnorm(x, p["g1"])
        o = causal_attention(matmul_nt(xn, w("wq")), matmul_nt(xn, w("wk")), matmul_nt(xn, w("wv")))
        hid = add(x, matmul_nt(o, w("wo")))
        hn = rmsnorm(hid, p["g2"])
        y = add(hid, matmul_nt(apply(gelu, matmul_nt(hn, w("w1"))), w("w2")))
        return mse(y, target)

    # Printed: loss, then the gradient of every parameter.
    names = ["g1", "wq", "wk", "wv", "wo", "g2", "w1", "w2"]
    expect_outputs(printed, [()] + [params[n][0] for n in names])
    grads = {n: printed[1 + i][1] for i, n in enumerate(names)}
    return params, loss, printed[0][1][0], grads


def expect_outputs(printed, shapes):
    got = [tuple(s) for s, _ in printed]
    if got != [tuple(s) for s in shapes]:
        sys.exit("unexpected printed tensors: %s, expected %s" % (got, shapes))


# ------------------------------------------------------------------ checking --


def central_difference(f):
    return (f(H) - f(-H)) / (2 * H)


def check(params, loss, loss_f32, grads):
    ok = True
    base = loss({n: v for n, (_, v) in params.items()})
    loss_err = abs(loss_f32 - base) / abs(base)
    print("loss: %s (f32 %.6g, f64 %.9g, rel err %.1e)"
          % ("OK" if loss_err <= LOSS_TOLERANCE else "FAIL", loss_f32, base, loss_err))
    ok &= loss_err <= LOSS_TOLERANCE
    worst = 0.0
    for name, (shape, value) in params.items():
        g = grads[name]
        rng = random.Random(name)
        g_max = max(abs(v) for v in g)
        picks = rng.sample(range(len(value)), ENTRIES) + [max(range(len(g)), key=lambda k: abs(g[k]))]
        others = {n: v for n, (_, v) in params.items() if n != name}

        def loss_along(direction):
            return lambda h: loss({**others, name: [v + h * d for v, d in zip(value, direction)]})

        errors = []
        for k in picks:
            unit = [0.0] * len(value)
            unit[k] = 1.0
            fd = central_difference(loss_along(unit))
            errors.append(abs(g[k] - fd) / max(abs(fd), FLOOR * g_max))
        # Directional derivative along a random ±1 direction v: ⟨g, v⟩. Rounding
        # errors of size ρ·|g_i| with random signs add up to ~ρ·‖g‖₂.
        v = [rng.choice((-1.0, 1.0)) for _ in value]
        fd = central_difference(loss_along(v))
        errors.append(abs(sum(map(operator.mul, g, v)) - fd) / math.sqrt(sum(x * x for x in g)))
        err = max(errors)
        worst = max(worst, err)
        passed = err <= TOLERANCE
        ok &= passed
        print("%s%s: %s (%d entries + 1 direction, max rel err %.1e)"
              % (name, list(shape), "OK" if passed else "FAIL", len(picks), err))
    print("max rel err %.1e (tolerance %.0e)" % (worst, TOLERANCE))
    print("all gradients OK" if ok else "GRADIENT CHECK FAILED")
    return ok


MODELS = {
    "mlp": lambda printed: mlp_model(printed, "out_in"),
    "mlp_jax": lambda printed: mlp_model(printed, "in_out"),
    "transformer": transformer_model,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in MODELS:
        sys.exit("usage: check_train_step.py {%s} < runner-output" % "|".join(MODELS))
    setup = MODELS[sys.argv[1]](parse_memrefs(sys.stdin.read()))
    sys.exit(0 if check(*setup) else 1)


if __name__ == "__main__":
    main()
