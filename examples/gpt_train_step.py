#!/usr/bin/env python3
"""Generates one training step of a character-level GPT in linalg on tensors.

    gpt_train_step.py [options] [-o FILE]          the step (@train_step) and
                                                   its forward and loss alone
                                                   (@eval_loss)
    gpt_train_step.py driver [options] [-o FILE]   a @main that runs it on
                                                   deterministic data and
                                                   prints loss and gradients
    gpt_train_step.py check [options] [--input FILE]
                                                   checks what the driver
                                                   printed against f64 finite
                                                   differences
    gpt_train_step.py check [options] --jit        the same, running the step
                                                   with fp4train's JIT
                                                   (PYTHONPATH=build/python_packages)

Options: --layers N (4) --d-model D (128) --heads H (4) --mlp F (512)
--seq S (64) --batch B (1) --vocab V (256). `check` and `driver` take the
same options as the step they go with; `driver --time N` first runs N timed
steps and prints their wall times (seconds). The quantize recipes block
contractions along K in 16 or 32 elements: keep D, F, T = B·S and V
multiples of 32 for them, or pass pad=1.

The step is written the way torch-mlir or JAX would emit it: named
linalg.matmul / linalg.batch_matmul (transposed operands through indexing
maps or linalg.transpose), linalg.generic for everything elementwise and for
reductions, tensor.extract for the embedding lookup. The checked-in
examples/gpt_train_step.mlir is this script's default output; regenerate it
with `examples/gpt_train_step.py -o examples/gpt_train_step.mlir`.

To run the check (a lowering with upstream passes only, as test/Examples
does):

    G=examples/gpt_train_step.py; OPTS="--layers 2 --d-model 32 ..."
    cat <($G $OPTS) <($G driver $OPTS) \\
      | fp4-opt -one-shot-bufferize=bufferize-function-boundaries \\
          -convert-linalg-to-loops -expand-strided-metadata -lower-affine \\
          -convert-scf-to-cf -convert-math-to-llvm -convert-to-llvm \\
          -reconcile-unrealized-casts \\
      | mlir-runner -e main -entry-point-result=void -O2 \\
          -shared-libs=libmlir_runner_utils.so,libmlir_c_runner_utils.so \\
      | $G check $OPTS

The generator and the driver need the Python standard library only; `check`
needs numpy.
"""

import argparse
import math
import re
import sys
import time

# ------------------------------------------------------------------ options --

DEFAULTS = dict(layers=4, d_model=128, heads=4, mlp=512, seq=64, batch=1, vocab=256)


class Config:
    def __init__(self, layers, d_model, heads, mlp, seq, batch, vocab, moe=0, topk=2, capacity=0):
        self.L, self.D, self.H, self.F = layers, d_model, heads, mlp
        self.S, self.B, self.V = seq, batch, vocab
        self.DH = d_model // heads
        self.T = seq * batch
        self.BH = batch * heads
        # Mixture of experts: E experts per block (0: a dense MLP), top-K
        # routing, C slots per expert.
        self.E, self.K, self.C = moe, topk, capacity

    def params(self):
        """(name, shape) of every parameter, in argument order."""
        D, F = self.D, self.F
        out = [("wte", (self.V, D)), ("wpe", (self.S, D))]
        for l in range(self.L):
            out += [
                ("l%d_g1" % l, (D,)), ("l%d_wq" % l, (D, D)), ("l%d_wk" % l, (D, D)),
                ("l%d_wv" % l, (D, D)), ("l%d_wo" % l, (D, D)), ("l%d_g2" % l, (D,)),
            ]
            if self.E:  # the router and the experts' weights, [E, out, in]
                out += [("l%d_wr" % l, (self.E, D)), ("l%d_w1" % l, (self.E, F, D)),
                        ("l%d_w2" % l, (self.E, D, F))]
            else:
                out += [("l%d_w1" % l, (F, D)), ("l%d_w2" % l, (D, F))]
        out += [("gf", (D,)), ("whead", (self.V, D))]
        return out

    def index(self, name):
        return [n for n, _ in self.params()].index(name)


