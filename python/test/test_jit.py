"""compile: a JIT training step equal to fp4-train's, and error paths."""

import subprocess

import fp4train
import numpy as np
import pytest

from conftest import EXAMPLES, read_example

from test_module import SCALE


def step_arg(ctx, text):
    """The index of the step argument, as fp4-train finds it (the first
    i64/index argument)."""
    f = fp4train.compile(ctx.parse(text), "train_step",
                         "fp4train-cpu-pipeline{recipe=none}")
    return next(i for i, a in enumerate(f.arguments) if a[0] == "i64")


@pytest.mark.parametrize("example, recipe", [
    ("mlp_train_step.mlir", "nvfp4"),
    ("mlp_train_step.mlir", "mxfp4-sr"),
    ("transformer_block_train_step.mlir", "mxfp4-hadamard"),
])
def test_train_step_equals_fp4_train(ctx, tools_dir, tmp_path, example, recipe):
    # fp4-train's first step: its arguments and results, bit for bit.
    subprocess.run([str(tools_dir / "fp4-train"), str(EXAMPLES / example),
                    "--recipe", recipe, "--steps", "1",
                    "--dump-first-step", str(tmp_path)],
                   check=True, capture_output=True)
    text = read_example(example)
    pipeline = (f"fp4train-cpu-pipeline{{recipe={recipe} numerics=runtime "
                f"step-arg={step_arg(ctx, text)}}}")
    f = fp4train.compile(ctx.parse(text), "train_step", pipeline)
    args = []
    for i, (kind, shape, _, _) in enumerate(f.arguments):
        value = np.load(tmp_path / f"arg{i}.npy")
        args.append(value if kind == "tensor"
                    else float(value) if kind == "f32" else int(value))
    results = f(*args)
    assert len(results) == len(f.results)
    for j, result in enumerate(results):
        expected = np.load(tmp_path / f"result{j}.npy")
        assert result.shape == expected.shape
        assert result.tobytes() == expected.tobytes(), f"result {j}"


def test_scale_function(ctx):
    f = fp4train.compile(ctx.parse(SCALE), "scale",
                         "fp4train-cpu-pipeline{recipe=none}")
    assert f.arguments == [("tensor", (64,), 4, False), ("f32", (), 4, False)]
    x = np.arange(64, dtype=np.float32)
    (y,) = f(x, 0.5)
    assert np.array_equal(y, x * np.float32(0.5))
    # The module is not lowered in place.
    assert fp4train.compile(ctx.parse(SCALE), "scale") is not None


def test_compile_errors(ctx):
    module = ctx.parse(SCALE)
    with pytest.raises(fp4train.Error, match="no function @nope"):
        fp4train.compile(module, "nope")
    with pytest.raises(fp4train.Error, match="does not refer to a registered pass"):
        fp4train.compile(module, "scale", "no-such-pipeline")
    with pytest.raises(fp4train.Error, match="out-parameters"):
        fp4train.compile(module, "scale",
                         "fp4train-cpu-pipeline{recipe=none out-params=false}")
    with pytest.raises(TypeError):
        fp4train.compile(str(module), "scale")
    dynamic = ctx.parse("func.func @d(%x: tensor<?xf32>) -> tensor<?xf32> "
                        "{ return %x : tensor<?xf32> }")
    with pytest.raises(fp4train.Error, match="argument 0 has a type the host cannot pass"):
        fp4train.compile(dynamic, "d")


def test_call_errors(ctx):
    f = fp4train.compile(ctx.parse(SCALE), "scale",
                         "fp4train-cpu-pipeline{recipe=none}")
    x = np.zeros(64, dtype=np.float32)
    with pytest.raises(TypeError, match="expected 2 arguments, got 1"):
        f(x)
    with pytest.raises(TypeError, match="float32"):
        f(x.astype(np.float64), 1.0)
    with pytest.raises(TypeError, match="C-contiguous"):
        f(np.zeros(128, dtype=np.float32)[::2], 1.0)
    with pytest.raises(TypeError, match="must be a float"):
        f(x, "1")
    with pytest.raises(TypeError, match="numpy array"):
        f([0.0] * 64, 1.0)
    with pytest.raises(fp4train.Error, match=r"shape \(32\) but the function takes \(64\)"):
        f(np.zeros(32, dtype=np.float32), 1.0)


