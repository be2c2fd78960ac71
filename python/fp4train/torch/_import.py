"""Imports a captured step with torch-mlir and hands it to fp4train as text.

torch-mlir lowers the FX graph to linalg on tensors in its own MLIR (a newer
LLVM than the 22.1 this project links); the step crosses to fp4train's
context as text in the generic op form, the form least tied to one LLVM
version's custom syntax (docs/frontends.md [FE2]).
"""

import torch

from .. import Error
from .._frontend import (FUNCTION, check_dialects, complete_signature, find_op,
                         lower, tensor_type)

_ELEMENT = {torch.float32: "f32", torch.int32: "i32"}

_TORCH_TO_BACKEND = ("builtin.module(func.func(torch-match-quantized-custom-ops),"
                     " torchdynamo-export-to-torch-backend-pipeline)")
_BACKEND_TO_LINALG = ("builtin.module(torch-backend-to-linalg-on-tensors-"
                      "backend-pipeline{allow-non-finites=true})")


# ATen ops torch-mlir lowers to its own tm_tensor dialect ([FE2]), which
# fp4train cannot take: refused before that lowering, which itself crashes
# the process on some of them (topk with its gradient: sort, then scatter).
# The capture's rules ([FE7]) leave only sort, cumprod, scatter_reduce and
# bincount of these; the others stay listed for graphs captured elsewhere.
_TM_TENSOR = {
    "torch.aten.sort": "tm_tensor.sort",
    "torch.aten.topk": "tm_tensor.topk",
    "torch.aten.cumsum": "tm_tensor.scan",
    "torch.aten.cumprod": "tm_tensor.scan",
    "torch.aten.scatter.src": "tm_tensor.scatter",
    "torch.aten.scatter.value": "tm_tensor.scatter",
    "torch.aten.scatter_add": "tm_tensor.scatter",
    "torch.aten.scatter_reduce.two": "tm_tensor.scatter",
    "torch.aten.index_put": "tm_tensor.scatter",
    "torch.aten.index_put.hacked_twin": "tm_tensor.scatter",
    "torch.aten._index_put_impl": "tm_tensor.scatter",
    "torch.aten.bincount": "tm_tensor.scatter",
}


def _check_tm_tensor(ir, module):
    found = find_op(ir, module, lambda name: name in _TM_TENSOR)
    if found:
        name, where = found
        raise Error(f"torch-mlir would lower {name.removeprefix('torch.')} "
                    f"to {_TM_TENSOR[name]} (at {where}), which is not an "
                    "upstream MLIR op: fp4train cannot take the step")


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


def import_step(graph, data, params, names):
    """The step's text in linalg on tensors ([FE1], [FE2]), or an Error with
    torch-mlir's diagnostics."""
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras.fx_importer import FxImporter

    _freeze_constants(graph)
    context = ir.Context()
    torch_d.register_dialect(context)
    importer = FxImporter(context=context)
    try:
        importer.import_stateless_graph(graph.graph, func_name=FUNCTION)
    except Exception as error:  # the importer raises what the op raised
        raise Error(f"torch-mlir cannot import the step: {error}") from None
    module = importer.module
    lower(ir, module, (_TORCH_TO_BACKEND,), "torch-mlir")
    _check_tm_tensor(ir, module)
    lower(ir, module, (_BACKEND_TO_LINALG,), "torch-mlir")
    check_dialects(ir, module, "torch-mlir")
    return complete_signature(
        ir, module,
        [tensor_type(s.shape, _ELEMENT[s.step_dtype]) for s in data],
        [tensor_type(p.shape, "f32") for p in params], names)
