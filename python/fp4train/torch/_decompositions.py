"""Backward rules that keep an imported step in upstream MLIR dialects.

torch-mlir lowers ``aten.index_put`` and ``aten.scatter`` (what PyTorch's
backward of an embedding and of ``nll_loss`` produce) to its own
``tm_tensor.scatter``, which neither MLIR 22 nor this project can parse. The
two rules below compute the same gradients as masked sums and selects, which
torch-mlir lowers to ``linalg.generic``; docs/frontends.md [FE3] states why the
results equal PyTorch's.
"""

import torch

aten = torch.ops.aten


def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    # [FE3] dW[v, :] = sum over tokens t with indices[t] == v of dY[t, :], in
    # token order; a masked-out token adds +0, which leaves every sum equal.
    if scale_grad_by_freq:
        raise NotImplementedError(
            "embedding with scale_grad_by_freq=True is not supported")
    width = grad_output.shape[-1]
    ids = indices.reshape(-1, 1)
    grad = grad_output.reshape(-1, 1, width)
    vocabulary = torch.arange(num_weights, device=ids.device).reshape(1, -1)
    hit = ids == vocabulary
    if padding_idx >= 0:
        hit = hit & (ids != padding_idx)
    zero = torch.zeros((), dtype=grad.dtype)
    return torch.where(hit.unsqueeze(-1), grad, zero).sum(0)


def _nll_loss_backward(grad_output, self, target, weight, reduction,
                       ignore_index, total_weight):
    # [FE3] dX[i, c] = -g / total_weight where c == target[i] (and the target
    # is not ignored), 0 elsewhere: a select instead of PyTorch's scatter.
    if weight is not None:
        raise NotImplementedError("nll_loss with class weights is not supported")
    classes = self.shape[-1]
    hit = target.unsqueeze(-1) == torch.arange(classes, device=target.device)
    hit = hit & (target.unsqueeze(-1) != ignore_index)
    grad = grad_output
    if reduction == 1:  # mean
        grad = grad / total_weight
    if grad.dim() > 0:  # reduction="none": one gradient per row
        grad = grad.unsqueeze(-1)
    zero = torch.zeros((), dtype=self.dtype)
    return torch.where(hit, -grad, zero)


def decomposition_table():
    """torch-mlir's decompositions plus the rules above."""
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    table = dict(get_decomposition_table())
    table[aten.embedding_dense_backward.default] = _embedding_dense_backward
    table[aten.nll_loss_backward.default] = _nll_loss_backward
    return table
