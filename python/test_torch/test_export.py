"""export_training_step on real models: roles by parameter name, the f32
step against torch autograd, a quantized step against an emulation on the
numerics library, and the errors users meet."""

import fp4train
import fp4train.torch as ft
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import models
from conftest import autograd_step, relative_error

LINEAR = ["fprop", "dgrad", "wgrad"]


def tokens(*shape, vocab=64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, shape, generator=generator)


def normal(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def case(name):
    """(model, loss_fn, data, expected roles by name, attention GEMMs)."""
    torch.manual_seed(0)
    if name == "mlp":
        # The first layer's input is data: no Dgrad to compute.
        return (models.MLP(), models.mse_loss, (normal(32, 64), normal(32, 64, seed=1)),
                {"up.weight": ["fprop", "wgrad"], "up.bias": [],
                 "down.weight": LINEAR}, 0)
    if name == "nanogpt":
        roles = {"wte.weight": LINEAR, "wpe.weight": [], "ln_f.weight": [],
                 "ln_f.bias": []}
        for b in range(2):
            for layer in ("qkv", "proj", "fc", "out"):
                roles[f"blocks.{b}.{layer}.weight"] = LINEAR
                roles[f"blocks.{b}.{layer}.bias"] = []
            for norm in ("ln1", "ln2"):
                roles[f"blocks.{b}.{norm}.weight"] = []
                roles[f"blocks.{b}.{norm}.bias"] = []
        # Per block: QK^T and PV forward, two GEMMs back for each.
        return (models.NanoGPT(), models.lm_loss,
                (tokens(2, 16), tokens(2, 16, seed=1)), roles, 12)
    if name == "llama":
        roles = {name: LINEAR for name in (
            "q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight",
            "gate_proj.weight", "up_proj.weight", "down_proj.weight")}
        roles.update({"attn_norm.weight": [], "mlp_norm.weight": []})
        return (models.LlamaBlock(), models.mse_loss,
                (normal(2, 16, 64), normal(2, 16, 64, seed=1)), roles, 6)
    if name == "tied":
        # The tied weight is looked up (no GEMM) and is the output layer.
        return (models.TiedEmbeddings(), models.lm_loss,
                (tokens(4, 8), tokens(4, 8, seed=1)),
                {"embed.weight": LINEAR, "hidden.weight": LINEAR,
                 "hidden.bias": []}, 0)
    if name == "moe":
        # Expert weights [E, out, in] through torch.bmm: batched Fprop,
        # Dgrad and Wgrad ([ROLE7]); the gated sum over experts and its two
        # backward GEMMs are other.
        return (models.SoftMoE(), models.mse_loss,
                (normal(24, 32), normal(24, 32, seed=1)),
                {"inp.weight": ["fprop", "wgrad"], "inp.bias": [],
                 "router.weight": LINEAR, "w1": LINEAR, "w2": LINEAR}, 3)
    if name == "autocast":
        return (models.AutocastMLP(), models.mse_loss,
                (normal(32, 64), normal(32, 64, seed=1)),
                {"up.weight": ["fprop", "wgrad"], "up.bias": [],
                 "down.weight": LINEAR}, 0)
    raise KeyError(name)


@pytest.fixture(scope="module")
def exported():
    cache = {}

    def get(name):
        if name not in cache:
            model, loss_fn, data, roles, attention = case(name)
            cache[name] = (ft.export_training_step(model, loss_fn, *data),
                           model, loss_fn, data, roles, attention)
        return cache[name]
    return get


ALL = ["mlp", "nanogpt", "llama", "tied", "moe", "autocast"]


@pytest.mark.parametrize("name", ALL)
def test_roles_by_parameter_name(exported, name):
    step, model, _, _, expected, attention = exported(name)
    roles = step.roles()
    assert step.param_names == [n for n, _ in model.named_parameters()]
    for param, wanted in expected.items():
        assert sorted(e["role"] for e in roles[param]) == sorted(wanted), param
    assert set(roles) == set(expected) | {None}
    assert [e["role"] for e in roles[None]] == ["other"] * attention


def test_router_from_structure(exported):
    """[MOE2]: the router is found by what its result does (its 4 output
    features reach the 4 experts' GEMMs), not by its name: the export marks
    nothing, and recipes keep its GEMMs in f32 unless quantize_router; the
    expert weights' GEMMs are batched over the 4 experts."""
    step, _, _, data, _, _ = exported("moe")
    roles = step.roles()
    for name in ("w1", "w2"):
        assert [e["batch"] for e in roles[name]] == [4, 4, 4], name
    assert [e["batch"] for e in roles["router.weight"]] == [1, 1, 1]
    assert "fp4train.router" not in step.mlir
    kept, _ = step.run("nvfp4", *data, step=0)
    quantized, _ = step.run("nvfp4", *data, step=0, quantize_router=True)
    f32, _ = step.run("f32", *data, step=0)
    assert len({kept, quantized, f32}) == 3


class GatedMLP(nn.Module):
    """A dense SwiGLU layer whose gate projection is called `gate`: an
    ordinary weight, quantized like the others."""

    def __init__(self, width=32, hidden=64):
        super().__init__()
        self.gate = nn.Linear(width, hidden, bias=False)
        self.up = nn.Linear(width, hidden, bias=False)
        self.down = nn.Linear(hidden, width, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def test_names_do_not_make_routers():
    """A router under any name is kept; a dense `gate` is not a router, so
    quantize_router changes nothing for it."""
    torch.manual_seed(0)
    data = (normal(24, 32), normal(24, 32, seed=1))
    renamed = ft.export_training_step(models.SoftMoE(router_name="mixer"),
                                      models.mse_loss, *data)
    assert "mixer.weight" in renamed.roles()
    kept, _ = renamed.run("nvfp4", *data, step=0)
    quantized, _ = renamed.run("nvfp4", *data, step=0, quantize_router=True)
    assert kept != quantized
    dense = ft.export_training_step(GatedMLP(), models.mse_loss, *data)
    default, _ = dense.run("nvfp4", *data, step=0)
    forced, _ = dense.run("nvfp4", *data, step=0, quantize_router=True)
    f32, _ = dense.run("f32", *data, step=0)
    assert default == forced != f32


def test_blocks_from_parameter_names(exported):
    """[FE5]: blocks.N.* weights are in block N; the embeddings and the tied
    head in none. keep_first_blocks / keep_last_blocks keep those blocks'
    GEMMs, and the quantize pass rejects counts the model cannot meet."""
    step = exported("nanogpt")[0]
    roles = step.roles()
    for name, contractions in roles.items():
        for entry in contractions:
            expected = (int(name.split(".")[1])
                        if name and name.startswith("blocks.") else None)
            assert entry["block"] == expected, name
    assert 'fp4train.block = 1 : i64' in step.mlir
    # Both blocks kept is the first 8 linear layers kept (4 per block; the
    # tied head comes last): the same step, bit for bit.
    data = exported("nanogpt")[3]
    loss_blocks, grads_blocks = step.run("nvfp4", *data, step=0,
                                         keep_first_blocks=2)
    loss_layers, grads_layers = step.run("nvfp4", *data, step=0, keep_first=8)
    loss_all, _ = step.run("nvfp4", *data, step=0)
    assert loss_blocks == loss_layers != loss_all
    for name, a, b in zip(step.param_names, grads_blocks, grads_layers):
        assert np.array_equal(a, b), name
    with pytest.raises(fp4train.Error, match="keep-last-blocks=3 is more "
                       "than the step's 2 decoder blocks"):
        step.run("nvfp4", *data, keep_last_blocks=3)


def test_block_names():
    from fp4train._frontend import get_block
    assert get_block("layers.3.mlp.w1") == 3
    assert get_block("model.layers.12.self_attn.q_proj.weight") == 12
    assert get_block("transformer.h.0.attn.c_attn.weight") == 0
    assert get_block("blocks.1") == 1
    assert get_block("wte.weight") is None
    assert get_block("layers.norm.weight") is None
    assert get_block("hlayers.2.w") is None


@pytest.mark.parametrize("name", ["mlp", "nanogpt", "llama", "tied", "moe"])
def test_f32_step_equals_autograd(exported, name):
    step, model, loss_fn, data, _, _ = exported(name)
    loss, grads = step.run("f32", *data)
    expected_loss, expected = autograd_step(model, loss_fn, data)
    assert relative_error(loss, expected_loss) <= 1e-5
    assert list(grads) == list(expected)
    for param, grad in grads.items():
        assert grad.shape == expected[param].shape
        assert relative_error(grad, expected[param]) <= 1e-5, param


def test_autocast_step_is_within_bf16_of_autograd(exported):
    # Under bf16 autocast torch-mlir computes each elementwise op's body in
    # bf16 (every arith op rounds) where PyTorch's kernels compute in f32 and
    # round once per op: the step is within a few bf16 ulps (2^-8) of
    # autograd, not bit-equal ([FE3]).
    step, model, loss_fn, data, _, _ = exported("autocast")
    loss, grads = step.run("f32", *data)
    expected_loss, expected = autograd_step(model, loss_fn, data)
    assert relative_error(loss, expected_loss) <= 1e-3
    for param, grad in grads.items():
        assert relative_error(grad, expected[param]) <= 4 * 2.0**-8, param


def _fake_quant(x, axis):
    """MXFP4 round trip of ``x`` with blocks along ``axis`` (the numerics
    library's quantize and dequantize)."""
    array = np.ascontiguousarray(x.detach().numpy(), dtype=np.float32)
    q = fp4train.quantize(array, "mxfp4", axis=axis)
    return torch.from_numpy(q.dequantize())


class _MXLinear(torch.autograd.Function):
    """y = Q(x)·Q(W)^T: each GEMM of the mxfp4 recipe with both operands
    quantized along its contraction (Fprop: K, Dgrad: N, Wgrad: M)."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return _fake_quant(x, -1) @ _fake_quant(weight, -1).T

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensors
        dx = _fake_quant(dy, -1) @ _fake_quant(weight, 0)
        dw = _fake_quant(dy, 0).T @ _fake_quant(x, 0)
        return dx, dw


def test_quantized_step_equals_emulation(exported):
    step, model, loss_fn, data, _, _ = exported("mlp")
    loss, grads = step.run("mxfp4", *data)
    f32_loss, f32_grads = step.run("f32", *data)

    def emulated(m, x, target):
        h = F.gelu(_MXLinear.apply(x, m.up.weight) + m.up.bias)
        return F.mse_loss(_MXLinear.apply(h, m.down.weight), target)

    expected_loss, expected = autograd_step(model, emulated, data)
    # Equal up to f32 summation order: far closer to the emulation than the
    # unquantized step is.
    assert abs(loss - expected_loss) <= 1e-3 * abs(f32_loss - expected_loss)
    for param in grads:
        near = relative_error(grads[param], expected[param])
        far = relative_error(f32_grads[param], expected[param])
        assert near <= 1e-5 and near <= 1e-3 * far, (param, near, far)


class Undecidable(nn.Module):
    """A weight contracted over both its dimensions (a bilinear score): no
    Fprop or Dgrad fits ([ROLE4])."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.score = nn.Parameter(torch.randn(8, 8))

    def forward(self, x):
        return torch.einsum("ij,ij->", self.linear(x), self.score)


def test_undecided_roles_are_reported_by_name():
    torch.manual_seed(0)
    step = ft.export_training_step(Undecidable(), lambda m, x: m(x),
                                   torch.randn(8, 8))
    roles = step.roles()
    assert sorted(e["role"] for e in roles["linear.weight"]) == ["fprop", "wgrad"]
    assert roles["score"] and {e["role"] for e in roles["score"]} == {"other"}
