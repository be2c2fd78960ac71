"""fp4train: 4-bit training as a compiler feature, from Python.

The package wraps fp4train's C API (libFP4TrainCAPI.so, one copy of MLIR):

- ``Context()`` / ``ctx.parse(text) -> Module`` / ``Module.run_pipeline(p)``
  / ``str(module)``: MLIR modules with the fp4train dialect and pipelines;
- ``role_report(module)``: the Fprop/Dgrad/Wgrad role of every contraction;
- ``quantize(x, format, ...) -> QuantizedTensor``: the numerics library,
  bit-identical to ``fp4-quant``;
- ``compile(module, function, pipeline)``: a JIT-compiled function callable
  on numpy arrays.

Every MLIR or numerics error is raised as ``fp4train.Error`` carrying the
diagnostics text; wrong argument types raise ``TypeError``.
"""

from ._fp4train import Context, Error, Module
from .jit import CompiledFunction, compile
from .numerics import QuantizedTensor, quantize
from .roles import role_report

# Shown as fp4train.Error (and Context, Module), the names users catch.
for _name in ("Context", "Error", "Module"):
    globals()[_name].__module__ = __name__
del _name

__all__ = [
    "CompiledFunction",
    "Context",
    "Error",
    "Module",
    "QuantizedTensor",
    "compile",
    "quantize",
    "role_report",
]
