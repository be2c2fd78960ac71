"""quantize: bit-identical to fp4-quant on every format and option, and
every error path."""

import subprocess

import fp4train
import numpy as np
import pytest

# (python keyword arguments, the same as fp4-quant options)
CASES = [
    ({}, []),
    ({"scale_mode": "rceil"}, ["--scale-mode", "rceil"]),
    ({"block": 16}, ["--block", "16"]),
    ({"axis": 0}, ["--axis", "0"]),
    ({"rounding": "sr"}, ["--rounding", "sr"]),
    ({"rounding": "sr", "seed": 7}, ["--rounding", "sr", "--seed", "7"]),
    ({"hadamard": 32}, ["--hadamard", "32", "--signs", "fixed"]),
    ({"hadamard": 16, "signs": "none"}, ["--hadamard", "16", "--signs", "none"]),
    ({"hadamard": 64, "signs": "random", "seed": 5, "step": 3},
     ["--hadamard", "64", "--signs", "random", "--seed", "5", "--step", "3"]),
]
NV_CASES = [
    ({}, []),
    ({"block": "16x16"}, ["--block", "16x16"]),
    ({"amax": 7.5}, ["--amax", "7.5"]),
    ({"rounding": "sr", "seed": 11}, ["--rounding", "sr", "--seed", "11"]),
    ({"axis": -2}, ["--axis", "-2"]),
    ({"hadamard": 16, "signs": "random", "seed": 2},
     ["--hadamard", "16", "--signs", "random", "--seed", "2"]),
]
FORMATS = ["mxfp4", "mxfp8-e4m3", "mxfp8-e5m2"]


def params():
    for fmt in FORMATS:
        for kwargs, flags in CASES:
            if fmt != "mxfp4" and kwargs.get("rounding") == "sr":
                continue  # SR is defined for E2M1 elements only
            yield fmt, kwargs, flags
    for kwargs, flags in NV_CASES:
        yield "nvfp4", kwargs, flags


@pytest.fixture(scope="module")
def x():
    rng = np.random.default_rng(1234)
    data = rng.standard_normal((64, 128)).astype(np.float32)
    data[3, 5] = 40.0  # an outlier block
    data[7, :32] = 0.0  # an all-zero block
    return data


def run_fp4_quant(tools_dir, tmp_path, x, fmt, flags):
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    subprocess.run([str(tools_dir / "fp4-quant"), "quantize", "--format", fmt,
                    *flags, str(tmp_path / "x.npy"), str(out)],
                   check=True, capture_output=True, text=True)
    load = lambda suffix: np.load(f"{out}.{suffix}.npy")
    return (load("codes"), load("scales"), load("deq"),
            load("global") if fmt == "nvfp4" else None)


@pytest.mark.parametrize("fmt, kwargs, flags", list(params()),
                         ids=lambda v: str(v) if not isinstance(v, list) else "")
def test_bit_identical_to_fp4_quant(tools_dir, tmp_path, x, fmt, kwargs, flags):
    codes, scales, deq, glob = run_fp4_quant(tools_dir, tmp_path, x, fmt, flags)
    q = fp4train.quantize(x, fmt, **kwargs)
    assert q.codes.dtype == np.uint8 and q.codes.shape == x.shape
    assert np.array_equal(q.codes, codes)
    assert q.scales.dtype == np.uint8 and np.array_equal(q.scales, scales)
    assert q.dequantize().tobytes() == deq.tobytes()
    if glob is None:
        assert q.global_scale is None
    else:
        assert q.global_scale.tobytes() == glob.tobytes()


def test_unrotate_matches_fp4_quant(tools_dir, tmp_path, x):
    flags = ["--hadamard", "32", "--signs", "fixed", "--unrotate"]
    _, _, deq, _ = run_fp4_quant(tools_dir, tmp_path, x, "mxfp4", flags)
    q = fp4train.quantize(x, "mxfp4", hadamard=32)
    assert q.dequantize(unrotate=True).tobytes() == deq.tobytes()


