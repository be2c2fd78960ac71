"""Captures a model's training step (forward, loss, backward) as one FX graph.

The graph is traced with ``make_fx`` over ``torch.func.grad_and_value``:
AOTAutograd's joint graph, in ATen ops, with the parameters as explicit
inputs. Its signature is the project's step convention (docs/frontends.md
[FE1]): ``(data..., params...) -> (loss, one gradient per parameter)``.
"""

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch._subclasses.functional_tensor import dispatch_functionalize
from torch.func import functional_call, grad_and_value

from .. import Error
from .._frontend import check_not_empty
from ._decompositions import decomposition_table

# ATen ops whose results are random: a captured step would freeze one draw.
_RANDOM_OPS = ("bernoulli", "native_dropout", "rand", "normal", "uniform",
               "multinomial", "poisson")


class DataSpec:
    """One data argument: how the step takes it and how ``run`` converts it."""

    def __init__(self, index, example):
        if not isinstance(example, torch.Tensor):
            raise Error(f"data argument {index} is a {type(example).__name__}, "
                        "not a torch.Tensor")
        check_not_empty(f"data argument {index}", example.shape)
        self.shape = tuple(example.shape)
        self.dtype = example.dtype
        if example.dtype == torch.float32:
            self.step_dtype = torch.float32
        elif example.dtype in (torch.int64, torch.int32):
            # [FE1] Integer data (token ids, class targets) enter the step as
            # i32, the index type the project's steps and JIT take.
            self.step_dtype = torch.int32
        else:
            raise Error(
                f"data argument {index} has dtype {example.dtype}; a step "
                "takes float32 tensors or integer (int32/int64) ids")

    def convert(self, index, value):
        """``value`` as the step takes it, or an Error saying why not."""
        if not isinstance(value, torch.Tensor):
            raise Error(f"data argument {index} is a {type(value).__name__}, "
                        "not a torch.Tensor")
        if tuple(value.shape) != self.shape:
            raise Error(f"data argument {index} has shape {list(value.shape)}; "
                        f"the step was exported for {list(self.shape)}")
        integer = self.step_dtype == torch.int32
        if (value.dtype in (torch.int64, torch.int32)) != integer or (
                not integer and value.dtype != torch.float32):
            raise Error(f"data argument {index} has dtype {value.dtype}; the "
                        f"step was exported for {self.dtype}")
        value = value.detach()
        if integer and value.numel() and (
                value.min() < torch.iinfo(torch.int32).min
                or value.max() > torch.iinfo(torch.int32).max):
            raise Error(f"data argument {index} has ids outside int32")
        return value.to(self.step_dtype).contiguous()


class _LossModule(torch.nn.Module):
    """``loss_fn(model, *data)`` as a module, so that ``functional_call`` can
    substitute the parameters wherever ``loss_fn`` reaches the model."""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, *data):
        return self.loss_fn(self.model, *data)


def trainable_parameters(model):
    """``(name, parameter)`` of every trainable parameter, tied ones once."""
    return [(name, p) for name, p in model.named_parameters() if p.requires_grad]


def _first_line(error):
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def check_loss(model, loss_fn, data):
    """Runs the loss once in eager mode: a clear error before any tracing."""
    try:
        with torch.no_grad():
            loss = loss_fn(model, *data)
    except Exception as error:  # the model's or loss_fn's own failure
        raise Error(f"loss_fn(model, *data) raised {type(error).__name__}: "
                    f"{_first_line(error)}") from error
    if not isinstance(loss, torch.Tensor):
        raise Error(f"loss_fn returned a {type(loss).__name__}, not a tensor")
    if loss.dim() != 0:
        raise Error("loss_fn must return a scalar (0-d) tensor; it returned "
                    f"one of shape {list(loss.shape)}")
    if loss.dtype != torch.float32:
        raise Error(f"loss_fn returned a {loss.dtype} loss; the step's loss "
                    "is float32")


# What torch raises when a trace reads a tensor's value into Python: the
# proxy tensors of make_fx (.item(), an `if` on a tensor, one_hot's class
# count), the functional tensors of functionalize (.tolist(), .numpy()),
# fake tensors and symbolic shapes.
_DATA_DEPENDENT = ("get value out of a tracing tensor", "unallocated storage",
                   "Tensor that doesn't have storage", "data-dependent")


