"""role_report against fp4-opt's fp4train-annotate-roles report."""

import json
import subprocess

import fp4train
import pytest

from conftest import EXAMPLES, read_example

CASES = [
    ("mlp_train_step.mlir", "out-in"),
    ("mlp_train_step_jax.mlir", "in-out"),
    ("mlp_train_step_jax.mlir", "out-in"),
    ("transformer_block_train_step.mlir", "out-in"),
]


@pytest.mark.parametrize("example, layout", CASES)
def test_role_report_matches_fp4_opt(ctx, tools_dir, example, layout):
    report = fp4train.role_report(ctx.parse(read_example(example)),
                                  weight_layout=layout)
    expected = json.loads(subprocess.run(
        [str(tools_dir / "fp4-opt"), str(EXAMPLES / example),
         f"-fp4train-annotate-roles=report=- weight-layout={layout}",
         "-o", "/dev/null"],
        check=True, capture_output=True, text=True).stdout)
    assert len(report) == len(expected) > 0
    for got, want in zip(report, expected):
        assert set(got) == {"role", "op", "param", "block", "m", "n", "k",
                            "batch", "loc"}
        # Same line:column; the file name is <input> for parsed text.
        assert got.pop("loc").split(":")[1:] == want.pop("loc").split(":")[1:]
        assert got == want


def test_mlp_roles(ctx):
    roles = [r["role"] for r in fp4train.role_report(
        ctx.parse(read_example("mlp_train_step.mlir")))]
    assert roles.count("fprop") == 3 and roles.count("dgrad") == 2
    assert roles.count("wgrad") == 3


def test_role_report_leaves_module_unchanged(ctx):
    module = ctx.parse(read_example("mlp_train_step.mlir"))
    before = str(module)
    fp4train.role_report(module)
    assert str(module) == before


def test_role_report_errors(ctx):
    module = ctx.parse(read_example("mlp_train_step.mlir"))
    with pytest.raises(fp4train.Error, match="unknown weight layout 'sideways'"):
        fp4train.role_report(module, weight_layout="sideways")
    with pytest.raises(TypeError):
        fp4train.role_report("not a module")
    with pytest.raises(TypeError):
        fp4train.role_report(module, weight_layout=1)