def parse_config(argv, prog, extra=None):
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--layers", type=int, metavar="N", default=DEFAULTS["layers"], help="decoder blocks (4)")
    parser.add_argument("--d-model", type=int, metavar="N", default=DEFAULTS["d_model"], help="model width (128)")
    parser.add_argument("--heads", type=int, metavar="N", default=DEFAULTS["heads"], help="attention heads (4)")
    parser.add_argument("--mlp", type=int, metavar="N", default=DEFAULTS["mlp"], help="MLP width (512)")
    parser.add_argument("--seq", type=int, metavar="N", default=DEFAULTS["seq"], help="sequence length (64)")
    parser.add_argument("--batch", type=int, metavar="N", default=DEFAULTS["batch"], help="sequences per step (1)")
    parser.add_argument("--vocab", type=int, metavar="N", default=DEFAULTS["vocab"],
                        help="vocabulary size, tokens are 0..vocab-1 (256: bytes)")
    parser.add_argument("--moe", type=int, metavar="E", default=0,
                        help="a mixture of E experts in place of each MLP (0: dense)")
    parser.add_argument("--topk", type=int, metavar="K", default=2, help="experts per token (2)")
    parser.add_argument("--capacity", type=int, metavar="C", default=0,
                        help="token slots per expert (0: 1.25·K·T/E rounded up to 32)")
    if extra:
        extra(parser)
    args = parser.parse_args(argv)
    for name in ("layers", "d_model", "heads", "mlp", "seq", "batch", "vocab"):
        if getattr(args, name) < 1:
            parser.error("--%s must be at least 1, got %d" % (name.replace("_", "-"), getattr(args, name)))
    if args.d_model % args.heads:
        parser.error("--d-model (%d) must be a multiple of --heads (%d)" % (args.d_model, args.heads))
    if not 2 <= args.vocab <= 256:
        parser.error("--vocab must be in [2, 256] (byte-level tokens), got %d" % args.vocab)
    if args.moe:
        if args.moe < 2:
            parser.error("--moe must be at least 2 experts, got %d" % args.moe)
        if not 1 <= args.topk <= args.moe:
            parser.error("--topk must be in [1, --moe = %d], got %d" % (args.moe, args.topk))
        tokens = args.seq * args.batch
        if not args.capacity:
            args.capacity = max(32, -(-int(math.ceil(1.25 * args.topk * tokens / args.moe)) // 32) * 32)
        # Each expert's Wgrad contracts over its slots: K blocks of 32 (MX)
        # or 16 (NVFP4) must not straddle two experts.
        if args.capacity < 1 or args.capacity % 32:
            parser.error("--capacity (%d) must be a positive multiple of 32: each expert's Wgrad "
                         "contracts over its slots in FP4 blocks of 16 or 32, which never straddle "
                         "experts" % args.capacity)
    elif args.capacity or "--topk" in argv:
        parser.error("--topk and --capacity need --moe")
    cfg = Config(args.layers, args.d_model, args.heads, args.mlp, args.seq, args.batch, args.vocab,
                 args.moe, args.topk, args.capacity)
    return cfg, args


# ------------------------------------------------------------- MLIR helpers --


def ty(shape, elt="f32"):
    if not shape:
        return "tensor<%s>" % elt
    return "tensor<%sx%s>" % ("x".join(str(s) for s in shape), elt)


def shape_tag(shape):
    return "x".join(str(s) for s in shape) if shape else "scalar"


def f32_literal(value):
    """A decimal literal that parses to the f32 nearest to value (9
    significant digits; MLIR wants a point in the mantissa)."""
    text = "%.9g" % value
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def wrap_types(types, indent, width=96):
    """types joined by ", " on lines of at most width characters."""
    lines, line = [], ""
    for t in types:
        piece = t + ","
        if line and len(indent) + len(line) + 1 + len(piece) > width:
            lines.append(indent + line)
            line = piece
        else:
            line = (line + " " + piece) if line else piece
    lines.append(indent + line)
    return "\n".join(lines)[:-1]


MAPS = """\
// C = A · Bᵀ
#a_mk = affine_map<(m, n, k) -> (m, k)>
#b_nk = affine_map<(m, n, k) -> (n, k)>
#c_mn = affine_map<(m, n, k) -> (m, n)>
// C = Aᵀ · B (contraction over the rows of both operands: the tokens)
#a_km = affine_map<(m, n, k) -> (k, m)>
#b_kn = affine_map<(m, n, k) -> (k, n)>
// Elementwise maps over [tokens, features].
#id = affine_map<(t, f) -> (t, f)>
#tok = affine_map<(t, f) -> (t)>
#feat = affine_map<(t, f) -> (f)>
#vec = affine_map<(t) -> (t)>
#vec_scalar = affine_map<(t) -> ()>
// Elementwise maps over [batch·heads, queries, keys].
#id3 = affine_map<(h, i, j) -> (h, i, j)>
#query = affine_map<(h, i, j) -> (h, i)>
// Embedding lookup over [batch, positions, features].
#bsd = affine_map<(b, s, d) -> (b, s, d)>
#bs = affine_map<(b, s, d) -> (b, s)>
#sd = affine_map<(b, s, d) -> (s, d)>
// dwpe: a sum over the batch, iterating (positions, features, batch).
#sdb_in = affine_map<(s, d, b) -> (b, s, d)>
#sdb_out = affine_map<(s, d, b) -> (s, d)>
// dwte: a scatter-add over the tokens, iterating (vocab, features, tokens).
#vdt_tok = affine_map<(v, d, t) -> (t)>
#vdt_grad = affine_map<(v, d, t) -> (t, d)>
#vdt_out = affine_map<(v, d, t) -> (v, d)>
"""


class Emitter:
    """Collects the function body; tensor.empty / linalg.fill / constants go
    to a prologue so that they dominate every use."""

    def __init__(self):
        self.consts = []
        self.const_names = set()
        self.prologue = []
        self.prologue_names = set()
        self.body = []
        self.contractions = []  # (role, description, param name or None)

    def const(self, name, value, comment=None):
        if name not in self.const_names:
            self.const_names.add(name)
            line = "  %%%s = arith.constant %s : f32" % (name, f32_literal(value))
            if comment:
                line += "  // " + comment
            self.consts.append(line)
        return "%" + name

    def empty(self, shape):
        name = "%empty_" + shape_tag(shape)
        if name not in self.prologue_names:
            self.prologue_names.add(name)
            self.prologue.append("  %s = tensor.empty() : %s" % (name, ty(shape)))
        return name

    def filled(self, shape, value="zero", prefix="zeros"):
        name = "%%%s_%s" % (prefix, shape_tag(shape))
        if name not in self.prologue_names:
            empty = self.empty(shape)
            self.prologue_names.add(name)
            self.prologue.append("  %s = linalg.fill ins(%%%s : f32) outs(%s : %s) -> %s"
                                 % (name, value, empty, ty(shape), ty(shape)))
        return name

    def zeros(self, shape):
        return self.filled(shape)

    def const_i32(self, value):
        """%c<value>_i32, declared once."""
        name = "c%d_i32" % value
        if name not in self.const_names:
            self.const_names.add(name)
            self.consts.append("  %%%s = arith.constant %d : i32" % (name, value))
        return "%" + name

    def const_true(self):
        """%true, declared once."""
        if "true" not in self.const_names:
            self.const_names.add("true")
            self.consts.append("  %true = arith.constant true")
        return "%true"

    def filled_i32(self, shape, value):
        """An i32 tensor of `shape` filled with the integer `value`."""
        name = "%%i32_%d_%s" % (value, shape_tag(shape))
        if name not in self.prologue_names:
            self.prologue_names.add(name)
            empty = "%%empty_i32_%s" % shape_tag(shape)
            if empty not in self.prologue_names:
                self.prologue_names.add(empty)
                self.prologue.append("  %s = tensor.empty() : %s" % (empty, ty(shape, "i32")))
            self.prologue.append("  %s = linalg.fill ins(%s : i32) outs(%s : %s) -> %s"
                                 % (name, self.const_i32(value), empty, ty(shape, "i32"), ty(shape, "i32")))
        return name

    def expert_matmul(self, out, a, b, ashape, bshape, cshape, transpose_a=False, transpose_b=False):
        """C[e] = op(A[e]) · op(B[e]) for every expert e: a linalg.batch_matmul,
        with indexing maps where an operand is read transposed."""
        init = self.zeros(cshape)
        if transpose_a or transpose_b:
            amap = "(e, k, m)" if transpose_a else "(e, m, k)"
            bmap = "(e, n, k)" if transpose_b else "(e, k, n)"
            self.emit("%%%s = linalg.batch_matmul indexing_maps = [" % out)
            self.emit("        affine_map<(e, m, n, k) -> %s>, affine_map<(e, m, n, k) -> %s>," % (amap, bmap))
            self.emit("        affine_map<(e, m, n, k) -> (e, m, n)>]")
        else:
            self.emit("%%%s = linalg.batch_matmul" % out)
        self.emit("    ins(%s, %s : %s, %s)" % (a, b, ty(ashape), ty(bshape)))
        self.emit("    outs(%s : %s) -> %s" % (init, ty(cshape), ty(cshape)))
        return "%" + out

    def emit(self, text=""):
        self.body.extend(("  " + line if line else "") for line in text.split("\n"))

    def section(self, title):
        self.emit("")
        self.emit("// ---- %s ----" % title)

    def contraction(self, role, what, param=None):
        """Records and comments a contraction; param: (index, name) of its
        weight (Fprop, Dgrad) or of the weight its result is the gradient
        of (Wgrad)."""
        if param:
            what += " [param %d, %s]" % param
        self.contractions.append((role, what))
        self.emit("// %s: %s" % (role.capitalize() if role != "other" else "other", what))

    # -- ops -------------------------------------------------------------- #

    def matmul(self, out, a, b, ashape, bshape, cshape, maps=None, init=None):
        init = init or self.zeros(cshape)
        if maps:
            self.emit("%%%s = linalg.matmul indexing_maps = [%s]" % (out, ", ".join(maps)))
        else:
            self.emit("%%%s = linalg.matmul" % out)
        self.emit("    ins(%s, %s : %s, %s)" % (a, b, ty(ashape), ty(bshape)))
        self.emit("    outs(%s : %s) -> %s" % (init, ty(cshape), ty(cshape)))
        return "%" + out

    def batch_matmul(self, out, a, b, ashape, bshape, cshape):
        init = self.zeros(cshape)
        self.emit("%%%s = linalg.batch_matmul" % out)
        self.emit("    ins(%s, %s : %s, %s)" % (a, b, ty(ashape), ty(bshape)))
        self.emit("    outs(%s : %s) -> %s" % (init, ty(cshape), ty(cshape)))
        return "%" + out

    def transpose(self, out, x, shape, perm):
        oshape = [shape[p] for p in perm]
        self.emit("%%%s = linalg.transpose ins(%s : %s)" % (out, x, ty(shape)))
        self.emit("    outs(%s : %s) permutation = [%s]"
                  % (self.empty(oshape), ty(oshape), ", ".join(map(str, perm))))
        return "%" + out

    @staticmethod
    def _reassoc(groups):
        return "[%s]" % ", ".join("[%s]" % ", ".join(map(str, g)) for g in groups)

    def expand(self, out, x, shape, groups, oshape):
        self.emit("%%%s = tensor.expand_shape %s %s output_shape [%s]"
                  % (out, x, self._reassoc(groups), ", ".join(map(str, oshape))))
        self.emit("    : %s into %s" % (ty(shape), ty(oshape)))
        return "%" + out

    def collapse(self, out, x, shape, groups, elt="f32"):
        oshape = [math.prod(shape[i] for i in g) for g in groups]
        self.emit("%%%s = tensor.collapse_shape %s %s" % (out, x, self._reassoc(groups)))
        self.emit("    : %s into %s" % (ty(shape, elt), ty(oshape, elt)))
        return "%" + out

    def generic(self, out, maps, iterators, ins, outs, args, body, result):
        """ins: [(value, type)], outs: (value, type), args: block argument
        names (ins, then the output), body: lines ending before the yield of
        `result` (a value name)."""
        otype = outs[1]
        self.emit("%%%s = linalg.generic {indexing_maps = [%s]," % (out, ", ".join(maps)))
        self.emit("    iterator_types = [%s]}" % ", ".join('"%s"' % i for i in iterators))
        if ins:
            line = "    ins(%s : %s)" % (", ".join(v for v, _ in ins), ", ".join(t for _, t in ins))
            if len(line) <= 96:
                self.emit(line)
            else:
                self.emit("    ins(%s" % ", ".join(v for v, _ in ins))
                self.emit("        : " + wrap_types([t for _, t in ins], "          ", 94).lstrip() + ")")
        self.emit("    outs(%s : %s) {" % (outs[0], otype))
        types = [t for _, t in ins] + [otype]
        elts = [re.match(r"tensor<(?:.*x)?([a-z0-9]+)>", t).group(1) for t in types]
        self.emit("^bb0(%s):" % ", ".join("%%%s: %s" % (a, e) for a, e in zip(args, elts)))
        for line in body:
            self.emit("  " + line)
        self.emit("  linalg.yield %s : %s" % (result, elts[-1]))
        self.emit("} -> %s" % otype)
        return "%" + out


# --------------------------------------------------------------- the model --


class Step:
    def __init__(self, cfg, forward_only=False):
        self.cfg = cfg
        self.e = Emitter()
        self.splits = {}
        # @eval_loss: the forward and the loss, nothing of the backward.
        self.forward_only = forward_only

    # -- building blocks --------------------------------------------------- #

    def rmsnorm(self, title, p, rname, outname, x, g):
        """out = X · r ⊙ g, r = 1/√(mean_d(X²) + ε). Returns (r, out)."""
        c, e = self.cfg, self.e
        T, D = c.T, c.D
        e.section(title)
        ss = e.generic(p + "_sumsq", ["#id", "#tok"], ["parallel", "reduction"],
                       [(x, ty([T, D]))], (e.zeros([T]), ty([T])), ["act", "acc"],
                       ["%act2 = arith.mulf %act, %act : f32", "%s = arith.addf %acc, %act2 : f32"], "%s")
        r = e.generic(rname, ["#vec", "#vec"], ["parallel"],
                      [(ss, ty([T]))], (e.empty([T]), ty([T])), ["ss", "out"],
                      ["%mean = arith.mulf %ss, %inv_d : f32",
                       "%mean_eps = arith.addf %mean, %norm_eps : f32",
                       "%r = math.rsqrt %mean_eps : f32"], "%r")
        xn = e.generic(outname, ["#id", "#tok", "#feat", "#id"], ["parallel", "parallel"],
                       [(x, ty([T, D])), (r, ty([T])), (g, ty([D]))], (e.empty([T, D]), ty([T, D])),
                       ["act", "r", "g", "out"],
                       ["%act_r = arith.mulf %act, %r : f32", "%act_rg = arith.mulf %act_r, %g : f32"],
                       "%act_rg")
        return r, xn

    def rmsnorm_backward(self, p, dgname, dxname, dxn, x, r, g, dres):
        """Given dXn, returns (dg, dX) with dX = dres + r·g ⊙ dXn − X·r³·c/D,
        c = Σ_d dXn ⊙ g ⊙ X (dres: the residual's gradient, or None)."""
        c, e = self.cfg, self.e
        T, D = c.T, c.D
        dg = e.generic(dgname, ["#id", "#id", "#tok", "#feat"], ["reduction", "parallel"],
                       [(dxn, ty([T, D])), (x, ty([T, D])), (r, ty([T]))], (e.zeros([D]), ty([D])),
                       ["g", "act", "r", "acc"],
                       ["%gv = arith.mulf %g, %act : f32", "%gvr = arith.mulf %gv, %r : f32",
                        "%s = arith.addf %acc, %gvr : f32"], "%s")
        cc = e.generic(p + "_c", ["#id", "#feat", "#id", "#tok"], ["parallel", "reduction"],
                       [(dxn, ty([T, D])), (g, ty([D])), (x, ty([T, D]))], (e.zeros([T]), ty([T])),
                       ["g", "w", "act", "acc"],
                       ["%gw = arith.mulf %g, %w : f32", "%gwv = arith.mulf %gw, %act : f32",
                        "%s = arith.addf %acc, %gwv : f32"], "%s")
        ins = [(dxn, ty([T, D])), (g, ty([D])), (x, ty([T, D])), (r, ty([T])), (cc, ty([T]))]
        maps = ["#id", "#feat", "#id", "#tok", "#tok"]
        args = ["g", "w", "act", "r", "c"]
        body = ["%gw = arith.mulf %g, %w : f32", "%direct = arith.mulf %gw, %r : f32",
                "%r2 = arith.mulf %r, %r : f32", "%r3 = arith.mulf %r2, %r : f32",
                "%act_r3 = arith.mulf %act, %r3 : f32", "%act_r3c = arith.mulf %act_r3, %c : f32",
                "%through_r = arith.mulf %act_r3c, %inv_d : f32",
                "%dnorm = arith.subf %direct, %through_r : f32"]
        result = "%dnorm"
        if dres is not None:
            ins.insert(0, (dres, ty([T, D])))
            maps.insert(0, "#id")
            args.insert(0, "dres")
            body.append("%total = arith.addf %dres, %dnorm : f32")
            result = "%total"
        dx = e.generic(dxname, maps + ["#id"], ["parallel", "parallel"], ins,
                       (e.empty([T, D]), ty([T, D])), args + ["out"], body, result)
        return dg, dx

    def add(self, name, a, b, shape):
        e = self.e
        return e.generic(name, ["#id", "#id", "#id"], ["parallel", "parallel"],
                         [(a, ty(shape)), (b, ty(shape))], (e.empty(shape), ty(shape)),
                         ["a", "b", "out"], ["%s = arith.addf %a, %b : f32"], "%s")

    def split_heads(self, name, x, transposed=False):
        """[T, D] → [B, S, H, dh] → [B, H, S, dh] (or [B, H, dh, S]) → [B·H, ...]."""
        c, e = self.cfg, self.e
        B, S, H, DH = c.B, c.S, c.H, c.DH
        # One expand_shape per value, shared by its plain and transposed heads.
        if x not in self.splits:
            self.splits[x] = e.expand(x[1:] + "_split", x, [c.T, c.D], [[0, 1], [2, 3]], [B, S, H, DH])
        split = self.splits[x]
        perm = [0, 2, 3, 1] if transposed else [0, 2, 1, 3]
        t = e.transpose(name + ("_bhds" if transposed else "_bhsd"), split, [B, S, H, DH], perm)
        return e.collapse(name, t, [[B, S, H, DH][p] for p in perm], [[0, 1], [2], [3]])

    def merge_heads(self, name, x):
        """[B·H, S, dh] → [B, H, S, dh] → [B, S, H, dh] → [T, D]."""
        c, e = self.cfg, self.e
        B, S, H, DH = c.B, c.S, c.H, c.DH
        split = e.expand(name + "_bhsd", x, [c.BH, S, DH], [[0, 1], [2], [3]], [B, H, S, DH])
        t = e.transpose(name + "_split", split, [B, H, S, DH], [0, 2, 1, 3])
        return e.collapse(name, t, [B, S, H, DH], [[0, 1], [2, 3]])

    def gelu_body(self, backward):
        fwd = ["%z2 = arith.mulf %z, %z : f32", "%z3 = arith.mulf %z2, %z : f32",
               "%cz3 = arith.mulf %gelu_cubic, %z3 : f32", "%inner = arith.addf %z, %cz3 : f32",
               "%arg = arith.mulf %sqrt_2_over_pi, %inner : f32", "%t = math.tanh %arg : f32",
               "%one_plus_t = arith.addf %one, %t : f32"]
        if not backward:
            return fwd + ["%half_z = arith.mulf %half, %z : f32", "%gz = arith.mulf %half_z, %one_plus_t : f32"]
        return fwd + [
            "// ½·(1 + t) + ½·z·(1 − t²)·√(2/π)·(1 + 3·0.044715·z²)",
            "%left = arith.mulf %half, %one_plus_t : f32",
            "%t2 = arith.mulf %t, %t : f32", "%sech2 = arith.subf %one, %t2 : f32",
            "%c3 = arith.mulf %three, %gelu_cubic : f32", "%c3z2 = arith.mulf %c3, %z2 : f32",
            "%darg_raw = arith.addf %one, %c3z2 : f32", "%darg = arith.mulf %sqrt_2_over_pi, %darg_raw : f32",
            "%half_z = arith.mulf %half, %z : f32", "%right_a = arith.mulf %half_z, %sech2 : f32",
            "%right = arith.mulf %right_a, %darg : f32", "%dgelu = arith.addf %left, %right : f32",
            "%dz = arith.mulf %g, %dgelu : f32"]

    # -- forward ----------------------------------------------------------- #

    def block_forward(self, l, x):
        c, e = self.cfg, self.e
        T, D, F, BH, S, DH = c.T, c.D, c.F, c.BH, c.S, c.DH
        p = "l%d" % l
        P = lambda n: "%" + p + "_" + n  # noqa: E731
        W = lambda n: (c.index(p + "_" + n), p + "_" + n)  # noqa: E731
        e.emit("")
        e.emit("// ==================== decoder block %d: forward ==================== //" % l)
        r1, xn = self.rmsnorm("block %d: RMSNorm 1, Xn = X · r1 ⊙ g1, r1 = 1/√(mean_d(X²) + ε)" % l,
                              p + "_norm1", p + "_r1", p + "_xn", x, P("g1"))

        e.section("block %d: Q, K, V projections" % l)
        e.contraction("fprop", "Q = Xn · Wqᵀ (block %d; Wq transposed by the indexing maps)" % l, W("wq"))
        q = e.matmul(p + "_q", xn, P("wq"), [T, D], [D, D], [T, D], maps=["#a_mk", "#b_nk", "#c_mn"])
        e.contraction("fprop", "K = Xn · Wkᵀ (block %d; indexing maps)" % l, W("wk"))
        k = e.matmul(p + "_k", xn, P("wk"), [T, D], [D, D], [T, D], maps=["#a_mk", "#b_nk", "#c_mn"])
        e.contraction("fprop", "V = Xn · Wvᵀ (block %d; explicit transpose of Wv)" % l, W("wv"))
        wv_t = e.transpose(p + "_wv_t", P("wv"), [D, D], [1, 0])
        v = e.matmul(p + "_v", xn, wv_t, [T, D], [D, D], [T, D])

        e.section("block %d: split heads, [T, D] → [B·H, S, dh] (Kᵀ: [B·H, dh, S])" % l)
        qh = self.split_heads(p + "_q_heads", q)
        kh = self.split_heads(p + "_k_heads", k)
        kht = self.split_heads(p + "_k_heads_t", k, transposed=True)
        vh = self.split_heads(p + "_v_heads", v)
        vht = self.split_heads(p + "_v_heads_t", v, transposed=True)

        e.section("block %d: causal softmax attention" % l)
        e.contraction("other", "scores Q_h · K_hᵀ (block %d)" % l)
        qk = e.batch_matmul(p + "_qk", qh, kht, [BH, S, DH], [BH, DH, S], [BH, S, S])
        e.emit("// S = Q_h · K_hᵀ / √dh, with −inf where the key comes after the query.")
        sc = e.generic(p + "_scores", ["#id3", "#id3"], ["parallel"] * 3, [(qk, ty([BH, S, S]))],
                       (e.empty([BH, S, S]), ty([BH, S, S])), ["s", "out"],
                       ["%i = linalg.index 1 : index", "%j = linalg.index 2 : index",
                        "%future = arith.cmpi ugt, %j, %i : index",
                        "%scaled = arith.mulf %s, %inv_sqrt_dh : f32",
                        "%masked = arith.select %future, %minus_inf, %scaled : f32"], "%masked")
        e.emit("// P = softmax(S) along the keys: exp(S − max) / Σ exp(S − max).")
        mx = e.generic(p + "_row_max", ["#id3", "#query"], ["parallel", "parallel", "reduction"],
                       [(sc, ty([BH, S, S]))], (e.filled([BH, S], "minus_inf", "minus_infs"), ty([BH, S])),
                       ["s", "acc"], ["%m = arith.maximumf %acc, %s : f32"], "%m")
        ex = e.generic(p + "_exp_scores", ["#id3", "#query", "#id3"], ["parallel"] * 3,
                       [(sc, ty([BH, S, S])), (mx, ty([BH, S]))], (e.empty([BH, S, S]), ty([BH, S, S])),
                       ["s", "m", "out"], ["%shifted = arith.subf %s, %m : f32", "%ex = math.exp %shifted : f32"],
                       "%ex")
        sm = e.generic(p + "_row_sum", ["#id3", "#query"], ["parallel", "parallel", "reduction"],
                       [(ex, ty([BH, S, S]))], (e.zeros([BH, S]), ty([BH, S])),
                       ["ex", "acc"], ["%s = arith.addf %acc, %ex : f32"], "%s")
        pr = e.generic(p + "_probs", ["#id3", "#query", "#id3"], ["parallel"] * 3,
                       [(ex, ty([BH, S, S])), (sm, ty([BH, S]))], (e.empty([BH, S, S]), ty([BH, S, S])),
                       ["ex", "sum", "out"], ["%pr = arith.divf %ex, %sum : f32"], "%pr")
        e.contraction("other", "O_h = P · V_h (block %d)" % l)
        oh = e.batch_matmul(p + "_o_heads", pr, vh, [BH, S, S], [BH, S, DH], [BH, S, DH])
        e.section("block %d: merge heads, [B·H, S, dh] → [T, D]" % l)
        o = self.merge_heads(p + "_o", oh)

        e.section("block %d: output projection and residual, H = X + O · Woᵀ" % l)
        e.contraction("fprop", "O · Woᵀ (block %d; indexing maps)" % l, W("wo"))
        ao = e.matmul(p + "_attn_out", o, P("wo"), [T, D], [D, D], [T, D], maps=["#a_mk", "#b_nk", "#c_mn"])
        h = self.add(p + "_h", x, ao, [T, D])
        r2, hn = self.rmsnorm("block %d: RMSNorm 2, Hn = H · r2 ⊙ g2" % l,
                              p + "_norm2", p + "_r2", p + "_hn", h, P("g2"))

        if c.E:
            mo, saved = self.moe_forward(l, hn)
            y = self.add(p + "_y", h, mo, [T, D])
            saved.update(x=x, r1=r1, xn=xn, qh=qh, kh=kh, vht=vht, pr=pr, o=o, h=h, r2=r2, hn=hn)
            return y, saved
        e.section("block %d: MLP and residual, X' = H + gelu(Hn · W1ᵀ) · W2ᵀ" % l)
        e.contraction("fprop", "U = Hn · W1ᵀ (block %d; explicit transpose of W1)" % l, W("w1"))
        w1_t = e.transpose(p + "_w1_t", P("w1"), [F, D], [1, 0])
        u = e.matmul(p + "_u", hn, w1_t, [T, D], [D, F], [T, F])
        gu = e.generic(p + "_gu", ["#id", "#id"], ["parallel", "parallel"], [(u, ty([T, F]))],
                       (e.empty([T, F]), ty([T, F])), ["z", "out"], self.gelu_body(False), "%gz")
        e.contraction("fprop", "G · W2ᵀ (block %d; indexing maps)" % l, W("w2"))
        mo = e.matmul(p + "_mlp_out", gu, P("w2"), [T, F], [D, F], [T, D], maps=["#a_mk", "#b_nk", "#c_mn"])
        y = self.add(p + "_y", h, mo, [T, D])
        return y, dict(x=x, r1=r1, xn=xn, qh=qh, kh=kh, vht=vht, pr=pr, o=o, h=h, r2=r2, hn=hn, u=u, gu=gu)

    # -- mixture of experts ------------------------------------------------ #

    def moe_forward(self, l, hn):
        """The MoE MLP of block l on Hn [T, D]: a router, top-K routing with
        C slots per expert (tokens past an expert's capacity are dropped),
        the experts' GELU MLPs as batched GEMMs over [E, out, in] weights,
        and the gated sum of each token's expert outputs. Returns the output
        [T, D] and what the backward needs."""
        c, e = self.cfg, self.e
        T, D, F, E, K, C = c.T, c.D, c.F, c.E, c.K, c.C
        p = "l%d_moe" % l
        P = lambda n: "%%l%d_%s" % (l, n)  # noqa: E731
        W = lambda n: (c.index("l%d_%s" % (l, n)), "l%d_%s" % (l, n))  # noqa: E731
        te = ty([T, E])
        # The constants the bodies below use.
        e.const_i32(0), e.const_i32(1), e.const_true()
        e.section("block %d: router, P = softmax(Hn · Wrᵀ) over the %d experts" % (l, E))
        e.contraction("fprop", "router logits = Hn · Wrᵀ (block %d; indexing maps)" % l, W("wr"))
        logits = e.matmul(p + "_logits", hn, P("wr"), [T, D], [E, D], [T, E], maps=["#a_mk", "#b_nk", "#c_mn"])
        lmax = e.generic(p + "_logits_max", ["#id", "#tok"], ["parallel", "reduction"], [(logits, te)],
                         (e.filled([T], "minus_inf", "minus_infs"), ty([T])), ["x", "acc"],
                         ["%m = arith.maximumf %acc, %x : f32"], "%m")
        lsum = e.generic(p + "_logits_sumexp", ["#id", "#tok", "#tok"], ["parallel", "reduction"],
                         [(logits, te), (lmax, ty([T]))], (e.zeros([T]), ty([T])), ["x", "m", "acc"],
                         ["%d = arith.subf %x, %m : f32", "%ex = math.exp %d : f32",
                          "%s = arith.addf %acc, %ex : f32"], "%s")
        probs = e.generic(p + "_probs", ["#id", "#tok", "#tok", "#id"], ["parallel", "parallel"],
                          [(logits, te), (lmax, ty([T])), (lsum, ty([T]))], (e.empty([T, E]), te),
                          ["x", "m", "se", "out"],
                          ["%d = arith.subf %x, %m : f32", "%ex = math.exp %d : f32",
                           "%pr = arith.divf %ex, %se : f32"], "%pr")

        e.section("block %d: top-%d routing: the expert of each choice (highest probability first, "
                  "lowest index on ties) and its gate, the probability" % (l, K))
        sels, gates = [], []
        for j in range(K):
            prev = [(sv, ty([T], "i32")) for sv in sels]
            excluded = ["%ei = arith.index_cast %e : index to i32"]
            excluded += ["%%ex%d = arith.cmpi eq, %%ei, %%s%d : i32" % (i, i) for i in range(j)]
            masks = "%false"
            for i in range(j):
                excluded.append("%%masked%d = arith.ori %s, %%ex%d : i1" % (i, masks, i))
                masks = "%%masked%d" % i
            head = ["%e = linalg.index 1 : index", "%false = arith.constant false"] + excluded
            g = e.generic("%s_gate%d" % (p, j), ["#id"] + ["#tok"] * (j + 1), ["parallel", "reduction"],
                          [(probs, te)] + prev, (e.filled([T], "minus_inf", "minus_infs"), ty([T])),
                          ["pr"] + ["s%d" % i for i in range(j)] + ["acc"],
                          head + ["%%v = arith.select %s, %%minus_inf, %%pr : f32" % masks,
                                  "%m = arith.maximumf %acc, %v : f32"], "%m")
            sel = e.generic("%s_sel%d" % (p, j), ["#id", "#tok"] + ["#tok"] * (j + 1),
                            ["parallel", "reduction"], [(probs, te), (g, ty([T]))] + prev,
                            (e.filled_i32([T], E), ty([T], "i32")),
                            ["pr", "m"] + ["s%d" % i for i in range(j)] + ["acc"],
                            # ueq: a NaN row (a NaN token embedding) still
                            # selects an expert, so every gather stays in
                            # range and the loss reports the NaN.
                            head + ["%is_max = arith.cmpf ueq, %pr, %m : f32",
                                    "%%open = arith.xori %s, %%true : i1" % masks if j else "%open = arith.constant true",
                                    "%cand = arith.andi %is_max, %open : i1",
                                    "%lower = arith.cmpi slt, %ei, %acc : i32",
                                    "%take = arith.andi %cand, %lower : i1",
                                    "%r = arith.select %take, %ei, %acc : i32"], "%r")
            sels.append(sel)
            gates.append(g)

        e.section("block %d: slots: choice j of token t takes the next free slot of its expert, "
                  "first choices before second ones, in token order; slot ≥ %d: dropped" % (l, C))
        tt = ["affine_map<(t, u) -> (u)>", "affine_map<(t, u) -> (t)>"]
        counts, poss = [], []
        for j in range(K):
            sv = ty([T], "i32")
            before = e.generic("%s_before%d" % (p, j), tt + [tt[1]], ["parallel", "reduction"],
                               [(sels[j], sv), (sels[j], sv)], (e.filled_i32([T], 0), sv),
                               ["other", "mine", "acc"],
                               ["%t = linalg.index 0 : index", "%u = linalg.index 1 : index",
                                "%earlier = arith.cmpi ult, %u, %t : index",
                                "%same = arith.cmpi eq, %other, %mine : i32",
                                "%hit = arith.andi %earlier, %same : i1",
                                "%inc = arith.extui %hit : i1 to i32", "%n = arith.addi %acc, %inc : i32"], "%n")
            body, last = [], "%b"
            for i, cnt in enumerate(counts):
                body += ["%%si%d = arith.index_cast %%s : i32 to index" % i,
                         "%%taken%d = tensor.extract %s[%%si%d] : %s" % (i, cnt, i, ty([E], "i32")),
                         "%%pos%d = arith.addi %s, %%taken%d : i32" % (i + 1, last, i)]
                last = "%%pos%d" % (i + 1)
            pos = e.generic("%s_pos%d" % (p, j), ["#vec", "#vec", "#vec"], ["parallel"],
                            [(before, sv), (sels[j], sv)], (e.filled_i32([T], 0), sv), ["b", "s", "out"],
                            body, last)
            poss.append(pos)
            cnt = e.generic("%s_count%d" % (p, j), ["affine_map<(x, t) -> (t)>", "affine_map<(x, t) -> (x)>"],
                            ["parallel", "reduction"], [(sels[j], sv)], (e.filled_i32([E], 0), ty([E], "i32")),
                            ["s", "acc"],
                            ["%x = linalg.index 0 : index", "%xi = arith.index_cast %x : index to i32",
                             "%hit = arith.cmpi eq, %s, %xi : i32", "%inc = arith.extui %hit : i1 to i32",
                             "%n = arith.addi %acc, %inc : i32"], "%n")
            counts.append(cnt)
        # The slot table: the token (+1; 0: empty) and the gate in each slot.
        ect = ["affine_map<(x, c, t) -> (t)>"] * (3 * K) + ["affine_map<(x, c, t) -> (x, c)>"]
        routing = []
        for j in range(K):
            routing += [(sels[j], ty([T], "i32")), (poss[j], ty([T], "i32")), (gates[j], ty([T]))]
        names = []
        for j in range(K):
            names += ["s%d" % j, "q%d" % j, "g%d" % j]
        hits = ["%x = linalg.index 0 : index", "%xi = arith.index_cast %x : index to i32",
                "%c = linalg.index 1 : index", "%ci = arith.index_cast %c : index to i32",
                "%t = linalg.index 2 : index"]
        for j in range(K):
            hits += ["%%e%d = arith.cmpi eq, %%s%d, %%xi : i32" % (j, j),
                     "%%p%d = arith.cmpi eq, %%q%d, %%ci : i32" % (j, j),
                     "%%hit%d = arith.andi %%e%d, %%p%d : i1" % (j, j, j)]
        tok_body = hits + ["%t1 = arith.index_cast %t : index to i32", "%tp1 = arith.addi %t1, %c1_i32 : i32"]
        last = "%acc"
        for j in range(K):
            tok_body.append("%%add%d = arith.select %%hit%d, %%tp1, %%c0_i32 : i32" % (j, j))
            tok_body.append("%%sum%d = arith.addi %s, %%add%d : i32" % (j, last, j))
            last = "%%sum%d" % j
        slot_tok = e.generic(p + "_slot_token", ect, ["parallel", "parallel", "reduction"], routing,
                             (e.filled_i32([E, C], 0), ty([E, C], "i32")), names + ["acc"], tok_body, last)
        gate_body = list(hits)
        last = "%acc"
        for j in range(K):
            gate_body.append("%%add%d = arith.select %%hit%d, %%g%d, %%zero : f32" % (j, j, j))
            gate_body.append("%%sum%d = arith.addf %s, %%add%d : f32" % (j, last, j))
            last = "%%sum%d" % j
        slot_gate = e.generic(p + "_slot_gate", ect, ["parallel", "parallel", "reduction"], routing,
                              (e.zeros([E, C]), ty([E, C])), names + ["acc"], gate_body, last)

        e.section("block %d: dispatch, Xe[e, c] = Hn[token in slot (e, c)] (zeros in empty slots)" % l)
        ecd = ["affine_map<(x, c, d) -> (x, c)>", "#id3"]
        xe = e.generic(p + "_xe", ecd, ["parallel"] * 3, [(slot_tok, ty([E, C], "i32"))],
                       (e.empty([E, C, D]), ty([E, C, D])), ["tp1", "out"],
                       ["%full = arith.cmpi sgt, %tp1, %c0_i32 : i32", "%t1 = arith.subi %tp1, %c1_i32 : i32",
                        "%tg = arith.select %full, %t1, %c0_i32 : i32",
                        "%row = arith.index_cast %tg : i32 to index", "%d = linalg.index 2 : index",
                        "%%v = tensor.extract %s[%%row, %%d] : %s" % (hn, ty([T, D])),
                        "%r = arith.select %full, %v, %zero : f32"], "%r")
        e.section("block %d: experts, Ye = gelu(Xe · W1ᵀ) · W2ᵀ per expert" % l)
        e.contraction("fprop", "Ue = Xe · W1ᵀ per expert (block %d; batched over the experts)" % l, W("w1"))
        ue = e.expert_matmul(p + "_ue", xe, P("w1"), [E, C, D], [E, F, D], [E, C, F], transpose_b=True)
        ge = e.generic(p + "_ge", ["#id3", "#id3"], ["parallel"] * 3, [(ue, ty([E, C, F]))],
                       (e.empty([E, C, F]), ty([E, C, F])), ["z", "out"], self.gelu_body(False), "%gz")
        e.contraction("fprop", "Ye = Ge · W2ᵀ per expert (block %d)" % l, W("w2"))
        ye = e.expert_matmul(p + "_ye", ge, P("w2"), [E, C, F], [E, D, F], [E, C, D], transpose_b=True)
        e.section("block %d: combine, out[t] = Σ_j gate_j[t] · Ye[expert_j[t], slot_j[t]] (kept choices)" % l)
        mo = self.gather_choices(p + "_out", ye, sels, poss, gates)
        return mo, dict(probs=probs, sels=sels, poss=poss, gates=gates, slot_tok=slot_tok,
                        slot_gate=slot_gate, xe=xe, ue=ue, ge=ge, ye=ye)

    def gather_choices(self, name, table, sels, poss, gates=None):
        """out[t, d] = Σ_j [slot_j[t] < C] · gate_j[t] · table[expert_j[t],
        slot_j[t], d] for a table [E, C, D] (gates None: 1)."""
        c, e = self.cfg, self.e
        T, D, E, C = c.T, c.D, c.E, c.C
        ins, args = [], []
        for j in range(len(sels)):
            ins += [(sels[j], ty([T], "i32")), (poss[j], ty([T], "i32"))]
            args += ["s%d" % j, "q%d" % j]
            if gates:
                ins.append((gates[j], ty([T])))
                args.append("g%d" % j)
        body = ["%%cap = arith.constant %d : i32" % C, "%d = linalg.index 1 : index"]
        last = "%zero"
        for j in range(len(sels)):
            body += ["%%kept%d = arith.cmpi slt, %%q%d, %%cap : i32" % (j, j),
                     "%%slot%d = arith.select %%kept%d, %%q%d, %%c0_i32 : i32" % (j, j, j),
                     "%%xpert%d = arith.index_cast %%s%d : i32 to index" % (j, j),
                     "%%cslot%d = arith.index_cast %%slot%d : i32 to index" % (j, j),
                     "%%v%d = tensor.extract %s[%%xpert%d, %%cslot%d, %%d] : %s" % (j, table, j, j, ty([E, C, D]))]
            value = "%%v%d" % j
            if gates:
                body.append("%%w%d = arith.mulf %%g%d, %%v%d : f32" % (j, j, j))
                value = "%%w%d" % j
            body += ["%%term%d = arith.select %%kept%d, %s, %%zero : f32" % (j, j, value),
                     "%%sum%d = arith.addf %s, %%term%d : f32" % (j, last, j)]
            last = "%%sum%d" % j
        return e.generic(name, ["#tok"] * len(ins) + ["#id"], ["parallel", "parallel"], ins,
                         (e.empty([T, D]), ty([T, D])), args + ["out"], body, last)

    def moe_backward(self, l, dy, s):
        """The gradient of the MoE MLP of block l given dY [T, D] of its
        output: returns dHn and the gradients of Wr, W1 and W2."""
        c, e = self.cfg, self.e
        T, D, F, E, K, C = c.T, c.D, c.F, c.E, c.K, c.C
        p = "l%d_moe" % l
        P = lambda n: "%%l%d_%s" % (l, n)  # noqa: E731
        W = lambda n: (c.index("l%d_%s" % (l, n)), "l%d_%s" % (l, n))  # noqa: E731
        te = ty([T, E])
        e.section("block %d: MoE backward: dYe[e, c] = gate · dY[token], dgate[e, c] = <dY[token], Ye[e, c]>" % l)
        ecd = ["affine_map<(x, c, d) -> (x, c)>", "affine_map<(x, c, d) -> (x, c)>", "#id3"]
        fetch = ["%full = arith.cmpi sgt, %tp1, %c0_i32 : i32", "%t1 = arith.subi %tp1, %c1_i32 : i32",
                 "%tg = arith.select %full, %t1, %c0_i32 : i32", "%row = arith.index_cast %tg : i32 to index",
                 "%d = linalg.index 2 : index",
                 "%%dy = tensor.extract %s[%%row, %%d] : %s" % (dy, ty([T, D]))]
        dye = e.generic(p + "_dye", ecd, ["parallel"] * 3,
                        [(s["slot_tok"], ty([E, C], "i32")), (s["slot_gate"], ty([E, C]))],
                        (e.empty([E, C, D]), ty([E, C, D])), ["tp1", "g", "out"],
                        fetch + ["%gdy = arith.mulf %g, %dy : f32", "%r = arith.select %full, %gdy, %zero : f32"],
                        "%r")
        dgate = e.generic(p + "_dslot_gate", ["affine_map<(x, c, d) -> (x, c)>", "#id3",
                                              "affine_map<(x, c, d) -> (x, c)>"],
                          ["parallel", "parallel", "reduction"],
                          [(s["slot_tok"], ty([E, C], "i32")), (s["ye"], ty([E, C, D]))],
                          (e.zeros([E, C]), ty([E, C])), ["tp1", "y", "acc"],
                          fetch + ["%prod = arith.mulf %dy, %y : f32", "%add = arith.select %full, %prod, %zero : f32",
                                   "%r = arith.addf %acc, %add : f32"], "%r")
        e.section("block %d: experts backward" % l)
        e.contraction("wgrad", "dW2 = dYeᵀ · Ge per expert (block %d; over the slots)" % l, W("w2"))
        dw2 = e.expert_matmul(p + "_dw2", dye, s["ge"], [E, C, D], [E, C, F], [E, D, F], transpose_a=True)
        e.contraction("dgrad", "dGe = dYe · W2 per expert (block %d)" % l, W("w2"))
        dge = e.expert_matmul(p + "_dge", dye, P("w2"), [E, C, D], [E, D, F], [E, C, F])
        e.emit("// dUe = dGe ⊙ gelu'(Ue)")
        due = e.generic(p + "_due", ["#id3", "#id3", "#id3"], ["parallel"] * 3,
                        [(dge, ty([E, C, F])), (s["ue"], ty([E, C, F]))], (e.empty([E, C, F]), ty([E, C, F])),
                        ["g", "z", "out"], self.gelu_body(True), "%dz")
        e.contraction("wgrad", "dW1 = dUeᵀ · Xe per expert (block %d; over the slots)" % l, W("w1"))
        dw1 = e.expert_matmul(p + "_dw1", due, s["xe"], [E, C, F], [E, C, D], [E, F, D], transpose_a=True)
        e.contraction("dgrad", "dXe = dUe · W1 per expert (block %d)" % l, W("w1"))
        dxe = e.expert_matmul(p + "_dxe", due, P("w1"), [E, C, F], [E, F, D], [E, C, D])
        e.section("block %d: dHn from the experts: each kept choice's slot of dXe" % l)
        dhn_experts = self.gather_choices(p + "_dhn_experts", dxe, s["sels"], s["poss"])
        e.section("block %d: router backward: dP[t, expert_j[t]] = dgate of its slot; softmax backward" % l)
        ins, args = [], []
        body = ["%%cap = arith.constant %d : i32" % C, "%e = linalg.index 1 : index",
                "%ei = arith.index_cast %e : index to i32"]
        last = "%zero"
        for j in range(K):
            ins += [(s["sels"][j], ty([T], "i32")), (s["poss"][j], ty([T], "i32"))]
            args += ["s%d" % j, "q%d" % j]
            body += ["%%kept%d = arith.cmpi slt, %%q%d, %%cap : i32" % (j, j),
                     "%%mine%d = arith.cmpi eq, %%s%d, %%ei : i32" % (j, j),
                     "%%use%d = arith.andi %%kept%d, %%mine%d : i1" % (j, j, j),
                     "%%slot%d = arith.select %%kept%d, %%q%d, %%c0_i32 : i32" % (j, j, j),
                     "%%xpert%d = arith.index_cast %%s%d : i32 to index" % (j, j),
                     "%%cslot%d = arith.index_cast %%slot%d : i32 to index" % (j, j),
                     "%%dg%d = tensor.extract %s[%%xpert%d, %%cslot%d] : %s" % (j, dgate, j, j, ty([E, C])),
                     "%%term%d = arith.select %%use%d, %%dg%d, %%zero : f32" % (j, j, j),
                     "%%sum%d = arith.addf %s, %%term%d : f32" % (j, last, j)]
            last = "%%sum%d" % j
        dprobs = e.generic(p + "_dprobs", ["#tok"] * len(ins) + ["#id"], ["parallel", "parallel"], ins,
                           (e.empty([T, E]), te), args + ["out"], body, last)
        e.contraction("other", "Σ_e P ⊙ dP (block %d; a row-wise dot product, a contraction too)" % l)
        dot = e.generic(p + "_dp_dot_p", ["#id", "#id", "#tok"], ["parallel", "reduction"],
                        [(s["probs"], te), (dprobs, te)], (e.zeros([T]), ty([T])), ["pr", "dp", "acc"],
                        ["%prod = arith.mulf %pr, %dp : f32", "%r = arith.addf %acc, %prod : f32"], "%r")
        dlogits = e.generic(p + "_dlogits", ["#id", "#id", "#tok", "#id"], ["parallel", "parallel"],
                            [(s["probs"], te), (dprobs, te), (dot, ty([T]))], (e.empty([T, E]), te),
                            ["pr", "dp", "dot", "out"],
                            ["%centered = arith.subf %dp, %dot : f32", "%dl = arith.mulf %pr, %centered : f32"],
                            "%dl")
        e.contraction("wgrad", "dWr = dlogitsᵀ · Hn (block %d; indexing maps)" % l, W("wr"))
        dwr = e.matmul(p + "_dwr", dlogits, s["hn"], [T, E], [T, D], [E, D], maps=["#a_km", "#b_kn", "#c_mn"])
        e.contraction("dgrad", "dHn = dHn(experts) + dlogits · Wr (block %d; accumulates)" % l, W("wr"))
        dhn = e.matmul(p + "_dhn", dlogits, P("wr"), [T, E], [E, D], [T, D], init=dhn_experts)
        return dhn, {"wr": dwr, "w1": dw1, "w2": dw2}

    # -- backward ---------------------------------------------------------- #

    def block_backward(self, l, dy, s):
        """dy: the gradient of the block's output X'. Returns dX."""
        c, e = self.cfg, self.e
        T, D, F, BH, S, DH = c.T, c.D, c.F, c.BH, c.S, c.DH
        p = "l%d" % l
        P = lambda n: "%" + p + "_" + n  # noqa: E731
        W = lambda n: (c.index(p + "_" + n), p + "_" + n)  # noqa: E731
        e.emit("")
        e.emit("// ==================== decoder block %d: backward ==================== //" % l)
        moe_grads = {}
        if c.E:
            dhn, moe_grads = self.moe_backward(l, dy, s)
        else:
            e.section("block %d: MLP (dY is the gradient of X' = H + G · W2ᵀ)" % l)
            e.contraction("wgrad", "dW2 = dYᵀ · G (block %d; over the tokens, by the indexing maps)" % l,
                          W("w2"))
            dw2 = e.matmul(p + "_dw2", dy, s["gu"], [T, D], [T, F], [D, F], maps=["#a_km", "#b_kn", "#c_mn"])
            e.contraction("dgrad", "dG = dY · W2 (block %d)" % l, W("w2"))
            dgu = e.matmul(p + "_dgu", dy, P("w2"), [T, D], [D, F], [T, F])
            e.emit("// dU = dG ⊙ gelu'(U)")
            du = e.generic(p + "_du", ["#id", "#id", "#id"], ["parallel", "parallel"],
                           [(dgu, ty([T, F])), (s["u"], ty([T, F]))], (e.empty([T, F]), ty([T, F])),
                           ["g", "z", "out"], self.gelu_body(True), "%dz")
            e.contraction("wgrad", "dW1 = dUᵀ · Hn (block %d; explicit transpose of dU)" % l, W("w1"))
            du_t = e.transpose(p + "_du_t", du, [T, F], [1, 0])
            dw1 = e.matmul(p + "_dw1", du_t, s["hn"], [F, T], [T, D], [F, D])
            e.contraction("dgrad", "dHn = dU · W1 (block %d)" % l, W("w1"))
            dhn = e.matmul(p + "_dhn", du, P("w1"), [T, F], [F, D], [T, D])
            moe_grads = {"w1": dw1, "w2": dw2}
        e.section("block %d: RMSNorm 2 backward, dH = dY (residual) + ∂(Hn)/∂H · dHn" % l)
        dg2, dh = self.rmsnorm_backward(p + "_norm2", p + "_dg2", p + "_dh", dhn, s["h"], s["r2"], P("g2"), dy)

        e.section("block %d: output projection" % l)
        e.contraction("wgrad", "dWo = dHᵀ · O (block %d; indexing maps)" % l, W("wo"))
        dwo = e.matmul(p + "_dwo", dh, s["o"], [T, D], [T, D], [D, D], maps=["#a_km", "#b_kn", "#c_mn"])
        e.contraction("dgrad", "dO = dH · Wo (block %d)" % l, W("wo"))
        do = e.matmul(p + "_do", dh, P("wo"), [T, D], [D, D], [T, D])

        e.section("block %d: attention backward" % l)
        doh = self.split_heads(p + "_do_heads", do)
        e.contraction("other", "dP = dO_h · V_hᵀ (block %d)" % l)
        dpr = e.batch_matmul(p + "_dprobs", doh, s["vht"], [BH, S, DH], [BH, DH, S], [BH, S, S])
        e.contraction("other", "dV_h = Pᵀ · dO_h (block %d)" % l)
        pr_t = e.transpose(p + "_probs_t", s["pr"], [BH, S, S], [0, 2, 1])
        dvh = e.batch_matmul(p + "_dv_heads", pr_t, doh, [BH, S, S], [BH, S, DH], [BH, S, DH])
        e.emit("// Softmax backward, with the 1/√dh of S folded in: the gradient of Q_h · K_hᵀ")
        e.emit("// is dS = P ⊙ (dP − Σ_keys dP ⊙ P) / √dh (zero where masked, as P is).")
        e.contraction("other", "Σ_keys dP ⊙ P (block %d; a row-wise dot product, a contraction too)" % l)
        dot = e.generic(p + "_dp_dot_p", ["#id3", "#id3", "#query"], ["parallel", "parallel", "reduction"],
                        [(dpr, ty([BH, S, S])), (s["pr"], ty([BH, S, S]))], (e.zeros([BH, S]), ty([BH, S])),
                        ["dp", "pr", "acc"], ["%dpp = arith.mulf %dp, %pr : f32", "%s = arith.addf %acc, %dpp : f32"],
                        "%s")
        ds = e.generic(p + "_dscores", ["#id3", "#id3", "#query", "#id3"], ["parallel"] * 3,
                       [(dpr, ty([BH, S, S])), (s["pr"], ty([BH, S, S])), (dot, ty([BH, S]))],
                       (e.empty([BH, S, S]), ty([BH, S, S])), ["dp", "pr", "dot", "out"],
                       ["%centered = arith.subf %dp, %dot : f32", "%ds = arith.mulf %pr, %centered : f32",
                        "%ds_scaled = arith.mulf %ds, %inv_sqrt_dh : f32"], "%ds_scaled")
        e.contraction("other", "dQ_h = dS · K_h (block %d)" % l)
        dqh = e.batch_matmul(p + "_dq_heads", ds, s["kh"], [BH, S, S], [BH, S, DH], [BH, S, DH])
        e.contraction("other", "dK_h = dSᵀ · Q_h (block %d)" % l)
        ds_t = e.transpose(p + "_dscores_t", ds, [BH, S, S], [0, 2, 1])
        dkh = e.batch_matmul(p + "_dk_heads", ds_t, s["qh"], [BH, S, S], [BH, S, DH], [BH, S, DH])
        e.section("block %d: merge the heads of dQ, dK, dV" % l)
        dq = self.merge_heads(p + "_dq", dqh)
        dk = self.merge_heads(p + "_dk", dkh)
        dv = self.merge_heads(p + "_dv", dvh)

        e.section("block %d: Q, K, V projections" % l)
        e.contraction("wgrad", "dWq = dQᵀ · Xn (block %d; indexing maps)" % l, W("wq"))
        dwq = e.matmul(p + "_dwq", dq, s["xn"], [T, D], [T, D], [D, D], maps=["#a_km", "#b_kn", "#c_mn"])
        e.contraction("wgrad", "dWk = dKᵀ · Xn (block %d; indexing maps)" % l, W("wk"))
        dwk = e.matmul(p + "_dwk", dk, s["xn"], [T, D], [T, D], [D, D], maps=["#a_km", "#b_kn", "#c_mn"])
        e.contraction("wgrad", "dWv = dVᵀ · Xn (block %d; explicit transpose of dV)" % l, W("wv"))
        dv_t = e.transpose(p + "_dv_t", dv, [T, D], [1, 0])
        dwv = e.matmul(p + "_dwv", dv_t, s["xn"], [D, T], [T, D], [D, D])
        e.contraction("dgrad", "dXn = dQ · Wq (block %d)" % l, W("wq"))
        dxq = e.matmul(p + "_dxn_q", dq, P("wq"), [T, D], [D, D], [T, D])
        e.contraction("dgrad", "dXn += dK · Wk (block %d; accumulates into the previous result)" % l, W("wk"))
        dxqk = e.matmul(p + "_dxn_qk", dk, P("wk"), [T, D], [D, D], [T, D], init=dxq)
        e.contraction("dgrad", "dXn += dV · Wv (block %d; accumulates into the previous result)" % l, W("wv"))
        dxn = e.matmul(p + "_dxn", dv, P("wv"), [T, D], [D, D], [T, D], init=dxqk)
        e.section("block %d: RMSNorm 1 backward, dX = dH (residual) + ∂(Xn)/∂X · dXn" % l)
        dg1, dx = self.rmsnorm_backward(p + "_norm1", p + "_dg1", p + "_dx", dxn, s["x"], s["r1"], P("g1"), dh)
        grads = {"g1": dg1, "wq": dwq, "wk": dwk, "wv": dwv, "wo": dwo, "g2": dg2}
        grads.update(moe_grads)
        return dx, {p + "_" + k: v for k, v in grads.items()}

    # -- the whole step ---------------------------------------------------- #

    def build(self):
        c, e = self.cfg, self.e
        T, D, V, S, B = c.T, c.D, c.V, c.S, c.B
        e.const("zero", 0.0)
        e.const("half", 0.5)
        e.const("one", 1.0)
        e.const("three", 3.0)
        e.consts.append("  %minus_inf = arith.constant 0xFF800000 : f32")
        e.const("norm_eps", 1e-5)
        e.const("inv_d", 1.0 / D, "1/D = 1/%d" % D)
        e.const("inv_sqrt_dh", 1.0 / math.sqrt(c.DH), "1/√dh = 1/√%d" % c.DH)
        e.const("inv_t", 1.0 / T, "1/T = 1/%d: the loss is a mean over the tokens" % T)
        e.const("sqrt_2_over_pi", 0.7978845608)
        e.const("gelu_cubic", 0.044715)

        e.emit("// ===================================================================== //")
        e.emit("// Forward")
        e.emit("// ===================================================================== //")
        e.section("embedding: X0[b, s] = wte[tokens[b, s]] + wpe[s]")
        e.emit("// A gather (tensor.extract), as torch-mlir lowers aten.embedding.")
        e.emit("// A token outside [0, %d) reads row 0 and embeds as NaN: the gather never" % V)
        e.emit("// leaves the table, and the loss of such a batch is NaN ([IDX1]).")
        x0b = e.generic("x0_bsd", ["#bs", "#sd", "#bsd"], ["parallel"] * 3,
                        [("%tokens", ty([B, S], "i32")), ("%wpe", ty([S, D]))],
                        (e.empty([B, S, D]), ty([B, S, D])), ["token", "pos", "out"],
                        ["%row = arith.index_cast %token : i32 to index",
                         "%%vocab = arith.constant %d : index" % V,
                         "%in_vocab = arith.cmpi ult, %row, %vocab : index",
                         "%row0 = arith.constant 0 : index",
                         "%safe_row = arith.select %in_vocab, %row, %row0 : index",
                         "%d = linalg.index 2 : index",
                         "%%looked_up = tensor.extract %%wte[%%safe_row, %%d] : %s" % ty([V, D]),
                         "%nan = arith.constant 0x7FC00000 : f32",
                         "%tok_emb = arith.select %in_vocab, %looked_up, %nan : f32",
                         "%emb = arith.addf %tok_emb, %pos : f32"], "%emb")
        x = e.collapse("x0", x0b, [B, S, D], [[0, 1], [2]])

        saved = []
        for l in range(c.L):
            x, s = self.block_forward(l, x)
            saved.append(s)

        e.emit("")
        e.emit("// ==================== final norm, LM head, loss ==================== //")
        rf, xf = self.rmsnorm("final RMSNorm: Xf = X · rf ⊙ gf", "final_norm", "rf", "xf", x, "%gf")
        e.section("LM head: logits = Xf · Wheadᵀ")
        e.contraction("fprop", "logits = Xf · Wheadᵀ (indexing maps)", (c.index("whead"), "whead"))
        logits = e.matmul("logits", xf, "%whead", [T, D], [V, D], [T, V], maps=["#a_mk", "#b_nk", "#c_mn"])
        e.section("loss = mean_t(logsumexp_v(logits[t]) − logits[t, targets[t]]), max-subtracted")
        tg = e.collapse("targets_flat", "%targets", [B, S], [[0, 1]], "i32")
        lmax = e.generic("logits_max", ["#id", "#tok"], ["parallel", "reduction"], [(logits, ty([T, V]))],
                         (e.filled([T], "minus_inf", "minus_infs"), ty([T])), ["l", "acc"],
                         ["%m = arith.maximumf %acc, %l : f32"], "%m")
        lsum = e.generic("logits_sumexp", ["#id", "#tok", "#tok"], ["parallel", "reduction"],
                         [(logits, ty([T, V])), (lmax, ty([T]))], (e.zeros([T]), ty([T])), ["l", "m", "acc"],
                         ["%shifted = arith.subf %l, %m : f32", "%ex = math.exp %shifted : f32",
                          "%s = arith.addf %acc, %ex : f32"], "%s")
        e.emit("// The target's logit, gathered (torch-mlir lowers the gather of nll_loss so);")
        e.emit("// a target outside [0, %d) reads column 0 and gives NaN ([IDX1])." % V)
        tl = e.generic("target_logit", ["#vec", "#vec"], ["parallel"], [(tg, ty([T], "i32"))],
                       (e.empty([T]), ty([T])), ["target", "out"],
                       ["%col = arith.index_cast %target : i32 to index",
                        "%%vocab = arith.constant %d : index" % V,
                        "%in_vocab = arith.cmpi ult, %col, %vocab : index",
                        "%col0 = arith.constant 0 : index",
                        "%safe_col = arith.select %in_vocab, %col, %col0 : index",
                        "%t = linalg.index 0 : index",
                        "%%gathered = tensor.extract %s[%%t, %%safe_col] : %s" % (logits, ty([T, V])),
                        "%nan = arith.constant 0x7FC00000 : f32",
                        "%tl = arith.select %in_vocab, %gathered, %nan : f32"], "%tl")
        loss_init = "%loss_zero"
        e.prologue.append("  %loss_init = tensor.empty() : tensor<f32>")
        e.prologue.append("  %loss_zero = linalg.fill ins(%zero : f32) outs(%loss_init : tensor<f32>) -> tensor<f32>")
        loss = e.generic("loss", ["#vec", "#vec", "#vec", "#vec_scalar"], ["reduction"],
                         [(lmax, ty([T])), (lsum, ty([T])), (tl, ty([T]))], (loss_init, "tensor<f32>"),
                         ["m", "se", "tl", "acc"],
                         ["%log_se = math.log %se : f32", "%lse = arith.addf %m, %log_se : f32",
                          "%nll = arith.subf %lse, %tl : f32", "%term = arith.mulf %nll, %inv_t : f32",
                          "%s = arith.addf %acc, %term : f32"], "%s")
        if self.forward_only:
            e.emit("")
            e.emit("return %s : tensor<f32>" % loss)
            return c.params(), ["tensor<f32>"]

        e.emit("")
        e.emit("// ===================================================================== //")
        e.emit("// Backward")
        e.emit("// ===================================================================== //")
        e.section("loss: dlogits = (softmax(logits) − onehot(targets)) / T")
        dlogits = e.generic("dlogits", ["#id", "#tok", "#tok", "#tok", "#id"], ["parallel", "parallel"],
                            [(logits, ty([T, V])), (lmax, ty([T])), (lsum, ty([T])), (tg, ty([T], "i32"))],
                            (e.empty([T, V]), ty([T, V])), ["l", "m", "se", "target", "out"],
                            ["%shifted = arith.subf %l, %m : f32", "%ex = math.exp %shifted : f32",
                             "%prob = arith.divf %ex, %se : f32", "%v = linalg.index 1 : index",
                             "%col = arith.index_cast %target : i32 to index",
                             "%is_target = arith.cmpi eq, %v, %col : index",
                             "%onehot = arith.select %is_target, %one, %zero : f32",
                             "%dl = arith.subf %prob, %onehot : f32", "%dl_mean = arith.mulf %dl, %inv_t : f32"],
                            "%dl_mean")
        e.section("LM head")
        e.contraction("wgrad", "dWhead = dlogitsᵀ · Xf (indexing maps)", (c.index("whead"), "whead"))
        dwhead = e.matmul("dwhead", dlogits, xf, [T, V], [T, D], [V, D], maps=["#a_km", "#b_kn", "#c_mn"])
        e.contraction("dgrad", "dXf = dlogits · Whead", (c.index("whead"), "whead"))
        dxf = e.matmul("dxf", dlogits, "%whead", [T, V], [V, D], [T, D])
        e.section("final RMSNorm backward")
        dgf, dx = self.rmsnorm_backward("final_norm", "dgf", "final_dx", dxf, x, rf, "%gf", None)

        grads = {"gf": dgf, "whead": dwhead}
        for l in reversed(range(c.L)):
            dx, g = self.block_backward(l, dx, saved[l])
            grads.update(g)

        e.emit("")
        e.emit("// ==================== embedding backward ==================== //")
        e.emit("// Neither is a GEMM: a sum over the batch and a scatter-add over the tokens.")
        dx0 = e.expand("dx0_bsd", dx, [T, D], [[0, 1], [2]], [B, S, D])
        e.emit("// dwpe[s] = Σ_b dX0[b, s]")
        dwpe = e.generic("dwpe", ["#sdb_in", "#sdb_out"], ["parallel", "parallel", "reduction"],
                         [(dx0, ty([B, S, D]))], (e.zeros([S, D]), ty([S, D])), ["g", "acc"],
                         ["%s = arith.addf %acc, %g : f32"], "%s")
        e.emit("// dwte[v] = Σ_{t : tokens[t] = v} dX0[t]")
        tk = e.collapse("tokens_flat", "%tokens", [B, S], [[0, 1]], "i32")
        dwte = e.generic("dwte", ["#vdt_tok", "#vdt_grad", "#vdt_out"], ["parallel", "parallel", "reduction"],
                         [(tk, ty([T], "i32")), (dx, ty([T, D]))], (e.zeros([V, D]), ty([V, D])),
                         ["token", "g", "acc"],
                         ["%v = linalg.index 0 : index", "%row = arith.index_cast %token : i32 to index",
                          "%hit = arith.cmpi eq, %row, %v : index", "%sum = arith.addf %acc, %g : f32",
                          "%s = arith.select %hit, %sum, %acc : f32"], "%s")
        grads.update(wte=dwte, wpe=dwpe)

        params = c.params()
        rets = [loss] + [grads[n] for n, _ in params]
        rtypes = ["tensor<f32>"] + [ty(s) for _, s in params]
        e.emit("")
        e.emit("return " + wrap_types(rets, "    ", 90).lstrip())
        e.emit("    : " + wrap_types(rtypes, "      ").lstrip())
        return params, rtypes

    def function(self, name):
        """The lines of func.func @name: the step's arguments, what build()
        returns."""
        c, e = self.cfg, self.e
        params, rtypes = self.build()
        # Each layer's weights carry their decoder block ([BLK1]), which the
        # recipes' keep-first-blocks / keep-last-blocks count.
        # The routers of MoE blocks are marked ([MOE1]): recipes keep their
        # GEMMs in high precision by default.
        def attrs(name):
            layer = re.match(r"l(\d+)_", name)
            marks = "fp4train.param"
            if layer:
                marks += ", fp4train.block = %s : i64" % layer.group(1)
            if name.endswith("_wr"):
                marks += ", fp4train.router"
            return "{%s}" % marks
        args = ["%%%s: %s %s" % (n, ty(s), attrs(n)) for n, s in params]
        args += ["%%tokens: %s" % ty([c.B, c.S], "i32"), "%%targets: %s" % ty([c.B, c.S], "i32"), "%step: i64"]
        out = ["func.func @%s(" % name]
        out.append(",\n".join("    " + a for a in args) + ")")
        out.append("    -> (" + wrap_types(rtypes, "        ").lstrip() + ") {")
        out += e.consts
        out.append("")
        out += e.prologue
        out.append("")
        out += e.body
        out.append("}")
        return out

    def text(self, argv):
        c, e = self.cfg, self.e
        train = self.function("train_step")
        out = []
        cmd = " ".join(["examples/gpt_train_step.py"] + argv)
        out.append("// Generated by `%s`: do not edit, regenerate." % cmd)
        out.append("//")
        out += ["// " + line if line else "//" for line in header(c, e.contractions).split("\n")]
        out.append("")
        out.append(MAPS)
        out += train
        out.append("")
        out.append("// The forward and loss of @train_step alone, for held-out losses (fp4-train")
        out.append("// calls it instead of the whole step): the same arguments, the loss only.")
        out += Step(c, forward_only=True).function("eval_loss")
        return "\n".join(out) + "\n"


def arg_summary(c):
    n = len(c.params())
    names = ("g1", "wq", "wk", "wv", "wo", "g2") + (("wr", "w1", "w2") if c.E else ("w1", "w2"))
    per = ", ".join("%d+%dl %s" % (2 + i, len(names), name) for i, name in enumerate(names))
    return ("0 wte, 1 wpe;\nblock l: %s;\n%d gf, %d whead; %d tokens, %d targets, %d step"
            % (per, n - 2, n - 1, n, n + 1, n + 2))


def header(c, contractions):
    roles = {}
    for role, _ in contractions:
        roles[role] = roles.get(role, 0) + 1
    lines = """\
One training step (forward, loss and full backward) of a decoder-only,
character-level GPT in linalg on tensors. PyTorch layout: every weight is
W : [out, in] and a linear layer computes Y = X · Wᵀ.

  batch B = {B}, sequence length S = {S} (T = B·S = {T} token rows),
  vocabulary V = {V}, model width D = {D}, N = {L} blocks,
  H = {H} heads of dh = {DH}, MLP width F = {F}

  X0 = wte[tokens] + wpe[position]        wte : [V, D], wpe : [S, D]   (a gather)
  per block (pre-norm):
    Xn = rmsnorm(X) ⊙ g1                   g1 : [D]
    Q = Xn · Wqᵀ,  K = Xn · Wkᵀ,  V = Xn · Wvᵀ     Wq, Wk, Wv : [D, D]
    per sequence and head (the B·H batch of the batch_matmuls):
      S = Q_h · K_hᵀ / √dh, causal mask (key j > query i: −inf),
      P = softmax(S) along the keys,  O_h = P · V_h
    H = X + O · Woᵀ                        Wo : [D, D]
    X' = H + gelu(rmsnorm(H) ⊙ g2 · W1ᵀ) · W2ᵀ     g2 : [D], W1 : [F, D], W2 : [D, F]
  Xf = rmsnorm(X_N) ⊙ gf,  logits = Xf · Wheadᵀ     gf : [D], Whead : [V, D] (not tied)
  loss = mean_t (logsumexp(logits[t]) − logits[t, targets[t]])   (natural log)

rmsnorm(x) = x · r, r = 1/√(mean_d(x²) + 1e-5), per token; gelu is the tanh
approximation. The step returns the loss and the gradient of every parameter,
in argument order, each with its parameter's shape. Tokens and targets are
byte values in [0, V); an id outside it is guarded (it reads row or column 0
and makes the value NaN, so the loss is NaN, never a read out of bounds).
The embedding lookup (tensor.extract in a linalg.generic) and its backward
(a scatter-add: a reduction over the tokens with arith.cmpi/arith.select)
are not contractions.

Arguments: {args}.
%step is not used by the arithmetic: fp4train-quantize-matmuls derives its
stochastic-rounding seeds and random Hadamard signs from it.

The {n} contractions in program order ({counts}),
with their expected roles and [the weight's argument index and name]. The
LM head is the last weight in program order and block 0's Wq the first, so a
recipe's keep-last / keep-first count them from there.""".format(
        B=c.B, S=c.S, T=c.T, V=c.V, D=c.D, L=c.L, H=c.H, DH=c.DH, F=c.F, n=len(contractions),
        args=arg_summary(c),
        counts=", ".join("%d %s" % (roles[r], r) for r in ("fprop", "dgrad", "wgrad", "other") if r in roles))
    if c.E:
        lines = lines.replace(
            "    X' = H + gelu(rmsnorm(H) ⊙ g2 · W1ᵀ) · W2ᵀ     g2 : [D], W1 : [F, D], W2 : [D, F]",
            "    X' = H + moe(rmsnorm(H) ⊙ g2)                  g2 : [D]\n"
            "    moe: P = softmax(Hn · Wrᵀ), top-{K} experts per token, {C} slots per expert\n"
            "      (choices past them dropped), out[t] = Σ_kept P[t, e] · Ye[e, slot],\n"
            "      Ye = gelu(Xe · W1[e]ᵀ) · W2[e]ᵀ on the dispatched tokens Xe\n"
            "                                  Wr : [{E}, D] (a router), W1 : [{E}, F, D], W2 : [{E}, D, F]"
            .format(K=c.K, C=c.C, E=c.E))
    out = lines.split("\n")
    for role, what in contractions:
        out.append("  %-5s  %s" % ("other" if role == "other" else role.capitalize(), what))
    return "\n".join(out)


# ------------------------------------------------------------------ driver --


def token_pattern(n, seed, vocab):
    """Token t of a flattened [B, S] batch: ((37·t + 11·seed + 5)² mod 257) mod V."""
    return [((37 * t + 11 * seed + 5) ** 2 % 257) % vocab for t in range(n)]


# Parameter data: pattern(i, j; seed) = ((u² mod 97) − 48) · scale + offset,
# u = (13 + 2·seed)·i + (29 + 3·seed)·j + seed, exact in f32 (power-of-two
# scale). Returns (seed, scale exponent, offset) for every parameter.
def param_data(cfg):
    def weight_exp(fan_in):
        # pattern values have a standard deviation of ~28: scale ≈ 1/(28·√in)
        return -round(math.log2(28 * math.sqrt(fan_in)))

    out = {}
    for seed, (name, shape) in enumerate(cfg.params(), start=1):
        base = name.split("_")[-1]
        if base in ("g1", "g2", "gf"):
            out[name] = (seed, -7, 1.0)
        elif base == "wte":
            out[name] = (seed, -5, 0.0)
        elif base == "wpe":
            out[name] = (seed, -6, 0.0)
        else:
            out[name] = (seed, weight_exp(shape[-1]), 0.0)
    return out


def driver_text(cfg, argv, timed=0):
    params = cfg.params()
    data = param_data(cfg)
    lines = [
        "// Generated by `examples/gpt_train_step.py %s`: a driver for the step that"
        % " ".join(["driver"] + argv),
        "// `examples/gpt_train_step.py` writes with the same options (concatenate the",
        "// two). It runs one step on deterministic data and prints, with",
        "// printMemrefF32, the loss and every gradient, in result order; the data is",
        "// exact in f32 and `gpt_train_step.py check` recomputes it.",
        "",
        "func.func private @printMemrefF32(tensor<*xf32>)",
        "func.func private @rtclock() -> f64",
        "func.func private @printF64(f64)",
        "func.func private @printNewline()",
        "",
        """\
// ((u² mod 97) − 48) · scale + offset, u = (13 + 2·seed)·i + (29 + 3·seed)·j + seed
func.func @pattern(%rows: index, %cols: index, %seed: i64, %scale: f32, %offset: f32)
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
    %u = arith.addi %ai_bj, %seed : i64
    %u2 = arith.muli %u, %u : i64
    %r = arith.remsi %u2, %c97 : i64
    %centered = arith.subi %r, %c48 : i64
    %f = arith.sitofp %centered : i64 to f32
    %scaled = arith.mulf %f, %scale : f32
    %v = arith.addf %scaled, %offset : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %values : tensor<?x?xf32>
}

// Tokens of a flattened [rows·cols] batch: ((37·t + 11·seed + 5)² mod 257) mod vocab
func.func @token_pattern(%rows: index, %cols: index, %seed: i64, %vocab: i64)
    -> tensor<?x?xi32> {
  %c5 = arith.constant 5 : i64
  %c11 = arith.constant 11 : i64
  %c37 = arith.constant 37 : i64
  %c257 = arith.constant 257 : i64
  %cols_i = arith.index_cast %cols : index to i64
  %seed11 = arith.muli %seed, %c11 : i64
  %shift = arith.addi %seed11, %c5 : i64
  %empty = tensor.empty(%rows, %cols) : tensor<?x?xi32>
  %values = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                            iterator_types = ["parallel", "parallel"]}
      outs(%empty : tensor<?x?xi32>) {
  ^bb0(%out: i32):
    %i_idx = linalg.index 0 : index
    %j_idx = linalg.index 1 : index
    %i = arith.index_cast %i_idx : index to i64
    %j = arith.index_cast %j_idx : index to i64
    %row = arith.muli %i, %cols_i : i64
    %t = arith.addi %row, %j : i64
    %t37 = arith.muli %t, %c37 : i64
    %u = arith.addi %t37, %shift : i64
    %u2 = arith.muli %u, %u : i64
    %r = arith.remsi %u2, %c257 : i64
    %tok = arith.remsi %r, %vocab : i64
    %tok32 = arith.trunci %tok : i64 to i32
    linalg.yield %tok32 : i32
  } -> tensor<?x?xi32>
  return %values : tensor<?x?xi32>
}
""",
        "func.func @main() {",
        "  %c1 = arith.constant 1 : index",
        "  %step = arith.constant 0 : i64",
        "  %%vocab = arith.constant %d : i64" % cfg.V,
        "  %tok_seed = arith.constant 1 : i64",
        "  %tgt_seed = arith.constant 2 : i64",
    ]
    dims = sorted({d for _, s in params for d in s} | {cfg.B, cfg.S})
    for d in dims:
        lines.append("  %%n%d = arith.constant %d : index" % (d, d))
    names = []
    for name, shape in params:
        seed, exp, offset = data[name]
        lines.append("  %%%s_seed = arith.constant %d : i64" % (name, seed))
        lines.append("  %%%s_scale = arith.constant %s : f32" % (name, f32_literal(2.0**exp)))
        lines.append("  %%%s_offset = arith.constant %s : f32" % (name, f32_literal(offset)))
        rows = "%%n%d" % shape[0] if len(shape) == 2 else "%c1"
        cols = "%%n%d" % shape[-1]
        lines.append("  %%%s_d = call @pattern(%s, %s, %%%s_seed, %%%s_scale, %%%s_offset)"
                     % (name, rows, cols, name, name, name))
        lines.append("      : (index, index, i64, f32, f32) -> tensor<?x?xf32>")
        if len(shape) == 2:
            lines.append("  %%%s = tensor.cast %%%s_d : tensor<?x?xf32> to %s" % (name, name, ty(shape)))
        else:
            lines.append("  %%%s_row = tensor.cast %%%s_d : tensor<?x?xf32> to %s" % (name, name, ty([1] + list(shape))))
            lines.append("  %%%s = tensor.collapse_shape %%%s_row [[0, 1]] : %s into %s"
                         % (name, name, ty([1] + list(shape)), ty(shape)))
        names.append("%" + name)
    for which in ("tok", "tgt"):
        lines.append("  %%%s_d = call @token_pattern(%%n%d, %%n%d, %%%s_seed, %%vocab)"
                     % (which, cfg.B, cfg.S, which))
        lines.append("      : (index, index, i64, i64) -> tensor<?x?xi32>")
        lines.append("  %%%s = tensor.cast %%%s_d : tensor<?x?xi32> to %s" % (which, which, ty([cfg.B, cfg.S], "i32")))
    argtypes = [ty(s) for _, s in params] + [ty([cfg.B, cfg.S], "i32")] * 2 + ["i64"]
    rtypes = ["tensor<f32>"] + [ty(s) for _, s in params]
    results = ["%%r%d" % i for i in range(len(rtypes))]
    call = ["  %s = call @train_step(%s)" % (", ".join(results), ", ".join(names + ["%tok", "%tgt", "%step"])),
            "      : (%s)" % ", ".join(argtypes),
            "      -> (%s)" % ", ".join(rtypes)]
    # --time N: N timed steps first, each printing its wall time in seconds
    # (before the tensors, where `check` does not look).
    for n in range(timed):
        lines.append("  %%t%d_start = call @rtclock() : () -> f64" % n)
        lines += [call[0].replace("%r", "%%timed%d_r" % n)] + call[1:]
        lines.append("  %%t%d_end = call @rtclock() : () -> f64" % n)
        lines.append("  %%t%d = arith.subf %%t%d_end, %%t%d_start : f64" % (n, n, n))
        lines.append("  call @printF64(%%t%d) : (f64) -> ()" % n)
        lines.append("  call @printNewline() : () -> ()")
    lines += call
    for r, t in zip(results, rtypes):
        lines.append("  %s_u = tensor.cast %s : %s to tensor<*xf32>" % (r, r, t))
        lines.append("  call @printMemrefF32(%s_u) : (tensor<*xf32>) -> ()" % r)
    lines.append("  return")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------- check --
# Tolerance on the relative error of an f32 analytic gradient (the argument of
# test/Examples/Inputs/check_train_step.py, for a deeper graph):
#  - the f64 central differences (step FD_STEP) are accurate to ~1e-9
#    relative (truncation FD_STEP²·L'''/6, cancellation 1e-16·L/FD_STEP), so
#    the error measured is that of the f32 program;
#  - f32 rounding (u = 2^-24 ≈ 6e-8) in contractions and reductions of length
#    K ≤ max(F, T, V, D) gives at most K·u relative per step (~√K·u in
#    practice, errors being random); the backward chain through N blocks is
#    ~(6N + 4) such steps deep, each step's errors partly averaging out in the
#    next contraction: ≲ 1e-4 for the configurations used here;
#  - printMemrefF32 prints 6 significant digits: 5e-7.
# 1e-3 leaves a margin of ~10 over that bound (measured: 2e-5 on the lit test's
# configuration, 1e-4 on the default one); a wrong gradient (a missing term,
# a transposed operand, a wrong factor or sign, a misrouted scatter) is off by
# 1e-2 to 1e0.
TOLERANCE = 1e-3
# An entry's error is relative to max(|fd|, FLOOR·max|grad|), so entries that
# are tiny through cancellation (or zero: wte rows of absent tokens) are
# judged against the parameter's gradient scale.
FLOOR = 1e-2
# And never below ABS_FLOOR, for gradients that are identically zero (Wq and
# Wk when --seq is 1: softmax over one key is constant): far above the
# differences' rounding noise (~1e-16·loss/FD_STEP), far below any gradient
# that is not zero by construction.
ABS_FLOOR = 1e-8
FD_STEP = 1e-5
ENTRIES = 4  # random entries per parameter (plus the largest one)
LOSS_TOLERANCE = 1e-4


def pattern_np(np, shape, seed, exp, offset):
    # Expert weights [E, out, in] take the pattern of [E·out, in].
    rows, cols = (math.prod(shape[:-1]), shape[-1]) if len(shape) >= 2 else (1, shape[0])
    i = np.arange(rows, dtype=np.int64)[:, None]
    j = np.arange(cols, dtype=np.int64)[None, :]
    u = (13 + 2 * seed) * i + (29 + 3 * seed) * j + seed
    v = ((u * u) % 97 - 48).astype(np.float64) * 2.0**exp + offset
    return v.reshape(shape)


class Reference:
    """The same model in numpy, float64: the forward pass only (the check
    differentiates it numerically)."""

    def __init__(self, np, cfg):
        self.np, self.c = np, cfg
        data = param_data(cfg)
        self.params = {n: pattern_np(np, s, *data[n]) for n, s in cfg.params()}
        self.tokens = np.array(token_pattern(cfg.T, 1, cfg.V), dtype=np.int64)
        self.targets = np.array(token_pattern(cfg.T, 2, cfg.V), dtype=np.int64)

    def loss(self, p):
        np, c = self.np, self.c
        B, S, D, H, DH, T = c.B, c.S, c.D, c.H, c.DH, c.T

        def rmsnorm(x, g):
            return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + 1e-5) * g

        def gelu(z):
            return 0.5 * z * (1.0 + np.tanh(0.7978845608 * (z + 0.044715 * z**3)))

        def heads(a):  # [T, D] -> [B, H, S, DH]
            return a.reshape(B, S, H, DH).transpose(0, 2, 1, 3)

        mask = np.triu(np.ones((S, S), dtype=bool), k=1)
        x = p["wte"][self.tokens] + np.tile(p["wpe"], (B, 1))
        for l in range(c.L):
            w = lambda n: p["l%d_%s" % (l, n)]  # noqa: E731
            xn = rmsnorm(x, w("g1"))
            q, k, v = (heads(xn @ w(n).T) for n in ("wq", "wk", "wv"))
            s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(DH)
            s = np.where(mask, -np.inf, s)
            s = np.exp(s - s.max(axis=-1, keepdims=True))
            o = (s / s.sum(axis=-1, keepdims=True)) @ v
            h = x + o.transpose(0, 2, 1, 3).reshape(T, D) @ w("wo").T
            hn = rmsnorm(h, w("g2"))
            x = h + (self.moe(hn, w, gelu) if c.E else gelu(hn @ w("w1").T) @ w("w2").T)
        logits = rmsnorm(x, p["gf"]) @ p["whead"].T
        m = logits.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
        return float(np.mean(lse - logits[np.arange(T), self.targets]))

    def moe(self, hn, w, gelu):
        """The MoE MLP as the step computes it: softmax router, top-K by
        probability (lowest index on ties), slots in order of (choice,
        token), choices past C dropped, gated sum of the experts' outputs."""
        np, c = self.np, self.c
        logits = hn @ w("wr").T
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        out = np.zeros_like(hn)
        taken = np.zeros(c.E, dtype=np.int64)
        masked = probs.copy()
        for _ in range(c.K):
            sel = np.argmax(masked, axis=1)  # the first maximum: lowest index
            gate = masked[np.arange(c.T), sel]
            masked[np.arange(c.T), sel] = -np.inf
            for t in range(c.T):
                e = sel[t]
                if taken[e] < c.C:
                    y = gelu(hn[t] @ w("w1")[e].T) @ w("w2")[e].T
                    out[t] += gate[t] * y
                taken[e] += 1
        return out


def parse_memrefs(np, text):
    """(sizes, flat values) of every printMemrefF32 output, in order."""
    out = []
    heads = list(re.finditer(r"Unranked Memref base@ = \S+ rank = \d+ offset = \d+ "
                             r"sizes = \[([0-9, ]*)\] strides = \[[0-9, ]*\] data =", text))
    for n, m in enumerate(heads):
        end = heads[n + 1].start() if n + 1 < len(heads) else len(text)
        sizes = tuple(int(s) for s in m.group(1).split(",") if s.strip())
        body = re.sub(r"[\[\],]", " ", text[m.end():end])
        values = np.array(body.split(), dtype=np.float64)
        out.append((sizes, values))
    return out


def printed_results(np, cfg, text):
    """The loss and gradients the driver printed."""
    printed = parse_memrefs(np, text)
    params = cfg.params()
    shapes = [()] + [tuple(s) for _, s in params]
    got = [s for s, _ in printed]
    if got != shapes:
        sys.exit("error: the input holds %d printed tensors, expected the loss and %d gradients "
                 "of these shapes: %s (not the driver's output, or other options?)"
                 % (len(got), len(params), " ".join("x".join(map(str, s)) or "scalar" for s in shapes)))
    return [v for _, v in printed]


def jit_results(np, cfg, ref, pipeline):
    """Runs the step with fp4train's JIT (the Python package must be on
    PYTHONPATH, e.g. build/python_packages) on the reference's data."""
    try:
        import fp4train
    except ImportError as err:
        sys.exit("error: --jit needs the fp4train Python package on PYTHONPATH "
                 "(build/python_packages): %s" % err)
    module = fp4train.Context().parse(Step(cfg).text([]))
    try:
        step = fp4train.compile(module, "train_step", pipeline)
    except fp4train.Error as err:
        sys.exit("error: the JIT cannot compile the step: %s" % str(err).strip())
    args = [np.ascontiguousarray(ref.params[n], dtype=np.float32) for n, _ in cfg.params()]
    args += [ref.tokens.astype(np.int32).reshape(cfg.B, cfg.S),
             ref.targets.astype(np.int32).reshape(cfg.B, cfg.S), 0]
    results = step(*args)
    start = time.perf_counter()
    step(*args)
    print("step: %.1f ms (JIT, %s; the second of two calls)" % (1e3 * (time.perf_counter() - start), pipeline))
    return [np.asarray(r, dtype=np.float64).reshape(-1) for r in results]


def check(np, cfg, ref, results):
    """results: the f32 step's loss and gradients (flat arrays), in result
    order. Prints one line per parameter; returns whether all passed."""
    params = cfg.params()
    ok = True
    base = ref.loss(ref.params)
    loss_f32 = results[0][0]
    loss_err = abs(loss_f32 - base) / abs(base)
    print("loss: %s (f32 %.6g, f64 %.9g, rel err %.1e)"
          % ("OK" if loss_err <= LOSS_TOLERANCE else "FAIL", loss_f32, base, loss_err))
    ok &= loss_err <= LOSS_TOLERANCE
    worst = 0.0
    for (name, shape), g in zip(params, results[1:]):
        value = ref.params[name]
        g = g.reshape(shape)
        rng = np.random.default_rng(cfg.index(name))
        g_max = np.abs(g).max()
        picks = [np.unravel_index(k, shape) for k in rng.choice(value.size, min(ENTRIES, value.size), replace=False)]
        if name == "wte":
            # Most rows of dwte are zero (tokens absent from the batch): also
            # check entries of rows the scatter-add accumulates into.
            rows = np.unique(ref.tokens)
            picks += [(int(rng.choice(rows)), int(rng.integers(shape[1]))) for _ in range(2)]
        picks.append(np.unravel_index(np.abs(g).argmax(), shape))

        def loss_along(direction):
            def f(h):
                return ref.loss({**ref.params, name: value + h * direction})
            return (f(FD_STEP) - f(-FD_STEP)) / (2 * FD_STEP)

        errors = []
        for k in picks:
            unit = np.zeros(shape)
            unit[k] = 1.0
            fd = loss_along(unit)
            errors.append(abs(g[k] - fd) / max(abs(fd), FLOOR * g_max, ABS_FLOOR))
        # Directional derivative along a random ±1 direction v: ⟨g, v⟩. Rounding
        # errors of size ρ·|g_i| with random signs add up to ~ρ·‖g‖₂.
        v = rng.choice([-1.0, 1.0], size=shape)
        fd = loss_along(v)
        errors.append(abs(float(np.sum(g * v)) - fd) / max(float(np.sqrt(np.sum(g * g))), ABS_FLOOR))
        err = max(errors)
        worst = max(worst, err)
        passed = err <= TOLERANCE
        ok &= passed
        print("%s%s: %s (%d entries + 1 direction, max rel err %.1e)"
              % (name, list(shape), "OK" if passed else "FAIL", len(picks), err))
    print("max rel err %.1e (tolerance %.0e)" % (worst, TOLERANCE))
    print("all gradients OK" if ok else "GRADIENT CHECK FAILED")
    return ok


# -------------------------------------------------------------------- main --


def main(argv):
    mode = "step"
    if argv and argv[0] in ("driver", "check"):
        mode, argv = argv[0], argv[1:]
    prog = "gpt_train_step.py" + ("" if mode == "step" else " " + mode)

    def extra(parser):
        if mode == "check":
            parser.add_argument("--input", default="-", help="the driver's output (default: stdin)")
            parser.add_argument("--jit", action="store_true",
                                help="run the step with fp4train's JIT instead of reading a driver's output")
            parser.add_argument("--pipeline", default="fp4train-cpu-pipeline{recipe=none}",
                                help="the JIT's pipeline (default: %(default)s)")
        else:
            parser.add_argument("-o", dest="output", default="-", help="output file (default: stdout)")
        if mode == "driver":
            parser.add_argument("--time", type=int, default=0, metavar="N",
                                help="first run N timed steps, printing each one's wall time in seconds")

    cfg, args = parse_config(argv, prog, extra)
    # The model options that differ from the defaults, for the generated
    # header: the command that regenerates the file, however it was typed.
    shown = []
    for name, default in DEFAULTS.items():
        if getattr(args, name) != default:
            shown += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    if cfg.E:
        shown += ["--moe", str(cfg.E), "--topk", str(cfg.K), "--capacity", str(cfg.C)]
        if mode == "driver" or (mode == "check" and not args.jit):
            sys.exit("%s: error: --moe steps are checked with `check --jit` (the driver "
                     "builds dense steps' parameters only)" % prog)
    if mode == "check":
        import numpy as np

        ref = Reference(np, cfg)
        if args.jit:
            results = jit_results(np, cfg, ref, args.pipeline)
        else:
            try:
                text = sys.stdin.read() if args.input == "-" else open(args.input).read()
            except OSError as err:
                sys.exit("%s: error: cannot read %s: %s" % (prog, args.input, err.strerror))
            results = printed_results(np, cfg, text)
        return 0 if check(np, cfg, ref, results) else 1
    if mode == "step":
        text = Step(cfg).text(shown)
    else:
        if args.time:
            shown += ["--time", str(args.time)]
        text = driver_text(cfg, shown, args.time)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    try:
        with open(args.output, "w") as f:
            f.write(text)
    except OSError as err:
        sys.exit("%s: error: cannot write %s: %s" % (prog, args.output, err.strerror))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
