"""Rules that keep an imported step in upstream MLIR dialects.

torch-mlir lowers scatters (``aten.scatter``, ``scatter_add``, ``index_add``,
``index_put``: what PyTorch's backward of an embedding, of ``nll_loss``, of a
gather and of ``topk`` produce), ``topk``, ``cumsum`` and ``histc`` to its own
``tm_tensor`` ops or to nothing at all, which neither MLIR 22 nor this project
can parse. The rules below compute the same results from comparisons,
selects, gathers and sums, which torch-mlir lowers to ``linalg.generic``;
docs/frontends.md [FE3] and [FE7] state why the results equal PyTorch's and
what they cost.
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


def _positions(size, device):
    return torch.arange(size, device=device)


def _hits(index, size):
    """hit[..., i, j] = index[..., i] == j: which of ``size`` places each
    index names (an index outside [0, size) names none)."""
    return index.unsqueeze(-1) == _positions(size, index.device)


def _masked_sum(hit, values):
    """sum over i of values[..., i] where hit[..., i, j]: [..., j], the terms
    in index order, a place no index names holding +0."""
    zero = torch.zeros((), dtype=values.dtype)
    return torch.where(hit, values.unsqueeze(-1), zero).sum(-2)


def _last_writer(hit):
    """For each place j, the largest i with hit[..., i, j], or -1."""
    order = _positions(hit.shape[-2], hit.device).unsqueeze(-1)
    return torch.where(hit, order, -1).amax(-2)


def _scatter_along_last(self, index, src, add):
    """[FE7] self with src[..., i] written (or added) at self[..., index[...,
    i]], every dim but the last equal in all three."""
    hit = _hits(index, self.shape[-1])
    if add:
        return self + _masked_sum(hit, src).to(self.dtype)
    # Sequential scatter: of several writes to one place the last one stays.
    writer = _last_writer(hit)
    taken = src.gather(-1, writer.clamp(min=0)).to(self.dtype)
    return torch.where(writer >= 0, taken, self)


def _check_scatter_shapes(self, dim, index, src):
    for d, (s, i) in enumerate(zip(self.shape, index.shape)):
        if d != dim and s != i:
            raise NotImplementedError(
                f"scatter along dim {dim} with an index of shape "
                f"{list(index.shape)} into {list(self.shape)} (only dims "
                "other than the scatter dim of equal size) is not supported")
    if src is not None and tuple(src.shape) != tuple(index.shape):
        src = src[tuple(slice(0, n) for n in index.shape)]
    return src


def _scatter(self, dim, index, src, add):
    dim = dim % max(self.dim(), 1)
    if self.dim() == 0:
        raise NotImplementedError("scatter into a 0-d tensor is not supported")
    if not isinstance(src, torch.Tensor):
        src = torch.full(index.shape, src, dtype=self.dtype)
    src = _check_scatter_shapes(self, dim, index, src)
    moved = _scatter_along_last(self.movedim(dim, -1), index.movedim(dim, -1),
                                src.movedim(dim, -1), add)
    return moved.movedim(-1, dim)


def _scatter_src(self, dim, index, src):
    return _scatter(self, dim, index, src, add=False)


def _scatter_value(self, dim, index, value):
    return _scatter(self, dim, index, value, add=False)


def _scatter_add(self, dim, index, src):
    return _scatter(self, dim, index, src, add=True)


def _index_add(self, dim, index, source, alpha=1):
    # [FE7] out[..., j, ...] = self + alpha * sum over i with index[i] == j of
    # source[..., i, ...], the terms in index order.
    dim = dim % max(self.dim(), 1)
    moved = source.movedim(dim, -1) if source.dim() else source.reshape(1)
    added = _masked_sum(_hits(index.reshape(-1), self.shape[dim] if self.dim()
                              else 1), moved)
    if alpha != 1:
        added = added * alpha
    added = added.movedim(-1, dim) if self.dim() else added.reshape(())
    return self + added.to(self.dtype)


def _index_put(self, indices, values, accumulate=False):
    # [FE7] The indexed leading dims flattened to one, then an index_add
    # (accumulate) or a last-writer scatter along it.
    if any(i is None for i in indices) or any(
            i.dtype == torch.bool for i in indices):
        raise NotImplementedError(
            "index_put with a mask or with indices after a full slice is not "
            "supported")
    count = len(indices)
    lead, rest = self.shape[:count], self.shape[count:]
    indices = torch.broadcast_tensors(*indices)
    flat = torch.zeros_like(indices[0])
    for index, size in zip(indices, lead):
        flat = flat * size + torch.where(index < 0, index + size, index)
    flat = flat.reshape(-1)
    values = values.expand(*indices[0].shape, *rest).reshape(-1, *rest)
    places = 1
    for size in lead:
        places *= size
    table = self.reshape(places, *rest)
    if accumulate:
        out = _index_add(table, 0, flat, values)
    else:
        hit = _hits(flat, places)  # [n, places]
        writer = _last_writer(hit)  # [places]
        taken = values.index_select(0, writer.clamp(min=0))
        filled = (writer >= 0).reshape(places, *([1] * len(rest)))
        out = torch.where(filled, taken.to(self.dtype), table)
    return out.reshape(self.shape)


def _index_put_impl(self, indices, values, accumulate=False, unsafe=False):
    return _index_put(self, indices, values, accumulate)


def _topk(self, k, dim=-1, largest=True, sorted=True):
    # [FE7] k rounds of (max of the places not yet taken, first place holding
    # it): the k largest (smallest) in descending (ascending) order, ties
    # to the lower index; NaN counts as larger than every number, as in
    # PyTorch.
    if self.dim() == 0:
        return self.clone(), torch.zeros((), dtype=torch.int64)
    dim = dim % self.dim()
    key = self.movedim(dim, -1)
    if not largest:
        key = -key
    key = torch.where(torch.isnan(key), torch.inf, key)
    size = key.shape[-1]
    places = _positions(size, key.device)
    taken = torch.zeros(key.shape, dtype=torch.bool)
    chosen = []
    for _ in range(k):
        best = torch.where(taken, -torch.inf, key).amax(-1, keepdim=True)
        first = torch.where(~taken & (key == best), places, size)
        index = first.amin(-1, keepdim=True)
        taken = taken | (places == index)
        chosen.append(index)
    indices = torch.cat(chosen, -1).movedim(-1, dim)
    return self.gather(dim, indices), indices


def _cumsum(self, dim, dtype=None):
    # [FE7] Inclusive prefix sums in ceil(log2 n) rounds (Hillis and
    # Steele): x += x shifted by 1, 2, 4, ... places. Exact for integers; a
    # float sum adds in another order than PyTorch's sequential one.
    x = self.to(dtype) if dtype is not None else self
    if x.dtype == torch.bool:
        x = x.to(torch.int64)
    if x.dim() == 0:
        return x.clone()
    dim = dim % x.dim()
    size = x.shape[dim]
    shift = 1
    while shift < size:
        pad = torch.zeros((*x.shape[:dim], shift, *x.shape[dim + 1:]),
                          dtype=x.dtype)
        x = x + torch.cat([pad, x.narrow(dim, 0, size - shift)], dim)
        shift *= 2
    return x


def _histc(self, bins=100, min=0, max=0):
    # [FE7] PyTorch's bins: (x - min) * bins / (max - min), floored, x == max
    # in the last bin, values outside [min, max] counted nowhere.
    if min >= max:
        raise NotImplementedError(
            "histc without an explicit range (min < max) takes its bins from "
            "the data: give min and max")
    x = self.reshape(-1)
    place = ((x - min) * (bins / (max - min))).floor().to(torch.int64)
    place = torch.where(x == max, bins - 1, place)
    inside = (x >= min) & (x <= max)
    hit = _hits(place, bins) & inside.unsqueeze(-1)
    return hit.to(self.dtype).sum(0)


def _assert_async(condition, message=None):
    # [FE7] A run-time check of torch's Python decompositions (one_hot's
    # class range): the step has no assertions; an id outside the classes
    # gets an all-zero row.
    return None


def decomposition_table():
    """torch-mlir's decompositions plus the rules above."""
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    table = dict(get_decomposition_table())
    table.update({
        aten.embedding_dense_backward.default: _embedding_dense_backward,
        aten.nll_loss_backward.default: _nll_loss_backward,
        aten.scatter.src: _scatter_src,
        aten.scatter.value: _scatter_value,
        aten.scatter_add.default: _scatter_add,
        aten.index_add.default: _index_add,
        aten.index_put.default: _index_put,
        aten._unsafe_index_put.default: _index_put,
        aten._index_put_impl.default: _index_put_impl,
        aten.topk.default: _topk,
        aten.cumsum.default: _cumsum,
        aten.histc.default: _histc,
        aten._assert_async.msg: _assert_async,
    })
    return table
