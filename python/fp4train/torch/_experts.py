"""Hugging Face mixture-of-experts layers exported with capacity dispatch.

transformers 5 runs an experts module (weights ``[E, out, in]``, called with
the router's top-k ids and weights) through the implementation its config
names in ``ExpertsInterface``. Every one it ships reads data back into Python
(eager: ``nonzero``), sorts (``grouped_mm``: ``sort``, ``histc``, a grouped
GEMM) or gathers whole expert matrices per token (``batched_mm``), none of
which gives static per-expert GEMMs. During an export this module registers
one more implementation, ``fp4train``, and points the model's experts at it
(docs/frontends.md [FE8]): each expert takes up to C of the routed
(token, choice) pairs, in token order, into its own rows of an ``[E, C, H]``
batch; the expert GEMMs are batched matmuls over the ``[E, out, in]``
weights, so each expert weight gets Fprop, Dgrad and Wgrad; the outputs go
back to their pairs and are summed with the routing weights.
"""

import contextlib
import sys

import torch

from .. import Error

IMPLEMENTATION = "fp4train"


class _Route(torch.autograd.Function):
    """``out[j] = source[index[j]]`` where ``valid[j]``, else 0: rows moved by
    a partial permutation. Its gradient moves back by the inverse
    permutation (``inverse``, ``inverse_valid``): a gather again, where
    PyTorch's rule for a gather would scatter."""

    @staticmethod
    def forward(source, index, valid, inverse, inverse_valid):
        rows = source.index_select(0, index)
        return torch.where(valid.unsqueeze(-1), rows,
                           torch.zeros((), dtype=source.dtype))

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, index, valid, inverse, inverse_valid = inputs
        ctx.save_for_backward(index, valid, inverse, inverse_valid)

    @staticmethod
    def backward(ctx, grad):
        index, valid, inverse, inverse_valid = ctx.saved_tensors
        return (_Route.apply(grad, inverse, inverse_valid, index, valid),
                None, None, None, None)


def _routing(ids, experts, capacity):
    """Where each routed pair goes: ``slot[s]`` (expert·C + its rank among
    the expert's pairs, in pair order) while ``keep[s]`` (rank < C), and for
    each of the E·C slots the pair ``source[j]`` filling it while
    ``filled[j]``. Pairs beyond an expert's capacity are dropped."""
    pairs = ids.shape[0]
    chosen = (ids.unsqueeze(-1) == torch.arange(experts)).to(torch.int64)
    rank = ((torch.cumsum(chosen, 0) - chosen) * chosen).sum(-1)
    keep = rank < capacity
    slot = torch.where(keep, ids * capacity + rank, 0)
    hit = (slot.unsqueeze(0) == torch.arange(experts * capacity).unsqueeze(-1)
           ) & keep.unsqueeze(0)  # [E·C, pairs]
    source = torch.where(hit, torch.arange(pairs), 0).sum(-1)
    return slot, keep, source, hit.any(-1)


def _expert_linear(x, weight, bias, transposed):
    """``x [E, C, in]`` through each expert's weight (``[E, out, in]``, or
    ``[E, in, out]`` when ``transposed``) and bias ``[E, out]``."""
    y = torch.bmm(x, weight if transposed else weight.transpose(1, 2))
    return y if bias is None else y + bias.unsqueeze(1)


def _check_capacity(capacity):
    if capacity is not None and (isinstance(capacity, bool) or not isinstance(
            capacity, int) or capacity < 1):
        raise Error(f"expert_capacity must be a positive int, got {capacity!r}")


class CapacityRoute:
    """The ``fp4train`` experts implementation's state during one export:
    each experts module's capacity, measured on the example batch while
    ``measuring`` (the largest number of pairs any expert receives: nothing
    is dropped on that batch), or the ``expert_capacity`` the user gave."""

    def __init__(self, capacity):
        self.fixed = capacity
        self.capacity = {}
        self.measuring = True

    def forward(self, module, hidden_states, top_k_index, top_k_weights):
        if module._is_expert_parallel:
            raise Error("an expert-parallel experts module cannot be exported: "
                        "fp4train shards steps itself (docs/sharding.md)")
        tokens, width = hidden_states.shape
        choices = top_k_index.shape[-1]
        experts = module.num_experts
        ids = top_k_index.reshape(-1)
        if self.measuring:
            counts = (ids.unsqueeze(-1) == torch.arange(experts)).sum(0)
            measured = max(int(counts.max()), 1)
            self.capacity[id(module)] = max(self.capacity.get(id(module), 1),
                                            self.fixed or measured)
        capacity = self.capacity[id(module)]
        slot, keep, source, filled = _routing(ids, experts, capacity)
        pairs = hidden_states.unsqueeze(1).expand(tokens, choices, width)
        x = _Route.apply(pairs.reshape(tokens * choices, width), source,
                         filled, slot, keep).view(experts, capacity, width)
        bias = module.gate_up_proj_bias if module.has_bias else None
        if module.has_gate:
            h = module._apply_gate(_expert_linear(
                x, module.gate_up_proj, bias, module.is_transposed))
        else:
            bias = module.up_proj_bias if module.has_bias else None
            h = module.act_fn(_expert_linear(x, module.up_proj, bias,
                                             module.is_transposed))
        bias = module.down_proj_bias if module.has_bias else None
        y = _expert_linear(h, module.down_proj, bias, module.is_transposed)
        if module.has_post_expert_norm:
            y = module.post_expert_norm(y)
        out = _Route.apply(y.reshape(experts * capacity, -1), slot, keep,
                           source, filled).view(tokens, choices, -1)
        weights = top_k_weights.unsqueeze(-1).to(out.dtype)
        return (out * weights).sum(1).to(hidden_states.dtype)


def _experts_modules(model):
    """The modules transformers' ``use_experts_implementation`` made."""
    if "transformers.integrations.moe" not in sys.modules:
        return []
    return [m for m in model.modules()
            if hasattr(m, "_is_expert_parallel") and hasattr(m, "has_gate")
            and hasattr(m, "config")]


@contextlib.contextmanager
def capacity_dispatch(model, capacity=None):
    """Within the block, the model's Hugging Face experts run the ``fp4train``
    implementation; yields its CapacityRoute (None for a model without
    such experts), whose ``measuring`` the caller ends before the trace."""
    _check_capacity(capacity)
    modules = _experts_modules(model)
    if not modules:
        yield None
        return
    from transformers.integrations.moe import ALL_EXPERTS_FUNCTIONS
    route = CapacityRoute(capacity)
    ALL_EXPERTS_FUNCTIONS[IMPLEMENTATION] = route.forward
    configs = {id(m.config): m.config for m in modules}
    previous = {key: c._experts_implementation for key, c in configs.items()}
    try:
        for config in configs.values():
            config._experts_implementation = IMPLEMENTATION
        yield route
    finally:
        for key, config in configs.items():
            config._experts_implementation = previous[key]
        del ALL_EXPERTS_FUNCTIONS[IMPLEMENTATION]
