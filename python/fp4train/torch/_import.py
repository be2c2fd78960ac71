"""Imports a captured step with torch-mlir and hands it to fp4train as text.

torch-mlir lowers the FX graph to linalg on tensors in its own MLIR (a newer
LLVM than the 22.1 this project links); the step crosses to fp4train's
context as text in the generic op form, the form least tied to one LLVM
version's custom syntax (docs/frontends.md [FE2]).
"""

import torch

from .. import Error

_TORCH_TO_BACKEND = ("builtin.module(func.func(torch-match-quantized-custom-ops),"
                     " torchdynamo-export-to-torch-backend-pipeline)")
_BACKEND_TO_LINALG = ("builtin.module(torch-backend-to-linalg-on-tensors-"
                      "backend-pipeline{allow-non-finites=true})")


def _freeze_constants(graph):
    """Replaces each ``get_attr`` of a tensor (a buffer, a constant the model
    made) by the tensor itself, which torch-mlir imports as a literal."""
    for node in list(graph.graph.nodes):
        if node.op != "get_attr":
            continue
        value = graph
        for part in node.target.split("."):
            value = getattr(value, part)
        if isinstance(value, torch.Tensor):
            node.replace_all_uses_with(value)
            graph.graph.erase_node(node)


# The dialects a step may use once torch-mlir has lowered it: upstream MLIR,
# which fp4train parses ([FE2]). torch-mlir's own (tm_tensor for cumsum, sort,
# scatter, ...) are not.
_UPSTREAM = ("builtin", "func", "linalg", "tensor", "arith", "math", "scf", "cf",
             "affine", "bufferization", "complex")


def _check_dialects(module):
    """An Error naming the first op outside upstream MLIR, with its location
    (the model's source line)."""
    from torch_mlir import ir
    found = []

    def visit(op):
        if op.name.split(".")[0] not in _UPSTREAM:
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if found:
        op = found[0]
        raise Error(f"torch-mlir lowered part of the step to {op.name} "
                    f"(at {op.location}), which is not an upstream MLIR op: "
                    "fp4train cannot take the step")


def _tensor_type(shape, dtype):
    element = {torch.float32: "f32", torch.int32: "i32"}[dtype]
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def _check_signature(function_type, data, params):
    """The imported function must be the step [FE1] describes: one argument
    per datum and parameter of the expected type, the f32 loss and one
    gradient of each parameter's type. Anything else is a wrong import."""
    inputs = [str(t) for t in function_type.inputs]
    results = [str(t) for t in function_type.results]
    expected_inputs = ([_tensor_type(s.shape, s.step_dtype) for s in data]
                       + [_tensor_type(p.shape, torch.float32) for p in params])
    if inputs != expected_inputs:
        raise Error("the imported step takes (" + ", ".join(inputs) + "), not "
                    "the data and parameters (" + ", ".join(expected_inputs)
                    + ")")
    expected_results = ["tensor<f32>"] + expected_inputs[len(data):]
    if results != expected_results:
        raise Error("the imported step returns (" + ", ".join(results) + "), "
                    "not the loss and one gradient per parameter ("
                    + ", ".join(expected_results) + ")")


def _complete_signature(module, data, params):
    """Checks the signature, marks the parameters {fp4train.param} and
    appends the i64 step that seeds stochastic rounding and random Hadamard
    signs ([FE1])."""
    from torch_mlir import ir
    num_data, num_params = len(data), len(params)
    with module.context, ir.Location.unknown():
        func = next(op for op in module.body.operations
                    if op.operation.name == "func.func")
        imported = ir.FunctionType(
            ir.TypeAttr(func.attributes["function_type"]).value)
        _check_signature(imported, data, params)
        step_type = ir.IntegerType.get_signless(64)
        func.regions[0].blocks[0].add_argument(step_type, ir.Location.unknown())
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(imported.inputs) + [step_type],
                                imported.results))
        marked = ir.DictAttr.get({"fp4train.param": ir.UnitAttr.get()})
        plain = ir.DictAttr.get({})
        attrs = [plain] * num_data + [marked] * num_params + [plain]
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)


def import_step(graph, function, data, params):
    """Text of a module holding ``func.func @<function>`` in linalg on
    tensors, or an Error with torch-mlir's diagnostics."""
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras.fx_importer import FxImporter
    from torch_mlir.passmanager import PassManager

    _freeze_constants(graph)
    context = ir.Context()
    torch_d.register_dialect(context)
    importer = FxImporter(context=context)
    try:
        importer.import_stateless_graph(graph.graph, func_name=function)
    except Exception as error:  # the importer raises what the op raised
        raise Error(f"torch-mlir cannot import the step: {error}") from None
    module = importer.module
    diagnostics = []

    def collect(diagnostic):
        diagnostics.append(f"{diagnostic.location}: {diagnostic.message}")
        return True  # handled: nothing reaches stderr

    handler = context.attach_diagnostic_handler(collect)
    try:
        with context:
            for pipeline in (_TORCH_TO_BACKEND, _BACKEND_TO_LINALG):
                try:
                    PassManager.parse(pipeline).run(module.operation)
                except Exception as error:
                    detail = "\n".join(diagnostics) or str(error).strip()
                    raise Error("torch-mlir cannot lower the step to linalg: "
                                + detail) from None
    finally:
        handler.detach()
    _check_dialects(module)
    _complete_signature(module, data, params)
    return module.operation.get_asm(print_generic_op_form=True,
                                    enable_debug_info=True)
