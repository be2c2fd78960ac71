"""fp4train.jax: JAX loss functions as fp4train training steps.

``export_training_step(loss_fn, params, *example_data)`` lowers
``jax.value_and_grad`` of ``loss_fn(params, *data)`` to StableHLO, converts
it to linalg on tensors with IREE's StableHLO input pipeline (its compiler's
Python bindings, from PyPI), and returns a ``TrainingStep``: the step as MLIR
in the project's convention, its role report by parameter name (weights read
in JAX's ``in-out`` layout), ``run`` on the CPU JIT under any recipe and
``compile`` for the GPU pipelines (docs/frontends.md).

Importing this module needs ``jax`` and ``iree-base-compiler``
(scripts/setup.sh installs pinned versions into the project's virtual
environment).
"""

import jax
import numpy as np

from .. import Error
from .._frontend import (Step, check_dialects, check_not_empty,
                         complete_signature, lower, tensor_type)

__all__ = ["TrainingStep", "export_training_step"]

# IREE's conversion of StableHLO (and CHLO) to linalg on tensors.
_STABLEHLO_TO_LINALG = ("builtin.module("
                        "iree-stablehlo-input-transformation-pipeline)")
_ELEMENT = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32"}


def _name(path):
    """``dense1.kernel`` for the pytree path of params["dense1"]["kernel"]."""
    parts = []
    for key in path:
        for attribute in ("key", "idx", "name"):
            if hasattr(key, attribute):
                parts.append(str(getattr(key, attribute)))
                break
        else:
            parts.append(str(key))
    return ".".join(parts)


def _array_type(value):
    """``tensor<...xf32>`` (or ``i32``) of an array; None for other dtypes."""
    element = _ELEMENT.get(np.asarray(value).dtype)
    return tensor_type(np.shape(value), element) if element else None


def _data_type(index, value):
    if _array_type(value) is None:
        raise Error(f"data argument {index} has dtype "
                    f"{np.asarray(value).dtype}; a step takes float32 arrays "
                    "or int32 ids")
    return _array_type(value)


class TrainingStep(Step):
    """One training step of a JAX loss function as an fp4train step (the
    attributes and ``roles``/``compile`` of every front end's step, and
    ``run``)."""

    def __init__(self, text, names, treedef, param_types, data_types):
        super().__init__(text, names, len(data_types), "in-out", "IREE")
        self._treedef = treedef
        self._param_types = param_types
        self._data_types = data_types

    def run(self, recipe, params, *data, step=None, **overrides):
        """One step on the CPU JIT: ``(loss, grads)``, the gradients in the
        pytree structure of ``params``. ``recipe``, ``step`` and the
        overrides as in fp4train.torch's ``run``."""
        leaves, treedef = jax.tree_util.tree_flatten(params)
        if treedef != self._treedef:
            raise Error(f"params have the structure {treedef}; the step was "
                        f"exported for {self._treedef}")
        if len(data) != len(self._data_types):
            raise Error(f"the step takes {len(self._data_types)} data "
                        f"arguments, got {len(data)}")
        for i, value in enumerate(data):
            if _data_type(i, value) != self._data_types[i]:
                raise Error(f"data argument {i} is a {_data_type(i, value)}; "
                            f"the step was exported for {self._data_types[i]}")
        for name, leaf, wanted in zip(self.param_names, leaves,
                                      self._param_types):
            if _array_type(leaf) != wanted:
                raise Error(f"parameter {name} is not a {wanted}")
        arrays = [np.ascontiguousarray(np.asarray(v)) for v in data]
        weights = [np.ascontiguousarray(np.asarray(v)) for v in leaves]
        loss, grads = self._call(recipe, arrays, weights, step, overrides)
        return loss, jax.tree_util.tree_unflatten(self._treedef, grads)


def export_training_step(loss_fn, params, *example_data):
    """Lowers one training step of ``loss_fn(params, *data)`` (a float32
    scalar) for the pytree ``params`` of float32 arrays; ``example_data``
    fixes the data's shapes and dtypes (float32, or int32 ids). Returns a
    TrainingStep. Raises fp4train.Error for no parameters, a loss that is not
    a float32 scalar, data or parameters of another dtype, and anything IREE
    cannot convert (with its message)."""
    if not callable(loss_fn):
        raise TypeError("loss_fn must be callable")
    paths, treedef = jax.tree_util.tree_flatten_with_path(params)
    if not paths:
        raise Error("params holds no arrays: nothing to train")
    names = [_name(path) for path, _ in paths]
    leaves = [leaf for _, leaf in paths]
    for name, leaf in zip(names, leaves):
        if np.asarray(leaf).dtype != np.float32:
            raise Error(f"parameter {name} has dtype {np.asarray(leaf).dtype}; "
                        "fp4train steps keep float32 weights")
        check_not_empty(f"parameter {name}", np.shape(leaf))
    data_types = [_data_type(i, v) for i, v in enumerate(example_data)]
    for i, value in enumerate(example_data):
        check_not_empty(f"data argument {i}", np.shape(value))
    param_types = [tensor_type(np.shape(leaf), "f32") for leaf in leaves]

    try:
        loss = jax.eval_shape(loss_fn, params, *example_data)
    except Exception as error:  # what the user's function raised
        raise Error(f"loss_fn fails on the example: {error}") from None
    if not hasattr(loss, "shape") or loss.shape != () or \
            np.dtype(loss.dtype) != np.float32:
        raise Error("loss_fn must return a float32 scalar; it returned "
                    f"{getattr(loss, 'shape', type(loss).__name__)} "
                    f"{getattr(loss, 'dtype', '')}")

    count = len(example_data)

    def step(*args):
        weights = jax.tree_util.tree_unflatten(treedef, args[count:])
        value, grads = jax.value_and_grad(loss_fn)(weights, *args[:count])
        return (value, *jax.tree_util.tree_leaves(grads))

    specs = [jax.ShapeDtypeStruct(np.shape(v), np.dtype(v.dtype))
             for v in (*example_data, *leaves)]
    # keep_unused: the step takes every datum and parameter ([FE1]), those
    # the loss does not read (gradient zero) included; jit would drop them.
    stablehlo = jax.jit(step, keep_unused=True).lower(*specs).as_text(
        debug_info=True)

    from iree.compiler import ir
    context = ir.Context()
    try:
        module = ir.Module.parse(stablehlo, context)
    except Exception as error:
        raise Error(f"IREE cannot read JAX's StableHLO: {error}") from None
    lower(ir, module, (_STABLEHLO_TO_LINALG,), "IREE")
    check_dialects(ir, module, "IREE")
    text = complete_signature(ir, module, data_types, param_types, names)
    return TrainingStep(text, names, treedef, param_types, data_types)
