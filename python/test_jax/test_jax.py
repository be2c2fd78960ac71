"""fp4train.jax: JAX loss functions through IREE's StableHLO conversion:
roles by parameter name (in-out weights), the f32 step against
jax.value_and_grad, and the errors.

Run by test/Python/jax-frontend.test with the project's virtual environment;
by hand:

    PYTHONPATH=build/python_packages .venv/bin/python -m pytest python/test_jax
"""

import fp4train
import fp4train.jax as fj
import jax
import jax.numpy as jnp
import numpy as np
import pytest

LINEAR = ["fprop", "dgrad", "wgrad"]


def dense(key, fan_in, fan_out):
    return {"kernel": jax.random.normal(key, (fan_in, fan_out)) / fan_in**0.5,
            "bias": jnp.zeros(fan_out)}


def mlp_case():
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    params = {"dense1": dense(keys[0], 32, 64), "dense2": dense(keys[1], 64, 32)}

    def loss_fn(p, x, y):
        h = jax.nn.gelu(x @ p["dense1"]["kernel"] + p["dense1"]["bias"])
        out = h @ p["dense2"]["kernel"] + p["dense2"]["bias"]
        return jnp.mean((out - y) ** 2)

    data = (jax.random.normal(keys[2], (16, 32)), jax.random.normal(keys[3], (16, 32)))
    # The first layer's input is data: no Dgrad to compute.
    roles = {"dense1.kernel": ["fprop", "wgrad"], "dense1.bias": [],
             "dense2.kernel": LINEAR, "dense2.bias": []}
    return loss_fn, params, data, roles, 0