def _trace_error(error):
    """The Error for a step whose eager run passed but whose trace failed:
    what happened, with the original exception's type and message."""
    from torch._subclasses.fake_tensor import (DataDependentOutputException,
                                               DynamicOutputShapeException)
    from torch.fx.experimental.symbolic_shapes import \
        GuardOnDataDependentSymNode
    what = f"{type(error).__name__}: {_first_line(error)}"
    if isinstance(error, (DataDependentOutputException,
                          DynamicOutputShapeException,
                          GuardOnDataDependentSymNode)) or (
            isinstance(error, RuntimeError)
            and any(s in str(error) for s in _DATA_DEPENDENT)):
        # Tracing with the example data's static shapes: a value read back
        # into Python has no static graph.
        return Error("the step cannot be traced with static shapes (a value "
                     "read back into Python: data-dependent control flow or "
                     f"shapes): {what}")
    if "modified by an inplace operation" in str(error):
        # The eager check runs without autograd, so only the trace, which
        # differentiates, sees an in-place op overwrite a tensor that the
        # backward needs.
        return Error("the step's backward cannot be computed: an in-place op "
                     "of the model or loss_fn (mul_, add_, x[...] = ...) "
                     "overwrote a tensor autograd saved for the gradient; "
                     f"write it out of place (y = y * 2): {what}")
    return Error(f"the step cannot be traced: {what}")


def capture(model, loss_fn, names, params, specs, data):
    """The joint graph of one step, as a ``torch.fx.GraphModule``."""
    wrapper = _LossModule(model, loss_fn)
    keys = ["model." + name for name in names]
    originals = [spec.dtype for spec in specs]

    def step(*args):
        inputs = [value.to(dtype) for value, dtype in
                  zip(args[:len(specs)], originals)]
        weights = list(args[len(specs):])

        def loss_of(weights):
            return functional_call(wrapper, dict(zip(keys, weights)),
                                   tuple(inputs))

        grads, loss = grad_and_value(loss_of)(weights)
        return (loss, *grads)

    inputs = [spec.convert(i, value) for i, (spec, value)
              in enumerate(zip(specs, data))]
    weights = [p.detach() for p in params]
    # Attention through PyTorch's math kernel: bmm + softmax, whose backward
    # decomposes (the fused CPU kernel's backward has no MLIR lowering).
    from torch._dispatch.python import enable_python_dispatcher
    from torch.nn.attention import SDPBackend, sdpa_kernel
    try:
        # The Python dispatcher: composite ops whose C++ kernels read data
        # back (F.one_hot's range checks) trace through torch's Python
        # decompositions instead.
        with sdpa_kernel(SDPBackend.MATH), enable_python_dispatcher():
            # functionalize: backward formulas that write in place (SiLU's)
            # become value semantics, which torch-mlir imports.
            graph = make_fx(dispatch_functionalize(step),
                            decomposition_table=decomposition_table(),
                            record_stack_traces=True)(*inputs, *weights)
    except NotImplementedError as error:
        raise Error(f"the step cannot be exported: {error}") from None
    except Error:
        raise
    except Exception as error:  # the eager run passed: the trace failed
        raise _trace_error(error) from error
    for node in graph.graph.nodes:
        op = str(node.target).split(".")
        if node.op == "call_function" and len(op) > 1 and \
                op[1].startswith(_RANDOM_OPS):
            raise Error(f"the step draws random numbers ({node.target}); "
                        "fp4train steps are deterministic: turn dropout off")
    _keep_user_frames(graph)
    return graph


def _keep_user_frames(graph):
    """Keeps, of each node's stack trace, the innermost frame outside torch
    and fp4train: torch-mlir turns it into the op's location, so reports
    point at the model's source line (backward ops have none)."""
    import os
    internal = (os.path.dirname(torch.__file__) + os.sep,
                os.path.dirname(os.path.dirname(__file__)) + os.sep)
    for node in graph.graph.nodes:
        trace = node.meta.get("stack_trace")
        if not trace:
            continue
        frames = [line for line in trace.splitlines()
                  if line.lstrip().startswith('File "')]
        user = [f for f in frames
                if not f.lstrip()[6:].startswith(internal)]
        if user:
            node.meta["stack_trace"] = user[-1] + "\n"
        else:
            del node.meta["stack_trace"]