GATHER = """
func.func @gather(%table: tensor<4xf32>, %ids: tensor<3xi32>)
    -> (tensor<3xf32>, tensor<3xi32>) {
  %one = arith.constant 1 : i32
  %e = tensor.empty() : tensor<3xf32>
  %ei = tensor.empty() : tensor<3xi32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%ids : tensor<3xi32>) outs(%e : tensor<3xf32>) {
  ^bb0(%id: i32, %out: f32):
    %index = arith.index_cast %id : i32 to index
    %v = tensor.extract %table[%index] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<3xf32>
  %next = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                          iterator_types = ["parallel"]}
      ins(%ids : tensor<3xi32>) outs(%ei : tensor<3xi32>) {
  ^bb0(%id: i32, %out: i32):
    %n = arith.addi %id, %one : i32
    linalg.yield %n : i32
  } -> tensor<3xi32>
  return %y, %next : tensor<3xf32>, tensor<3xi32>
}
"""


def test_int32_tensors(ctx):
    # Token ids: i32 tensors in and out, as int32 arrays.
    f = fp4train.compile(ctx.parse(GATHER), "gather",
                         "fp4train-cpu-pipeline{recipe=none}")
    table = np.array([10, 11, 12, 13], dtype=np.float32)
    y, nxt = f(table, np.array([3, 0, 2], dtype=np.int32))
    assert y.tolist() == [13.0, 10.0, 12.0]
    assert nxt.dtype == np.int32 and nxt.tolist() == [4, 1, 3]
    with pytest.raises(TypeError, match="int32"):
        f(table, np.array([3, 0, 2], dtype=np.int64))


GATHER_ROWS = """
func.func @gather(%table: tensor<4x2xf32>, %ids: tensor<3xi32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<3xi32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%id: i32, %out: f32):
    %row = arith.index_cast %id : i32 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<4x2xf32>
    linalg.yield %v : f32
  } -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}
"""


def test_out_of_range_index_is_an_error(ctx):
    # [IDX1] An embedding lookup of a token id out of range: once a read
    # outside the table (SIGSEGV for large ids); now fp4train.Error, and the
    # compiled function stays usable.
    f = fp4train.compile(ctx.parse(GATHER_ROWS), "gather",
                         "fp4train-cpu-pipeline{recipe=none}")
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    (rows,) = f(table, np.array([3, 0, 1], dtype=np.int32))
    assert np.array_equal(rows, table[[3, 0, 1]])
    for bad in (4, -1, 2**31 - 1, -2**31):
        ids = np.array([0, bad, 1], dtype=np.int32)
        with pytest.raises(fp4train.Error,
                           match=rf"@gather: index {bad} is out of bounds of "
                                 r"dimension 0 \(size 4\) in tensor.extract "
                                 r"at <input>:11:"):
            f(table, ids)
    (rows,) = f(table, np.array([2, 2, 2], dtype=np.int32))
    assert np.array_equal(rows, table[[2, 2, 2]])


def test_index_checks_can_be_turned_off(ctx):
    f = fp4train.compile(ctx.parse(GATHER_ROWS), "gather",
                         "fp4train-cpu-pipeline{recipe=none}",
                         check_indices=False)
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    (rows,) = f(table, np.array([1, 2, 3], dtype=np.int32))
    assert np.array_equal(rows, table[[1, 2, 3]])
    with pytest.raises(TypeError, match="check_indices must be a bool"):
        fp4train.compile(ctx.parse(GATHER_ROWS), "gather", check_indices=1)


def test_gpt_step_guards_its_gathers(ctx):
    # The bundled GPT step clamps a token id or target out of range and makes
    # the loss NaN: no read outside the embedding table, checked or not.
    text = read_example("gpt_train_step.mlir")
    for check in (True, False):
        f = fp4train.compile(ctx.parse(text), "train_step",
                             "fp4train-cpu-pipeline{recipe=none}",
                             check_indices=check)
        # Parameters, then the token ids and targets (int32), then the step.
        args, ids = [], []
        for i, (kind, shape, _, is_param) in enumerate(f.arguments):
            if kind != "tensor":
                args.append(0)
            elif is_param:
                args.append(np.full(shape, 0.01, dtype=np.float32))
            else:
                ids.append(i)
                args.append(np.zeros(shape, dtype=np.int32))
        assert len(ids) == 2, "the step takes token ids and targets"
        (loss, *_) = f(*args)
        assert np.isfinite(loss)
        for i in ids:
            bad = list(args)
            bad[i] = np.full_like(args[i], 300)
            (loss, *_) = f(*bad)
            assert np.isnan(loss)


def test_integer_argument_that_does_not_fit(ctx):
    text = SCALE_STEP
    f = fp4train.compile(ctx.parse(text), "step",
                         "fp4train-cpu-pipeline{recipe=none}")
    with pytest.raises(TypeError,
                       match=r"argument 1 must be an int in \[-2\*\*63, 2\*\*63\), "
                             r"got 1000000000000000000000"):
        f(np.ones(4, dtype=np.float32), 10**21)


SCALE_STEP = """
func.func @step(%x: tensor<4xf32>, %n: i64) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
"""