def attention_case():
    # A pre-norm causal self-attention block with a GELU MLP and a
    # classifier head: LayerNorm, einsum attention, one-hot cross-entropy.
    # (Gathers such as an embedding lookup differentiate to a scatter-add,
    # which IREE lowers to its own op: see test_gather_is_refused.)
    keys = jax.random.split(jax.random.PRNGKey(1), 8)
    width, heads, vocab, length = 32, 2, 64, 8
    params = {"ln": {"scale": jnp.ones(width), "bias": jnp.zeros(width)},
              "q": dense(keys[1], width, width), "k": dense(keys[2], width, width),
              "v": dense(keys[3], width, width), "o": dense(keys[4], width, width),
              "up": dense(keys[5], width, 4 * width),
              "down": dense(keys[6], 4 * width, width),
              "head": dense(keys[7], width, vocab)}

    def layer_norm(p, x):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * p["scale"] + p["bias"]

    def loss_fn(p, x, targets):
        h = layer_norm(p["ln"], x)
        split = lambda t: t.reshape(*t.shape[:-1], heads, width // heads)
        q, k, v = (split(h @ p[n]["kernel"] + p[n]["bias"]) for n in "qkv")
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / (width // heads) ** 0.5
        mask = jnp.tril(jnp.ones((length, length), bool))
        weights = jax.nn.softmax(jnp.where(mask, scores, -1e9), axis=-1)
        y = jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(x.shape)
        x = x + y @ p["o"]["kernel"] + p["o"]["bias"]
        x = x + jax.nn.gelu(x @ p["up"]["kernel"] + p["up"]["bias"]) @ \
            p["down"]["kernel"] + p["down"]["bias"]
        logits = x @ p["head"]["kernel"] + p["head"]["bias"]
        logp = jax.nn.log_softmax(logits)
        return -(jax.nn.one_hot(targets, vocab) * logp).sum(-1).mean()

    x = jax.random.normal(keys[0], (2, length, width))
    targets = jax.random.randint(keys[1], (2, length), 0, vocab, dtype=jnp.int32)
    roles = {f"{n}.kernel": LINEAR for n in ("q", "k", "v", "o", "up", "down", "head")}
    roles.update({f"{n}.bias": [] for n in ("q", "k", "v", "o", "up", "down", "head")})
    roles.update({"ln.scale": [], "ln.bias": []})
    # QK^T and PV forward, two GEMMs back for each.
    return loss_fn, params, (x, targets), roles, 6


CASES = {"mlp": mlp_case, "attention": attention_case}


@pytest.fixture(scope="module")
def exported():
    cache = {}

    def get(name):
        if name not in cache:
            loss_fn, params, data, roles, attention = CASES[name]()
            cache[name] = (fj.export_training_step(loss_fn, params, *data),
                           loss_fn, params, data, roles, attention)
        return cache[name]
    return get


def relative_error(actual, expected):
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    return float(np.abs(actual - expected).max() / np.abs(expected).max())


@pytest.mark.parametrize("name", list(CASES))
def test_roles_by_parameter_name(exported, name):
    step, _, params, _, expected, attention = exported(name)
    roles = step.roles()
    assert sorted(step.param_names) == sorted(expected)
    for param, wanted in expected.items():
        assert sorted(e["role"] for e in roles[param]) == sorted(wanted), param
    assert [e["role"] for e in roles[None]] == ["other"] * attention


@pytest.mark.parametrize("name", list(CASES))
def test_f32_step_equals_value_and_grad(exported, name):
    step, loss_fn, params, data, _, _ = exported(name)
    loss, grads = step.run("f32", params, *data)
    expected_loss, expected = jax.value_and_grad(loss_fn)(params, *data)
    assert relative_error(loss, expected_loss) <= 1e-5
    flat, _ = jax.tree_util.tree_flatten_with_path(grads)
    for (path, grad), want in zip(flat, jax.tree_util.tree_leaves(expected)):
        name = jax.tree_util.keystr(path)
        if name == "['k']['bias']":
            # Analytically zero (softmax ignores a shift shared by a query's
            # scores): both sides are rounding noise, so judge it absolutely.
            assert np.abs(np.asarray(grad)).max() <= 1e-6
            continue
        assert relative_error(grad, want) <= 1e-5, name


def test_quantized_steps_differ_and_repeat(exported):
    step, _, params, data, _, _ = exported("attention")
    f32, _ = step.run("f32", params, *data)
    first, _ = step.run("nvfp4", params, *data, step=7)
    again, _ = step.run("nvfp4", params, *data, step=7)
    assert first == again and first != f32


def test_errors(exported):
    loss_fn, params, data, _, _ = mlp_case()
    with pytest.raises(fp4train.Error, match="holds no arrays"):
        fj.export_training_step(loss_fn, {}, *data)
    with pytest.raises(fp4train.Error, match="float32 scalar"):
        fj.export_training_step(lambda p, x, y: x @ p["dense1"]["kernel"],
                                params, *data)
    with pytest.raises(fp4train.Error, match="data argument 0 has dtype float64"):
        fj.export_training_step(loss_fn, params, np.zeros((16, 32)), data[1])
    with pytest.raises(fp4train.Error, match="loss_fn fails on the example"):
        fj.export_training_step(loss_fn, params, data[0][:, :5], data[1])
    step = exported("mlp")[0]
    with pytest.raises(fp4train.Error, match="parameter dense1.bias has dtype int32"):
        fj.export_training_step(loss_fn, {**params, "dense1": {
            "kernel": params["dense1"]["kernel"],
            "bias": jnp.zeros(64, jnp.int32)}}, *data)
    with pytest.raises(fp4train.Error, match=r"parameter dense2.kernel is not "
                       r"a tensor<64x32xf32>"):
        step.run("f32", {**params, "dense2": {"kernel": params["dense1"]["kernel"],
                                             "bias": params["dense2"]["bias"]}},
                 *data)
    with pytest.raises(fp4train.Error, match="structure"):
        step.run("f32", {"dense1": params["dense1"]}, *data)
    with pytest.raises(fp4train.Error, match="takes 2 data arguments"):
        step.run("f32", params, data[0])
    with pytest.raises(fp4train.Error, match="nvfp5"):
        step.run("nvfp5", params, *data)


def test_override_lists(exported):
    # roles=["fprop"] ([FE4]) is roles="fprop"; a bad role is the pipeline's
    # error, a value no option spells a TypeError.
    step, _, params, data, _, _ = exported("mlp")
    listed, _ = step.run("nvfp4", params, *data, step=3, roles=["fprop"])
    named, _ = step.run("nvfp4", params, *data, step=3, roles="fprop")
    assert listed == named
    with pytest.raises(fp4train.Error, match="'fprop,fprop' must list "
                       "distinct roles"):
        step.run("nvfp4", params, *data, roles=("fprop", "fprop"))
    with pytest.raises(TypeError, match="recipe override roles takes"):
        step.run("nvfp4", params, *data, roles=[{"fprop"}])


def test_zero_size_arrays_are_refused():
    # IREE folds the GEMMs of a zero-size operand away: no roles, nothing
    # quantized. Refused by name, as fp4train.torch refuses them.
    loss_fn, params, data, _, _ = mlp_case()
    message = ", with no elements; fp4train steps take no zero-size tensors"
    empty = {**params, "dense1": {"kernel": jnp.ones((0, 64)),
                                  "bias": params["dense1"]["bias"]}}
    with pytest.raises(fp4train.Error, match=r"parameter dense1\.kernel has "
                       r"shape \[0, 64\]" + message):
        fj.export_training_step(loss_fn, empty, *data)
    with pytest.raises(fp4train.Error, match=r"data argument 1 has shape "
                       r"\[16, 0\]" + message):
        fj.export_training_step(lambda p, x, y: loss_fn(p, x, x) + y.sum(),
                                params, data[0], data[1][:, :0])


def test_unused_parameter_and_datum():
    # jax.jit drops the arguments a function does not read; the step keeps
    # them ([FE1]): a gradient of zeros for the parameter.
    loss_fn, params, data, _, _ = mlp_case()
    params = {**params, "unused": jnp.ones(3)}
    step = fj.export_training_step(
        lambda p, x, y, _: loss_fn(p, x, y), params, *data, jnp.ones(5))
    loss, grads = step.run("f32", params, *data, jnp.ones(5))
    assert relative_error(loss, loss_fn(params, *data)) <= 1e-5
    assert not np.asarray(grads["unused"]).any()


def test_op_outside_upstream_mlir():
    # jnp.sort becomes an IREE op, named with its source line.
    _, params, data, _, _ = mlp_case()
    with pytest.raises(fp4train.Error, match=r"IREE lowered part of the step "
                       r"to iree_\w+\.sort \(at .*test_jax\.py:\d+:\d+\)"):
        fj.export_training_step(
            lambda p, x, y: jnp.sort(x @ p["dense1"]["kernel"], axis=0).sum(),
            params, *data)


def test_gather_is_refused():
    # An embedding lookup's gradient is a scatter-add, which IREE lowers to
    # iree_linalg_ext.scatter: refused by name, at the lookup's line.
    embed = {"table": jnp.ones((16, 8))}
    ids = jnp.zeros((4,), jnp.int32)
    with pytest.raises(fp4train.Error, match=r"iree_linalg_ext\.scatter \(at "
                       r".*test_jax\.py:\d+:\d+\)"):
        fj.export_training_step(lambda p, i: (p["table"][i] ** 2).sum(),
                                embed, ids)