def test_input_is_not_modified(x):
    before = x.copy()
    fp4train.quantize(x, "nvfp4", hadamard=16)
    assert np.array_equal(x, before)


def test_3d_and_strided_axis():
    x = np.arange(2 * 32 * 4, dtype=np.float32).reshape(2, 32, 4) / 50
    q = fp4train.quantize(x, "mxfp4", axis=1)
    assert q.scales.shape == (2, 1, 4)


@pytest.mark.parametrize("kwargs, message", [
    ({"format": "fp3"}, "invalid format 'fp3'"),
    ({"format": "nvfp4", "scale_mode": "rceil"}, "scale-mode applies to the MX formats only"),
    ({"format": "mxfp4", "scale_mode": "ceil"}, "invalid scale-mode 'ceil'"),
    ({"format": "mxfp4", "block": 24}, "invalid block '24'"),
    ({"format": "mxfp4", "axis": 2}, "axis 2 is out of range for a rank-2 tensor"),
    ({"format": "mxfp4", "rounding": "up"}, "invalid rounding 'up'"),
    ({"format": "mxfp4", "seed": 3}, "seed requires rounding sr or signs random"),
    ({"format": "mxfp4", "hadamard": 12}, "invalid hadamard '12'"),
    ({"format": "mxfp4", "hadamard": 256}, "not divisible by the hadamard size 256"),
    ({"format": "mxfp4", "signs": "random"}, "signs requires hadamard"),
    ({"format": "mxfp4", "hadamard": 16, "step": 2}, "step requires signs random"),
    ({"format": "mxfp4", "hadamard": 16, "signs": "odd"}, "invalid signs 'odd'"),
    ({"format": "mxfp8-e4m3", "rounding": "sr"}, "stochastic"),
    ({"format": "mxfp4", "seed": -1}, "invalid seed"),
])
def test_option_errors(kwargs, message):
    x = np.ones((4, 128), dtype=np.float32)
    fmt = kwargs.pop("format")
    with pytest.raises(fp4train.Error, match=message):
        fp4train.quantize(x, fmt, **kwargs)


def test_shape_error():
    with pytest.raises(fp4train.Error,
                       match="dimension 1 .size 30. is not divisible by the block size 32"):
        fp4train.quantize(np.ones((2, 30), dtype=np.float32), "mxfp4")


@pytest.mark.parametrize("value", [
    np.ones((2, 32), dtype=np.float64),
    np.ones((2, 32), dtype=np.float16),
    np.ones((32, 2), dtype=np.float32).T,
    [[1.0] * 32] * 2,
    None,
])
def test_no_silent_conversion(value):
    with pytest.raises(TypeError):
        fp4train.quantize(value, "mxfp4")


@pytest.mark.parametrize("kwargs", [
    {"axis": "0"}, {"axis": True}, {"seed": 1.5}, {"rounding": None},
    {"block": 16.0}, {"hadamard": "16"}, {"amax": "1"},
])
def test_option_type_errors(kwargs):
    with pytest.raises(TypeError):
        fp4train.quantize(np.ones((2, 32), dtype=np.float32), "mxfp4", **kwargs)


@pytest.mark.parametrize("kwargs, name", [
    ({"seed": 10**400}, "seed"), ({"seed": 2**64}, "seed"),
    ({"axis": 10**400}, "axis"), ({"axis": -2**63 - 1}, "axis"),
    ({"hadamard": 10**400}, "hadamard"), ({"amax": 10**400}, "amax"),
])
def test_integer_that_does_not_fit_names_the_option(kwargs, name):
    # Once pybind11's "Unable to cast Python instance to C++ type".
    with pytest.raises(TypeError, match=f"option '{name}' must be "):
        fp4train.quantize(np.ones((2, 32), dtype=np.float32), "mxfp4",
                          **kwargs)
