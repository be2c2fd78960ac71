"""The peer: torchao 0.18's MX and NVFP4 quantization against the numerics
library, tensor for tensor (docs/frontends.md, "torchao")."""

import warnings

import fp4train
import numpy as np
import pytest
import torch

warnings.filterwarnings("ignore")
from torchao.prototype.mx_formats.config import ScaleCalculationMode  # noqa: E402
from torchao.prototype.mx_formats.kernels import unpack_uint4  # noqa: E402
from torchao.prototype.mx_formats.mx_tensor import MXTensor  # noqa: E402
from torchao.prototype.mx_formats.nvfp4_tensor import (  # noqa: E402
    NVFP4Tensor, per_tensor_amax_to_scale)
from torchao.quantization.quantize_.common.kernel_preference import (  # noqa: E402
    KernelPreference)

ELEMENT = {"mxfp4": torch.float4_e2m1fn_x2, "mxfp8-e4m3": torch.float8_e4m3fn}


def wide_range(rows=64, cols=256, seed=0):
    """Normal values whose rows span 2^-20 .. 2^20: every block scale in the
    normal range, exponents of all sizes."""
    g = torch.Generator().manual_seed(seed)
    exponents = torch.randint(-20, 20, (rows, 1), generator=g).float()
    return (torch.randn(rows, cols, generator=g) * torch.exp2(exponents)).contiguous()


def torchao_mx(x, format):
    mx = MXTensor.to_mx(x, ELEMENT[format], block_size=32,
                        scaling_mode=ScaleCalculationMode.FLOOR,
                        kernel_preference=KernelPreference.EMULATED)
    codes = (unpack_uint4(mx.qdata) if format == "mxfp4"
             else mx.qdata.view(torch.uint8))
    return (codes.numpy().reshape(x.shape), mx.scale.view(torch.uint8).numpy(),
            mx.dequantize(torch.float32).numpy())


@pytest.mark.parametrize("format", ["mxfp4", "mxfp8-e4m3"])
def test_mx_is_bit_identical(format):
    # torchao's FLOOR scale is the OCP rule of [MX1], elements round to
    # nearest even and saturate: codes, scales and decoded values all equal.
    x = wide_range()
    codes, scales, values = torchao_mx(x, format)
    q = fp4train.quantize(x.numpy(), format)
    assert np.array_equal(codes, q.codes)
    assert np.array_equal(scales.reshape(q.scales.shape), q.scales)
    assert np.array_equal(values, q.dequantize())


def test_mx_differs_where_the_scale_is_2_to_the_minus_127():
    # Where E8M0's smallest scale (byte 0, 2^-127) is stored, torchao divides
    # the block by 2^-126 (the smallest normal float32): its codes are half
    # the elements, rounded (0.75 to 1 by ties-to-even), and decode to about
    # half the input. fp4train's codes are the block over 2^-127 rounded to
    # E2M1, which decode back to the input here (values on the grid).
    x = torch.zeros(1, 32)
    x[0, :4] = torch.tensor([1.0, 1.5, 3.0, 6.0]) * 2.0**-127
    codes, scales, values = torchao_mx(x.contiguous(), "mxfp4")
    q = fp4train.quantize(x.numpy(), "mxfp4")
    assert scales.ravel().tolist() == q.scales.ravel().tolist() == [0]
    assert np.array_equal(q.dequantize(), x.numpy())
    halved = torch.zeros(1, 32)
    halved[0, :4] = torch.tensor([0.5, 1.0, 1.5, 3.0]) * 2.0**-127
    assert np.array_equal(values, halved.numpy())


def test_nvfp4_codes_and_scales_are_identical():
    # NVFP4 with torchao's per-tensor scale amax / (6 * 448), which is
    # fp4train's decode scale S_dec ([NV1]): codes, block scales and S_dec
    # equal. Decoded values can differ by one float32 ulp: torchao multiplies
    # S_dec by the block scale first, fp4train the element by the block scale.
    x = torch.randn(64, 256, generator=torch.Generator().manual_seed(1))
    scale = per_tensor_amax_to_scale(x.abs().amax())
    t = NVFP4Tensor.to_nvfp4(x, 16, per_tensor_scale=scale)
    q = fp4train.quantize(x.numpy(), "nvfp4")
    assert np.array_equal(unpack_uint4(t.qdata).numpy().reshape(x.shape), q.codes)
    assert np.array_equal(t.scale.view(torch.uint8).numpy().reshape(q.scales.shape),
                          q.scales)
    assert np.float32(scale) == q.global_scale[1]
    ulps = (t.dequantize(torch.float32).numpy().view(np.int32)
            - q.dequantize().view(np.int32))
    assert np.abs(ulps).max() <= 1


def test_nvfp4_differs_below_the_smallest_normal_block_scale():
    # torchao clamps NVFP4 block scales to [2^-6, 448] (no subnormal or zero
    # E4M3 scale); fp4train rounds amax_b / 6 * S_enc to E4M3 with subnormals
    # ([NV1]). A block whose amax is a millionth of the tensor's gets scale
    # code 8 (2^-6) from torchao and 0 from fp4train; blocks in the normal
    # range stay identical.
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(2))
    x[1] *= 1e-6
    scale = per_tensor_amax_to_scale(x.abs().amax())
    t = NVFP4Tensor.to_nvfp4(x.contiguous(), 16, per_tensor_scale=scale)
    q = fp4train.quantize(x.contiguous().numpy(), "nvfp4")
    theirs = t.scale.view(torch.uint8).numpy().reshape(q.scales.shape)
    assert theirs[1].tolist() == [8] * 4
    assert q.scales[1].tolist() == [0] * 4
    for row in (0, 2, 3):
        assert np.array_equal(theirs[row], q.scales[row])
