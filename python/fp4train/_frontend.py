"""What the framework front ends (fp4train.torch, fp4train.jax) share.

Each front end lowers a framework's training step to linalg on tensors with
the framework's own MLIR (torch-mlir, IREE), whose Python bindings are passed
here as ``ir``; this module checks the lowered step, completes its signature
([FE1]), hands it to fp4train as text ([FE2]) and runs it (docs/frontends.md).
"""

import re
from collections.abc import Sequence

import numpy as np

from . import Context, Error, compile as _jit_compile, role_report

FUNCTION = "train_step"

# The dialects a step may use once the framework's MLIR has lowered it:
# upstream MLIR, which fp4train parses ([FE2]). torch-mlir's own (tm_tensor
# for cumsum, sort, scatter, ...) and IREE's are not.
_UPSTREAM = ("builtin", "func", "linalg", "tensor", "arith", "math", "scf", "cf",
             "affine", "bufferization", "complex")


def lower(ir, module, pipelines, what):
    """Runs textual ``pipelines`` on ``module`` in its own MLIR, turning a
    failure into an Error with that MLIR's diagnostics."""
    from importlib import import_module
    passmanager = import_module(ir.__name__.rsplit(".", 1)[0] + ".passmanager")
    diagnostics = []

    def collect(diagnostic):
        diagnostics.append(f"{diagnostic.location}: {diagnostic.message}")
        return True  # handled: nothing reaches stderr

    handler = module.context.attach_diagnostic_handler(collect)
    try:
        with module.context:
            for pipeline in pipelines:
                try:
                    passmanager.PassManager.parse(pipeline).run(module.operation)
                except Exception as error:
                    detail = "\n".join(diagnostics) or str(error).strip()
                    raise Error(f"{what} cannot lower the step to linalg: "
                                + detail) from None
    finally:
        handler.detach()


def find_op(ir, module, predicate):
    """The first op (pre-order) for which ``predicate(name)`` holds, and its
    innermost source position (the model's line), or None."""
    found = []

    def visit(op):
        if predicate(op.name):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if not found:
        return None
    # The innermost source position of a call-site chain: the model's line.
    where = re.search(r'"([^"]+)":(\d+):(\d+)', str(found[0].location))
    return found[0].name, ":".join(where.groups()) if where else \
        "an unknown location"


def check_dialects(ir, module, what):
    """An Error naming the first op outside upstream MLIR, with its location
    (the model's source line)."""
    found = find_op(ir, module,
                    lambda name: name.split(".")[0] not in _UPSTREAM)
    if found:
        raise Error(f"{what} lowered part of the step to {found[0]} (at "
                    f"{found[1]}), which is not an upstream MLIR op: fp4train "
                    "cannot take the step")


def tensor_type(shape, element):
    """``tensor<2x3xf32>`` for shape (2, 3) and element ``"f32"``."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def check_not_empty(what, shape):
    """An Error naming ``what`` if ``shape`` has a dimension of size 0. No
    step takes such a tensor: torch-mlir's lowering can kill the process
    (SIGFPE, for ``nn.Linear(32, 0)``), IREE folds the GEMMs of one away
    (their roles lost, nothing quantized), and a contraction over K = 0 does
    not compile under a quantizing recipe. Checked before either sees it."""
    if 0 in tuple(shape):
        raise Error(f"{what} has shape {list(shape)}, with no elements; "
                    "fp4train steps take no zero-size tensors: give every "
                    "dimension a size of at least 1")


def _check_signature(function_type, data_types, param_types):
    """The imported function must be the step [FE1] describes: one argument
    per datum and parameter of the expected type, the f32 loss and one
    gradient of each parameter's type. Anything else is a wrong import."""
    inputs = [str(t) for t in function_type.inputs]
    results = [str(t) for t in function_type.results]
    expected_inputs = list(data_types) + list(param_types)
    if inputs != expected_inputs:
        raise Error("the imported step takes (" + ", ".join(inputs) + "), not "
                    "the data and parameters (" + ", ".join(expected_inputs)
                    + ")")
    expected_results = ["tensor<f32>"] + list(param_types)
    if results != expected_results:
        raise Error("the imported step returns (" + ", ".join(results) + "), "
                    "not the loss and one gradient per parameter ("
                    + ", ".join(expected_results) + ")")


_BLOCK_NAME = re.compile(r"(?:^|\.)(?:layers|layer|blocks|block|h)\.(\d+)(?:\.|$)")


