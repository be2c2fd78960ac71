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

import numpy as np
import torch

from .. import Context, Error, compile as _jit_compile, role_report
from ._capture import DataSpec, capture, check_loss, trainable_parameters
from ._import import import_step

__all__ = ["TrainingStep", "export_training_step", "train"]

FUNCTION = "train_step"

def _pipeline_options(recipe, step_arg, overrides):
    """The option list of a quantizing pipeline: the recipe, the step and the
    recipe overrides given as keywords (``stochastic_rounding=False`` is
    ``stochastic-rounding=0``, ``roles=["fprop"]`` is ``roles=fprop``)."""
    if not isinstance(recipe, str):
        raise TypeError(f"recipe must be a str, got {type(recipe).__name__}")
    options = [f"recipe={recipe}",
               f"step-arg={step_arg}"]
    for key, value in overrides.items():
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        text = str(value)
        if any(c in text for c in " {}="):
            raise Error(f"recipe override {key}={text!r} is not a single value")
        options.append(f"{key.replace('_', '-')}={text}")
    return " ".join(options)


class TrainingStep:
    """One training step of a PyTorch model as an fp4train step.

    Attributes:
      mlir: the step as MLIR text (upstream dialects): ``func.func
        @train_step(data..., params... {fp4train.param}, %step: i64) ->
        (loss, one gradient per parameter in parameter order)``.
      param_names: the model's parameter names in argument order (a tied
        parameter appears once, under its first name).
      model: the torch module whose parameters ``run`` reads.
    """

    def __init__(self, model, context, module, names, params, specs):
        self.model = model
        self._context = context
        self.module = module
        self.param_names = list(names)
        self._params = list(params)
        self._specs = list(specs)
        self._compiled = {}
        self._steps = 0

    @property
    def mlir(self):
        return str(self.module)

    @property
    def step_arg(self):
        """Index of the i64 step argument (after the data and parameters)."""
        return len(self._specs) + len(self._params)

    def roles(self, weight_layout="out-in"):
        """The role report by parameter name.

        Returns ``{name: [contraction, ...]}`` for every parameter, each
        contraction a dict of the role report (``role``, ``op``, ``m``,
        ``n``, ``k``, ``batch``, ``loc``, the ``loc`` pointing into the
        model's Python source where torch recorded it). A parameter that takes
        part in no contraction (biases, norms, embeddings) maps to ``[]``.
        Contractions of no parameter (attention's) are under the key None.
        """
        report = role_report(self.module, weight_layout)
        by_name = {name: [] for name in self.param_names}
        by_name[None] = []
        first = len(self._specs)
        for entry in report:
            index = entry.pop("param")
            name = (self.param_names[index - first]
                    if index is not None and first <= index < self.step_arg
                    else None)
            by_name[name].append(entry)
        return by_name

    def _function(self, recipe, overrides):
        key = (recipe, tuple(sorted(overrides.items())))
        if key not in self._compiled:
            options = _pipeline_options(recipe, self.step_arg, overrides)
            self._compiled[key] = _jit_compile(
                self.module, FUNCTION,
                f"fp4train-cpu-pipeline{{{options} numerics=runtime}}")
        return self._compiled[key]

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
        weights = [p.detach().contiguous().numpy()
                   for p in self._params]
        if step is None:
            step = self._steps
        self._steps = step + 1
        results = self._function(recipe, overrides)(*inputs, *weights,
                                                    int(step))
        loss = float(results[0])
        grads = {name: torch.from_numpy(np.asarray(g)).reshape(p.shape)
                 for name, g, p in zip(self.param_names, results[1:],
                                       self._params)}
        return loss, grads

    def compile(self, pipeline="fp4train-cuda-pipeline", recipe="nvfp4",
                **options):
        """Lowers a copy of the step through one of the project's pipelines
        (``fp4train-cuda-pipeline``, ``fp4train-rocm-pipeline``,
        ``fp4train-cpu-pipeline``, ``fp4train-quantize-pipeline``) with the
        recipe and further options as keywords (``chip="sm_100a"``,
        ``format="isa"``); returns the lowered ``fp4train.Module``."""
        text = _pipeline_options(recipe, self.step_arg, options)
        lowered = self._context.parse(str(self.module))
        lowered.run_pipeline(f"{pipeline}{{{text}}}")
        return lowered


def export_training_step(model, loss_fn, *example_data):
    """Captures one training step of ``model`` and imports it with torch-mlir.

    ``loss_fn(model, *data)`` returns the scalar loss; ``example_data`` fixes
    the data's shapes and dtypes (float32 tensors, or int64/int32 ids, which
    the step takes as int32). Returns a TrainingStep. Raises fp4train.Error
    for a model without trainable parameters, a loss that is not a float32
    scalar, data of another dtype, random ops (dropout), and anything
    torch-mlir cannot import (with its message).
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
    specs = [DataSpec(i, value) for i, value in enumerate(example_data)]
    check_loss(model, loss_fn, example_data)
    graph = capture(model, loss_fn, names, params, specs, example_data)
    text = import_step(graph, FUNCTION, specs, params)
    context = Context()
    try:
        module = context.parse(text)
    except Error as error:
        raise Error("the step torch-mlir produced does not parse in fp4train's "
                    f"MLIR: {error}") from None
    return TrainingStep(model, context, module, names, params, specs)


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
