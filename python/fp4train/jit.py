"""JIT compilation of a function of a module (a training step)."""

from . import _fp4train

DEFAULT_PIPELINE = "fp4train-cpu-pipeline{recipe=nvfp4 numerics=runtime}"


class CompiledFunction:
    """A function of a module JIT-compiled for the CPU.

    Call it with one numpy array per tensor argument (float32, int32 for i32
    tensors such as token ids, or uint8/int8 for code tensors; C-contiguous,
    of the argument's shape) and a Python
    float or int per scalar argument, in argument order. Returns a tuple of
    new numpy arrays, one per result. The GIL is released during the call.
    Wrong types raise TypeError, wrong shapes fp4train.Error, and so does an
    index out of range (a token id past the vocabulary) when the function
    was compiled with ``check_indices=True``, the default.

    Attributes:
      arguments, results: one ``(kind, shape, element_bytes, is_param)`` per
        argument / result; kind is ``"tensor"``, ``"f32"`` or ``"i64"``.
    """

    def __init__(self, jit, function):
        self._jit = jit
        self.function = function
        self.arguments = jit.arguments()
        self.results = jit.results()

    def __call__(self, *args):
        return self._jit(*args)

    def __repr__(self):
        return (f"CompiledFunction(@{self.function}, "
                f"{len(self.arguments)} arguments, {len(self.results)} results)")


def compile(module, function="train_step", pipeline=DEFAULT_PIPELINE,
            check_indices=True):
    """JIT-compiles ``function`` of ``module`` with a CPU pipeline.

    ``pipeline`` is a textual pipeline as ``Module.run_pipeline`` takes it
    that lowers linalg on tensors to the LLVM dialect; a
    ``fp4train-cpu-pipeline{...}`` gets ``out-params=true`` added. The module
    is not changed (a copy is lowered). Returns a CompiledFunction. Raises
    fp4train.Error with the first diagnostic of the failing step (unknown
    function, unsupported signature, pipeline error). The GIL is released
    while compiling.

    ``check_indices`` (on by default) bounds-checks every element access
    whose indices come from data, such as an embedding lookup of token ids
    (fp4train-check-indices, [IDX1] in docs/robustness.md): a call with an
    index out of range raises fp4train.Error instead of reading or writing
    outside a buffer. Turn it off only for inputs known to be in range.
    """
    if not isinstance(module, _fp4train.Module):
        raise TypeError("module must be an fp4train.Module, got "
                        + type(module).__name__)
    if not isinstance(function, str) or not isinstance(pipeline, str):
        raise TypeError("function and pipeline must be str")
    if not isinstance(check_indices, bool):
        raise TypeError("check_indices must be a bool, got "
                        + type(check_indices).__name__)
    return CompiledFunction(
        _fp4train._Jit(module, function, pipeline, check_indices), function)
