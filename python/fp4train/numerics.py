"""Block quantization (MXFP4, NVFP4, MXFP8) bit-identical to ``fp4-quant``."""

import numpy as np

from . import _fp4train

_FORMATS = ("mxfp4", "nvfp4", "mxfp8-e4m3", "mxfp8-e5m2")


def _check(name, value, types, what):
    if isinstance(value, bool) or not isinstance(value, types):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")


def _options(format, axis, block, rounding, scale_mode, seed, amax, hadamard,
             signs, step):
    """fp4-quant's options (by their command-line names) for these keyword
    arguments: only what differs from fp4-quant's defaults, so invalid
    combinations are rejected exactly as fp4-quant rejects them."""
    _check("format", format, str, "a str")
    _check("axis", axis, int, "an int")
    _check("rounding", rounding, str, "a str")
    _check("scale_mode", scale_mode, str, "a str")
    _check("seed", seed, int, "an int")
    _check("signs", signs, str, "a str")
    _check("step", step, int, "an int")
    options = {"format": format, "axis": axis}
    if block is not None:
        _check("block", block, (int, str), "16, 32 or '16x16'")
        options["block"] = str(block)
    if rounding != "rne":
        options["rounding"] = rounding
    if scale_mode != "floor":
        options["scale-mode"] = scale_mode
    if seed < 0:
        raise _fp4train.Error(f"invalid seed '{seed}'")
    if seed:
        options["seed"] = seed
    if amax is not None:
        _check("amax", amax, (int, float), "a number")
        try:
            options["amax"] = float(amax)
        except OverflowError:
            raise TypeError("option 'amax' must be a float within the range "
                            f"of float32, got {amax!r:.40}") from None
    if hadamard is not None:
        _check("hadamard", hadamard, int, "an int")
        options["hadamard"] = hadamard
        options["signs"] = signs
    elif signs != "fixed":
        options["signs"] = signs
    if step < 0:
        raise _fp4train.Error(f"invalid step '{step}'")
    if step:
        options["step"] = step
    return options


class QuantizedTensor:
    """The result of ``quantize``.

    Attributes:
      codes: uint8 array, one element code per element, in the input's shape.
      scales: uint8 array of block scale codes (E8M0 for MX formats, E4M3 for
        NVFP4): the input's shape with the blocked dimension (both of the
        last two for 16x16 blocks) divided by the block size.
      global_scale: None for MX formats; for NVFP4 a float32 array
        ``[amax, S_dec]`` (the tensor's absolute maximum and the decode scale
        of [NV1]).
      format: the format name.
    """

    def __init__(self, codes, scales, global_scale, format, options):
        self.codes = codes
        self.scales = scales
        self.global_scale = global_scale
        self.format = format
        self._options = options

    def dequantize(self, unrotate=False, global_scale=True):
        """Decodes the codes and scales to a float32 array of the input's
        shape, as ``fp4-quant``'s ``OUT.deq.npy``. With a Hadamard rotation
        the values stay rotated unless ``unrotate`` (``--unrotate``). With
        ``global_scale=False`` an NVFP4 tensor decodes to its elements times
        their block scales alone (exact in float32): the operands whose
        products [GEMM1] sums before it applies the global scales."""
        options = dict(self._options)
        if unrotate:
            options["unrotate"] = True
        decode = 1.0
        if self.global_scale is not None and global_scale:
            decode = float(self.global_scale[1])
        return _fp4train._dequantize(self.codes, self.scales, decode, options)

    def __repr__(self):
        return (f"QuantizedTensor(format={self.format!r}, "
                f"shape={self.codes.shape}, scales={self.scales.shape})")


def quantize(x, format, *, axis=-1, block=None, rounding="rne",
             scale_mode="floor", seed=0, amax=None, hadamard=None,
             signs="fixed", step=0):
    """Block-quantizes a float32 array like ``fp4-quant quantize``.

    Args:
      x: a float32, C-contiguous numpy array (used in place, never copied;
        anything else raises TypeError instead of being converted).
      format: ``"mxfp4"``, ``"nvfp4"``, ``"mxfp8-e4m3"`` or ``"mxfp8-e5m2"``.
      axis: the blocked axis (``--axis``), negative from the end.
      block: 16, 32 or ``"16x16"`` (``--block``); None for the format's
        default (32 for MX, 16 for NVFP4).
      rounding: ``"rne"`` or ``"sr"`` (stochastic, [SR1]).
      scale_mode: ``"floor"`` or ``"rceil"`` (MX formats only).
      seed: keys stochastic rounding and random Hadamard signs; nonzero only
        with ``rounding="sr"`` or ``signs="random"``.
      amax: NVFP4 only: the tensor amax to use instead of computing it.
      hadamard: rotate blocks of this many elements (16, 32, 64, 128 or 256)
        along ``axis`` before quantizing ([H1]); None for no rotation.
      signs: ``"none"``, ``"fixed"`` or ``"random"`` signs of the rotation.
      step: the step that re-draws random signs (``signs="random"``).

    Returns a QuantizedTensor. Raises fp4train.Error with fp4-quant's message
    for invalid options or shapes. The GIL is released while quantizing.
    """
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a numpy.ndarray, got {type(x).__name__}")
    if x.dtype != np.float32:
        raise TypeError(f"x must be float32, got {x.dtype} (convert it "
                        "explicitly, e.g. x.astype(numpy.float32))")
    if not x.flags.c_contiguous:
        raise TypeError("x must be C-contiguous (use numpy.ascontiguousarray)")
    options = _options(format, axis, block, rounding, scale_mode, seed, amax,
                       hadamard, signs, step)
    codes, scales, global_scale = _fp4train._quantize(x, options)
    if format != "nvfp4":
        global_scale = None
    return QuantizedTensor(codes, scales, global_scale, format, options)
