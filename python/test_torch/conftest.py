"""Shared helpers of the PyTorch front end's tests.

Run by test/Python/torch-frontend.test with the project's virtual
environment (.venv: torch, torch-mlir, torchao) and
PYTHONPATH=<build>/python_packages; by hand:

    PYTHONPATH=build/python_packages .venv/bin/python -m pytest python/test_torch
"""

import torch


def relative_error(actual, expected):
    """max |actual - expected| / max |expected| (0 when both are 0)."""
    actual = torch.as_tensor(actual, dtype=torch.float64)
    expected = torch.as_tensor(expected, dtype=torch.float64)
    scale = expected.abs().max()
    difference = (actual - expected).abs().max()
    return float(difference / scale) if scale > 0 else float(difference)


def autograd_step(model, loss_fn, data):
    """The loss and every parameter's gradient from eager torch autograd."""
    model.zero_grad(set_to_none=True)
    loss = loss_fn(model, *data)
    loss.backward()
    grads = {name: p.grad.detach().clone()
             for name, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    return loss.item(), grads
