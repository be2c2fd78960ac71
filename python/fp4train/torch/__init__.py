"""fp4train.torch: PyTorch models as fp4train training steps.

``export_training_step(model, loss_fn, *example_data)`` captures one training
step of ``model`` (forward, ``loss_fn``, backward) as a joint graph, imports
it with torch-mlir into linalg on tensors, and returns a ``TrainingStep``:
the step as MLIR in the project's convention, its role report by parameter
name, and ``run`` (the CPU JIT under any recipe) and ``compile`` (the GPU
pipelines). ``train`` loops ``run`` with a torch optimizer. The path, its
rules and its limits: docs/frontends.md.

Importing this module needs ``torch`` and ``torch-mlir`` (scripts/setup.sh
installs pinned versions into the project's virtual environment).
"""

import torch

from .. import Error
from .._frontend import Step, check_not_empty
from ._capture import DataSpec, capture, check_loss, trainable_parameters
from ._experts import capacity_dispatch
from ._import import import_step

__all__ = ["TrainingStep", "export_training_step", "train"]


class TrainingStep(Step):
    """One training step of a PyTorch model as an fp4train step (the
    attributes and ``roles``/``compile`` of every front end's step, and):

    Attributes:
      model: the torch module whose parameters ``run`` reads; a tied
        parameter appears once in ``param_names``, under its first name.
    """

    def __init__(self, model, text, names, params, specs):
        super().__init__(text, names, len(specs), "out-in", "torch-mlir")
        self.model = model
        self._params = list(params)
        self._specs = list(specs)

    def run(self, recipe, *data, step=None, **overrides):
        """One step on the CPU JIT with the model's current parameters.

        ``recipe`` is a preset (``f32``, ``nvfp4``, ``mxfp4-hadamard``, ...:
        docs/recipes.md); keywords override one choice of it as the
        pipelines' options do (``stochastic_rounding=False``,
        ``roles=["fprop", "dgrad"]``). ``step`` seeds stochastic rounding and
        random Hadamard signs; by default it counts the calls. Returns
        ``(loss, {name: gradient})`` as a float and torch tensors.
        """
        if len(data) != len(self._specs):
            raise Error(f"the step takes {len(self._specs)} data arguments, "
                        f"got {len(data)}")
        inputs = [spec.convert(i, value).numpy()
                  for i, (spec, value) in enumerate(zip(self._specs, data))]
        weights = [p.detach().contiguous().numpy() for p in self._params]
        loss, grads = self._call(recipe, inputs, weights, step, overrides)
        return loss, {name: torch.from_numpy(g).reshape(p.shape)
                      for name, g, p in zip(self.param_names, grads,
                                            self._params)}


def export_training_step(model, loss_fn, *example_data, expert_capacity=None):
    """Captures one training step of ``model`` and imports it with torch-mlir.

    ``loss_fn(model, *data)`` returns the scalar loss; ``example_data`` fixes
    the data's shapes and dtypes (float32 tensors, or int64/int32 ids, which
    the step takes as int32). Hugging Face mixture-of-experts layers export
    with capacity dispatch ([FE8]): each expert takes up to
    ``expert_capacity`` routed tokens, by default the most any expert
    receives on the example batch. Returns a TrainingStep. Raises fp4train.Error
    for a model without trainable parameters, a loss that is not a float32
    scalar, data of another dtype, a parameter, buffer or datum with no
    elements (a dimension of size 0), random ops (dropout), a step whose
    trace fails (with the original exception), and anything torch-mlir
    cannot import (with its message).
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got "
                        f"{type(model).__name__}")
    if not callable(loss_fn):
        raise TypeError("loss_fn must be callable")
    named = trainable_parameters(model)
    if not named:
        raise Error("the model has no trainable parameters")
    names = [name for name, _ in named]
    params = [p for _, p in named]
    for name, p in named:
        if p.dtype != torch.float32:
            raise Error(f"parameter {name} has dtype {p.dtype}; fp4train steps "
                        "keep float32 master weights (autocast for bf16)")
    # Frozen parameters and buffers become constants of the step.
    for name, p in model.named_parameters():
        check_not_empty(f"parameter {name}", p.shape)
    for name, buffer in model.named_buffers():
        check_not_empty(f"buffer {name}", buffer.shape)
    specs = [DataSpec(i, value) for i, value in enumerate(example_data)]
    with capacity_dispatch(model, expert_capacity) as route:
        check_loss(model, loss_fn, example_data)
        if route:
            route.measuring = False
        graph = capture(model, loss_fn, names, params, specs, example_data)
    return TrainingStep(model, import_step(graph, specs, params, names), names,
                        params, specs)


def train(step, batches, recipe, optimizer, **overrides):
    """Trains ``step.model`` on ``batches`` (an iterable of data tuples):
    each step runs ``step.run`` under ``recipe``, writes the gradients into
    the parameters' ``.grad`` and calls ``optimizer.step()``. Returns the
    list of losses."""
    losses = []
    parameters = dict(step.model.named_parameters())
    for data in batches:
        if not isinstance(data, (tuple, list)):
            data = (data,)
        loss, grads = step.run(recipe, *data, **overrides)
        optimizer.zero_grad(set_to_none=False)
        for name, grad in grads.items():
            parameter = parameters[name]
            if parameter.grad is None:
                parameter.grad = grad.clone()
            else:
                parameter.grad.copy_(grad)
        optimizer.step()
        losses.append(loss)
    return losses