def get_block(name):
    """The decoder block a parameter name places its weight in ([FE5]):
    N for ``layers.N.…``, ``blocks.N.…``, ``h.N.…`` (also ``layer``,
    ``block``) anywhere in the dotted name; None otherwise."""
    match = _BLOCK_NAME.search(name)
    return int(match.group(1)) if match else None


def complete_signature(ir, module, data_types, param_types, param_names):
    """Checks the signature of the module's one function, names it
    @train_step, marks the parameters {fp4train.param} (with
    ``fp4train.block = N`` where the name says, [FE5]; routers are found by
    the quantize pass from the graph's structure, [MOE2]) and appends the i64
    step that seeds stochastic rounding and random Hadamard signs ([FE1]).
    Returns the module's text in the generic op form with locations
    ([FE2])."""
    with module.context, ir.Location.unknown():
        functions = [op for op in module.body.operations
                     if op.operation.name == "func.func"]
        if len(functions) != 1:
            raise Error(f"the imported module holds {len(functions)} "
                        "functions, not one training step")
        func = functions[0]
        imported = ir.FunctionType(
            ir.TypeAttr(func.attributes["function_type"]).value)
        _check_signature(imported, data_types, param_types)
        step_type = ir.IntegerType.get_signless(64)
        func.regions[0].blocks[0].add_argument(step_type, ir.Location.unknown())
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(imported.inputs) + [step_type],
                                imported.results))
        func.attributes["sym_name"] = ir.StringAttr.get(FUNCTION)
        if "sym_visibility" in func.attributes:
            del func.attributes["sym_visibility"]
        def marked(name):
            attributes = {"fp4train.param": ir.UnitAttr.get()}
            block = get_block(name)
            if block is not None:
                attributes["fp4train.block"] = ir.IntegerAttr.get(
                    step_type, block)
            return ir.DictAttr.get(attributes)
        plain = ir.DictAttr.get({})
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(
            [plain] * len(data_types)
            + [marked(name) for name in param_names] + [plain])
    return module.operation.get_asm(print_generic_op_form=True,
                                    enable_debug_info=True)


def _override_text(key, value):
    """One override's value as its pipeline option spells it: a bool as 0/1,
    a number or str as written, a sequence (or set) of them joined by commas
    (``roles=["fprop", "dgrad"]`` is ``roles=fprop,dgrad``, a set sorted)
    [FE4]. Which values the option accepts is the pipeline's to say."""
    def scalar(item):
        if isinstance(item, (bool, np.bool_)):
            return str(int(item))
        if isinstance(item, (str, int, float, np.integer, np.floating)):
            return str(item)
        return None

    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=str)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        items = [scalar(item) for item in value]
        if None in items:
            raise TypeError(f"recipe override {key} takes a str, a number, a "
                            f"bool or a list of them, got {value!r}")
        text = ",".join(items)
    else:
        text = scalar(value)
        if text is None:
            raise TypeError(f"recipe override {key} takes a str, a number, a "
                            f"bool or a list of them, got a "
                            f"{type(value).__name__}")
    if any(c in text for c in " {}="):
        raise Error(f"recipe override {key}={text!r} is not a single value")
    return text


def pipeline_options(recipe, step_arg, weight_layout, overrides):
    """The option list of a quantizing pipeline: the recipe, the step, the
    weight layout and the recipe overrides given as keywords
    (``stochastic_rounding=False`` is ``stochastic-rounding=0``,
    ``roles=["fprop"]`` is ``roles=fprop``) [FE4], in the order of their
    names: one text for one choice, whatever form or order its values were
    given in, so that it can key a cache of compiled steps."""
    if not isinstance(recipe, str):
        raise TypeError(f"recipe must be a str, got {type(recipe).__name__}")
    options = [f"recipe={recipe}", f"step-arg={step_arg}",
               f"weight-layout={weight_layout}"]
    for key in sorted(overrides):
        name = key.replace("_", "-")
        if not re.fullmatch(r"[a-z0-9-]+", name):
            raise Error(f"recipe override {key!r} is not an option name")
        options.append(f"{name}={_override_text(key, overrides[key])}")
    return " ".join(options)


