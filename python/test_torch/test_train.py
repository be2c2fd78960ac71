"""fp4train.torch.train: torch optimizers over TrainingStep.run."""

import copy

import fp4train.torch as ft
import pytest
import torch

import models
from conftest import relative_error


def batches(count, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [(torch.randint(0, 64, (2, 16), generator=generator),
             torch.randint(0, 64, (2, 16), generator=generator))
            for _ in range(count)]


def regression_batches(count, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [(torch.randn(2, 16, 64, generator=generator),
             torch.randn(2, 16, 64, generator=generator))
            for _ in range(count)]


# Adam divides by the gradient's running RMS, so a gradient that is zero in
# exact arithmetic (the key bias of softmax attention) turns rounding noise
# into full steps: AdamW is checked on the Llama block, which has no biases.
@pytest.mark.parametrize("model_name, optimizer", [
    ("nanogpt", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    ("llama", lambda p: torch.optim.AdamW(p, lr=3e-3)),
])
def test_f32_training_equals_eager(model_name, optimizer):
    torch.manual_seed(0)
    if model_name == "nanogpt":
        model, loss_fn, data = models.NanoGPT(), models.lm_loss, batches(5)
    else:
        model, loss_fn, data = (models.LlamaBlock(), models.mse_loss,
                                regression_batches(5))
    eager = copy.deepcopy(model)
    step = ft.export_training_step(model, loss_fn, *data[0])
    losses = ft.train(step, data, "f32", optimizer(model.parameters()))

    reference = optimizer(eager.parameters())
    expected = []
    for batch in data:
        reference.zero_grad()
        loss = loss_fn(eager, *batch)
        loss.backward()
        reference.step()
        expected.append(loss.item())
    for got, want in zip(losses, expected):
        assert relative_error(got, want) <= 1e-5
    if model_name == "nanogpt":
        # The tie survives: one tensor, updated once per step.
        assert model.head.weight is model.wte.weight
    for (name, p), q in zip(model.named_parameters(), eager.parameters()):
        assert relative_error(p.detach(), q.detach()) <= 1e-5, name


def test_quantized_training_follows_the_recipe():
    # Under nvfp4 the loss on a repeated batch falls, differs from f32, and
    # repeats exactly from the same start (stochastic rounding seeded by the
    # step).
    data = batches(1) * 8
    curves = []
    for recipe in ("nvfp4", "nvfp4", "f32"):
        torch.manual_seed(0)
        model = models.NanoGPT()
        step = ft.export_training_step(model, models.lm_loss, *data[0])
        curves.append(ft.train(step, data, recipe,
                               torch.optim.AdamW(model.parameters(), lr=1e-2)))
    assert curves[0] == curves[1]
    assert curves[0] != curves[2]
    assert curves[0][-1] < curves[0][0]


@pytest.mark.parametrize("recipe", ["nvfp4", "mxfp4-hadamard"])
def test_step_equals_fp4_train(tmp_path, recipe):
    # fp4-train on the exported step and TrainingStep.run compute the same
    # step: from fp4-train's first-step arguments, the same loss and
    # gradients bit for bit, so the same optimizer gives the same curves.
    import os
    import subprocess

    import numpy as np

    import nanogpt
    tools = os.environ.get("FP4TRAIN_TOOLS_DIR", "build/bin")
    model, loss_fn, tokens, targets = nanogpt.training_step(
        batch=2, length=16, blocks=1)
    step = ft.export_training_step(model, loss_fn, tokens, targets)
    (tmp_path / "step.mlir").write_text(step.mlir)
    subprocess.run([os.path.join(tools, "fp4-train"), str(tmp_path / "step.mlir"),
                    "--recipe", recipe, "--steps", "1",
                    "--dump-first-step", str(tmp_path / "dump")],
                   check=True, capture_output=True)
    arg = lambda i: np.load(tmp_path / "dump" / f"arg{i}.npy")
    with torch.no_grad():
        for i, p in enumerate(dict(model.named_parameters()).values()):
            p.copy_(torch.from_numpy(arg(2 + i)))
    loss, grads = step.run(recipe, torch.from_numpy(arg(0)),
                           torch.from_numpy(arg(1)), step=int(arg(step.step_arg)))
    result = lambda j: np.load(tmp_path / "dump" / f"result{j}.npy")
    assert np.float32(loss).tobytes() == result(0).astype(np.float32).tobytes()
    for j, grad in enumerate(grads.values()):
        assert grad.numpy().tobytes() == result(1 + j).tobytes(), j


def test_train_takes_override_lists():
    # roles=["fprop"], as [FE4] writes it, reaches every step: the curve of
    # roles="fprop" from the same start, not nvfp4's on all three roles.
    data = regression_batches(3)
    curves = []
    for overrides in ({"roles": ["fprop"]}, {"roles": "fprop"}, {}):
        torch.manual_seed(0)
        model = models.MLP()
        step = ft.export_training_step(model, models.mse_loss, *data[0])
        curves.append(ft.train(step, data, "nvfp4",
                               torch.optim.SGD(model.parameters(), lr=0.1),
                               **overrides))
    assert curves[0] == curves[1]
    assert curves[0] != curves[2]
