"""Mixture-of-experts models as people write them, exported: Hugging Face
Mixtral and Qwen2-MoE (transformers' experts modules, run with capacity
dispatch during the export, docs/frontends.md [FE8]) and plain PyTorch top-k
routing (topk, index_add_, scatter_add, one_hot: [FE7]). Each f32 step
equals eager autograd; routers are found by structure and kept; every expert
weight gets batched Fprop, Dgrad and Wgrad; the quantized steps run."""

import math

import fp4train
import fp4train.torch as ft
import pytest
import torch

import hf_models
import models
from conftest import autograd_step

LINEAR = ["dgrad", "fprop", "wgrad"]
HF = ["mixtral", "qwen2_moe"]


def relative_l2(actual, expected):
    actual = torch.as_tensor(actual, dtype=torch.float64)
    expected = torch.as_tensor(expected, dtype=torch.float64)
    norm = expected.norm()
    difference = (actual - expected).norm()
    return float(difference / norm) if norm > 0 else float(difference)


def top_k_moe(combine):
    torch.manual_seed(0)
    data = (torch.randn(24, 32), torch.randn(24, 32))
    return models.TopKMoE(combine=combine), models.mse_loss, *data


CASES = {name: getattr(hf_models, name) for name in HF}
CASES.update({f"topk-{c}": (lambda c=c: top_k_moe(c))
              for c in ("index_add", "scatter_add", "one_hot")})


@pytest.fixture(scope="module")
def exported():
    cache = {}

    def get(name):
        if name not in cache:
            model, loss_fn, *data = CASES[name]()
            cache[name] = (ft.export_training_step(model, loss_fn, *data),
                           model, loss_fn, data)
        return cache[name]
    return get


@pytest.mark.parametrize("name", list(CASES))
def test_f32_step_equals_autograd(exported, name):
    step, model, loss_fn, data = exported(name)
    loss, grads = step.run("f32", *data)
    expected_loss, expected = autograd_step(model, loss_fn, data)
    assert abs(loss - expected_loss) <= 1e-4 * abs(expected_loss)
    assert set(grads) == set(expected)
    for param, grad in grads.items():
        assert relative_l2(grad, expected[param]) <= 1e-4, param


def expert_and_router_names(model):
    experts = [n for n, p in model.named_parameters() if p.dim() == 3]
    routers = [n for n, m in model.named_modules()
               if type(m).__name__.endswith("TopKRouter")]
    return experts, [f"{n}.weight" for n in routers]


@pytest.mark.parametrize("name", HF)
def test_experts_and_routers_by_structure(exported, name):
    """Every expert weight ([E, out, in]) has Fprop, Dgrad and Wgrad batched
    over its 4 experts; each block's router is found from the graph (the
    export marks nothing) and reported as one; no other weight is."""
    step, model, _, _ = exported(name)
    roles = step.roles()
    experts, routers = expert_and_router_names(model)
    assert len(experts) == 4 and len(routers) == 2
    for param in experts:
        assert sorted(e["role"] for e in roles[param]) == LINEAR, param
        assert {e["batch"] for e in roles[param]} == {4}, param
    for param, entries in roles.items():
        if param is None or not entries:
            continue
        is_router = [e.get("router", False) for e in entries]
        assert is_router == [param in routers] * len(entries), param
    assert "fp4train.router" not in step.mlir


@pytest.mark.parametrize("name", HF)
def test_quantized_steps_keep_the_router(exported, name):
    step, _, _, data = exported(name)
    f32, _ = step.run("f32", *data, step=0)
    for recipe in ("nvfp4", "mxfp4-hadamard", "mxfp8"):
        loss, grads = step.run(recipe, *data, step=0)
        assert math.isfinite(loss) and loss != f32, recipe
        assert all(torch.isfinite(g).all() for g in grads.values()), recipe
    kept, _ = step.run("nvfp4", *data, step=0)
    quantized, _ = step.run("nvfp4", *data, step=0, quantize_router=True)
    assert kept != quantized


def test_capacity_drops_beyond_it():
    """The default capacity is the most tokens any expert receives on the
    example batch (nothing dropped, as the f32 tests show); with room for
    one token per expert the others' routed outputs are dropped, so the
    experts' gradients change; a capacity that is no positive int is
    refused."""
    model, loss_fn, *data = hf_models.mixtral()
    _, expected = autograd_step(model, loss_fn, data)
    dropping = ft.export_training_step(model, loss_fn, *data,
                                       expert_capacity=1)
    _, grads = dropping.run("f32", *data)
    name = "model.layers.0.mlp.experts.down_proj"
    assert relative_l2(grads[name], expected[name]) > 0.5
    for bad in (0, -1, 2.5, True):
        with pytest.raises(fp4train.Error, match="expert_capacity must be"):
            ft.export_training_step(model, loss_fn, *data,
                                    expert_capacity=bad)
    # The export leaves the model's own experts implementation in place.
    assert model.config._experts_implementation == "grouped_mm"


def test_shard_by_parameter_name(exported):
    """Step.shard: the step annotated for mpiexec and fp4-train
    (docs/sharding.md), tensor-parallel splits by parameter name, expert
    weights found by structure; what the pass refuses is an Error."""
    step, _, _, _ = exported("mixtral")
    text = step.shard(dp=2, ep=2)
    assert "shard.grid @dp_ep(shape = 2x2)" in text
    assert "modeling_mixtral.py" in text  # the locations stay
    q = "model.layers.0.self_attn.q_proj.weight"
    assert "shard.grid @tp(shape = 2)" in step.shard(tp=2, tp_split={q: 0})
    with pytest.raises(fp4train.Error, match="'nope', which is not a "
                       "parameter"):
        step.shard(tp=2, tp_split={"nope": 0})
    with pytest.raises(fp4train.Error, match=r"cannot shard the step: .*"
                       r"into 3 equal parts \(fp4train-shard-step ep=3\)"):
        step.shard(ep=3)
    dense = ft.export_training_step(models.MLP(), models.mse_loss,
                                    torch.randn(32, 64), torch.randn(32, 64))
    with pytest.raises(fp4train.Error, match="ep=2 splits expert weights, "
                       "and @train_step has none"):
        dense.shard(ep=2)