class Step:
    """A training step imported from a framework: the MLIR, the parameter
    names, the role report by name, and the CPU JIT under any recipe.

    Attributes:
      mlir: the step as MLIR text (upstream dialects): ``func.func
        @train_step(data..., params... {fp4train.param}, %step: i64) ->
        (loss, one gradient per parameter in parameter order)``.
      param_names: the parameters' names in argument order.
      weight_layout: ``"out-in"`` (PyTorch ``nn.Linear``) or ``"in-out"``
        (JAX/Flax ``Dense``): how role inference reads a weight.
    """

    def __init__(self, text, param_names, num_data, weight_layout, what):
        self._context = Context()
        try:
            self.module = self._context.parse(text)
        except Error as error:
            raise Error(f"the step {what} produced does not parse in "
                        f"fp4train's MLIR: {error}") from None
        self.param_names = list(param_names)
        self.weight_layout = weight_layout
        self._num_data = num_data
        self._compiled = {}
        self._steps = 0

    @property
    def mlir(self):
        """The step as MLIR text with its locations: the model's source
        lines the front end kept ([FE2]), which fp4-opt's and fp4-train's
        errors and role reports name."""
        return self.module.text(locations=True)

    @property
    def step_arg(self):
        """Index of the i64 step argument (after the data and parameters)."""
        return self._num_data + len(self.param_names)

    def shard(self, dp=1, tp=1, ep=1, tp_split=None):
        """The step annotated for a sharded run (fp4train-shard-step,
        docs/sharding.md): the batch split over ``dp`` processes, the
        parameters ``tp_split`` names (``{parameter name: dimension}``) over
        ``tp``, the expert weights over ``ep``. Returns its MLIR text, with
        locations, which ``mpiexec -n dp·tp·ep fp4-train FILE`` trains.
        Raises fp4train.Error for an unknown parameter name and for what the
        pass refuses (a dimension the processes do not divide, ep without
        expert weights, ...)."""
        options = [f"dp={int(dp)}", f"tp={int(tp)}", f"ep={int(ep)}"]
        if tp_split:
            entries = []
            for name, dim in tp_split.items():
                if name not in self.param_names:
                    raise Error(f"tp_split names {name!r}, which is not a "
                                "parameter of the step")
                index = self._num_data + self.param_names.index(name)
                entries.append(f"{index}:{int(dim)}")
            options.append("tp-split=" + ",".join(entries))
        sharded = self._context.parse(self.mlir)
        try:
            sharded.run_pipeline(
                "fp4train-shard-step{" + " ".join(options) + "}")
        except Error as error:
            raise Error("cannot shard the step: " +
                        str(error).removeprefix("error: ")) from None
        return sharded.text(locations=True)

    def roles(self):
        """The role report by parameter name.

        Returns ``{name: [contraction, ...]}`` for every parameter, each
        contraction a dict of the role report (``role``, ``block``, ``op``,
        ``m``, ``n``, ``k``, ``batch``, ``loc``, the ``loc`` pointing into the
        model's source where the framework recorded it). A parameter that
        takes part in no contraction (biases, norms, embeddings) maps to
        ``[]``. Contractions of no parameter (attention's) are under the key
        None.
        """
        by_name = {name: [] for name in self.param_names}
        by_name[None] = []
        for entry in role_report(self.module, self.weight_layout):
            index = entry.pop("param")
            name = (self.param_names[index - self._num_data]
                    if index is not None
                    and self._num_data <= index < self.step_arg else None)
            by_name[name].append(entry)
        return by_name

    def _call(self, recipe, data, params, step, overrides):
        """Runs the step JIT-compiled under ``recipe`` on numpy arrays;
        returns the loss as a float and the gradients as numpy arrays."""
        # Keyed by the options' text, not the keywords: their values may be
        # lists (unhashable), and roles=["fprop"] is roles="fprop".
        options = pipeline_options(recipe, self.step_arg, self.weight_layout,
                                   overrides)
        if options not in self._compiled:
            self._compiled[options] = _jit_compile(
                self.module, FUNCTION,
                f"fp4train-cpu-pipeline{{{options} numerics=runtime}}")
        if step is None:
            step = self._steps
        self._steps = step + 1
        results = self._compiled[options](*data, *params, int(step))
        return float(results[0]), [np.asarray(g) for g in results[1:]]

    def compile(self, pipeline="fp4train-cuda-pipeline", recipe="nvfp4",
                **options):
        """Lowers a copy of the step through one of the project's pipelines
        (``fp4train-cuda-pipeline``, ``fp4train-rocm-pipeline``,
        ``fp4train-cpu-pipeline``, ``fp4train-quantize-pipeline``) with the
        recipe and further options as keywords (``chip="sm_100a"``,
        ``format="isa"``); returns the lowered ``fp4train.Module``."""
        text = pipeline_options(recipe, self.step_arg, self.weight_layout,
                                options)
        lowered = self._context.parse(str(self.module))
        lowered.run_pipeline(f"{pipeline}{{{text}}}")
        return lowered
