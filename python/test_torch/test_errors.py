"""Bad input to the front end: each a clear fp4train.Error, and wrong imports
caught before they become a step."""

import fp4train
import fp4train.torch as ft
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import models


class NoParameters(nn.Module):
    def forward(self, x):
        return x * 2


def small():
    torch.manual_seed(0)
    return models.MLP(16, 32), torch.randn(8, 16), torch.randn(8, 16)


def test_model_without_parameters():
    with pytest.raises(fp4train.Error, match="no trainable parameters"):
        ft.export_training_step(NoParameters(), lambda m, x: m(x).sum(),
                                torch.randn(4))


def test_loss_not_a_scalar():
    model, x, y = small()
    with pytest.raises(fp4train.Error, match=r"scalar \(0-d\) tensor.*\[8, 16\]"):
        ft.export_training_step(model, lambda m, x, y: m(x) - y, x, y)


def test_data_of_the_wrong_dtype():
    model, x, y = small()
    with pytest.raises(fp4train.Error, match="data argument 0 has dtype torch.float64"):
        ft.export_training_step(model, models.mse_loss, x.double(), y)
    step = ft.export_training_step(model, models.mse_loss, x, y)
    with pytest.raises(fp4train.Error, match="data argument 1 has dtype torch.int64"):
        step.run("f32", x, y.long())
    with pytest.raises(fp4train.Error, match=r"shape \[4, 16\]"):
        step.run("f32", x[:4], y[:4])
    with pytest.raises(fp4train.Error, match="takes 2 data arguments, got 1"):
        step.run("f32", x)


def test_op_torch_mlir_cannot_lower():
    # torch-mlir's message (the ATen op it has no lowering for) is passed on.
    model, x, _ = small()
    with pytest.raises(fp4train.Error,
                       match=r"torch-mlir cannot lower(.|\n)*aten\._fft_r2c"):
        ft.export_training_step(
            model, lambda m, x: torch.fft.rfft(m(x)).abs().sum(), x)


def test_op_outside_upstream_mlir():
    # sort becomes torch-mlir's tm_tensor.sort: named, with the source line.
    model, x, _ = small()
    with pytest.raises(fp4train.Error,
                       match=r"tm_tensor\.sort \(at .*\.py:\d+:\d+\)"):
        ft.export_training_step(
            model, lambda m, x: m(x).sort(0).values.sum(), x)


def test_unknown_recipe():
    model, x, y = small()
    step = ft.export_training_step(model, models.mse_loss, x, y)
    with pytest.raises(fp4train.Error, match="nvfp5"):
        step.run("nvfp5", x, y)
    with pytest.raises(fp4train.Error, match="not a single value"):
        step.run("nvfp4", x, y, roles="fprop}")


def test_override_values():
    # [FE4] writes roles=["fprop"]: a list, tuple or set is one option value
    # (roles=fprop,dgrad), which also keys the compiled steps. A bad value is
    # still a clear error: the pipeline's for a role it does not know, a
    # TypeError for a value no option spells.
    model, x, y = small()
    step = ft.export_training_step(model, models.mse_loss, x, y)
    listed, _ = step.run("nvfp4", x, y, step=0, roles=["fprop", "dgrad"])
    for same in (["fprop", "dgrad"], ("fprop", "dgrad"), "fprop,dgrad",
                 {"dgrad", "fprop"}):
        assert step.run("nvfp4", x, y, step=0, roles=same)[0] == listed
    with pytest.raises(fp4train.Error, match="'fprop,bprop' must list "
                       "distinct roles among fprop, dgrad and wgrad"):
        step.run("nvfp4", x, y, roles=["fprop", "bprop"])
    with pytest.raises(fp4train.Error, match="'1' must list distinct roles"):
        step.run("nvfp4", x, y, roles=[1])
    with pytest.raises(TypeError, match=r"recipe override roles takes a str, "
                       r"a number, a bool or a list of them, got \[None\]"):
        step.run("nvfp4", x, y, roles=[None])
    with pytest.raises(TypeError, match="got a NoneType"):
        step.run("nvfp4", x, y, roles=None)
    with pytest.raises(TypeError, match=r"got \['fprop', \['dgrad'\]\]"):
        step.run("nvfp4", x, y, roles=["fprop", ["dgrad"]])
    with pytest.raises(fp4train.Error, match="not a single value"):
        step.run("nvfp4", x, y, roles=["fprop dgrad"])


def test_dropout_is_refused():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.5))
    with pytest.raises(fp4train.Error, match="random numbers.*dropout"):
        ft.export_training_step(model, lambda m, x: m(x).sum(),
                                torch.randn(4, 16))


# Three wrong imports, as a broken capture or importer would produce them:
# each is caught before it becomes a step.

def test_wrong_import_gradients_out_of_order(monkeypatch):
    capture = ft._capture.capture

    def swapped(*args):
        graph = capture(*args)
        output = next(n for n in graph.graph.nodes if n.op == "output")
        loss, first, *rest = output.args[0]
        output.args = ((loss, *rest, first),)
        graph.recompile()
        return graph

    monkeypatch.setattr(ft, "capture", swapped)
    model, x, y = small()
    with pytest.raises(fp4train.Error, match="not the loss and one gradient"):
        ft.export_training_step(model, models.mse_loss, x, y)


def test_wrong_import_loss_not_reduced(monkeypatch):
    capture = ft._capture.capture

    def unreduced(*args):
        graph = capture(*args)
        output = next(n for n in graph.graph.nodes if n.op == "output")
        _, *grads = output.args[0]
        data = next(n for n in graph.graph.nodes if n.op == "placeholder")
        output.args = ((data, *grads),)
        graph.recompile()
        return graph

    monkeypatch.setattr(ft, "capture", unreduced)
    model, x, y = small()
    with pytest.raises(fp4train.Error, match=r"returns \(tensor<8x16xf32>"):
        ft.export_training_step(model, models.mse_loss, x, y)


def test_wrong_import_text_from_another_mlir(monkeypatch):
    # Text the 22.1 parser cannot read (an op of a newer MLIR): an Error with
    # the parser's diagnostic, never a half-read step.
    def newer(*args):
        return '"func.func"() <{function_type = () -> (), sym_name = "train_step"}> ({\n  "linalg.future_op"() : () -> ()\n  "func.return"() : () -> ()\n}) : () -> ()'

    monkeypatch.setattr(ft, "import_step", newer)
    model, x, y = small()
    with pytest.raises(fp4train.Error,
                       match="does not parse in fp4train's MLIR(.|\n)*linalg.future_op"):
        ft.export_training_step(model, models.mse_loss, x, y)


def test_token_id_out_of_range():
    # torch-mlir guards the embedding lookup with cf.assert, which would abort
    # the process; the JIT reports it as an Error naming the model's line.
    torch.manual_seed(0)
    model = models.TiedEmbeddings()
    ids = torch.randint(0, 64, (4, 8))
    step = ft.export_training_step(model, models.lm_loss, ids, ids)
    bad = ids.clone()
    bad[1, 2] = 64
    with pytest.raises(fp4train.Error, match=r"index must be smaller than dim "
                       r"size\" at .*models\.py:\d+:0 failed"):
        step.run("f32", bad, ids)
    bad[1, 2] = -1
    with pytest.raises(fp4train.Error, match="failed"):
        step.run("f32", bad, ids)
    # The step is still usable.
    loss, _ = step.run("f32", ids, ids)
    assert loss > 0


def test_parameters_not_float32():
    model, x, y = small()
    model.down.to(torch.bfloat16)
    with pytest.raises(fp4train.Error,
                       match="parameter down.weight has dtype torch.bfloat16"):
        ft.export_training_step(model, models.mse_loss, x, y)


def test_loss_fn_that_raises():
    # The model's own failure in the eager check: one fp4train.Error naming
    # it, the original exception chained.
    model, x, y = small()
    with pytest.raises(fp4train.Error,
                       match=r"loss_fn\(model, \*data\) raised RuntimeError"):
        ft.export_training_step(model, models.mse_loss, x[:, :3], y)


class TopOneRouting(nn.Module):
    """Each row goes to the expert of its largest logit through one_hot,
    whose class count torch reads from the data: no static graph."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(16, 4)
        self.experts = nn.Parameter(torch.randn(4, 16, 16))

    def forward(self, x):
        choice = F.one_hot(self.router(x).argmax(-1))
        return torch.einsum("te,eod,td->to", choice.to(x.dtype),
                            self.experts, x)


def test_data_dependent_step_is_refused():
    torch.manual_seed(0)
    x, y = torch.randn(8, 16), torch.randn(8, 16)
    with pytest.raises(fp4train.Error,
                       match="cannot be traced with static shapes"):
        ft.export_training_step(TopOneRouting(), models.mse_loss, x, y)


class InPlaceSigmoid(models.MLP):
    """Doubles sigmoid's output in place, which sigmoid's backward reads:
    the eager check (no autograd) passes, the differentiating trace not."""

    def forward(self, x):
        y = torch.sigmoid(self.up(x))
        y.mul_(2)
        return self.down(y)


def test_in_place_op_under_autograd_is_named():
    # Reported as what autograd said, not as data-dependent control flow.
    _, x, y = small()
    with pytest.raises(fp4train.Error, match=r"backward cannot be computed: an "
                       r"in-place op .* write it out of place .*RuntimeError: "
                       r"one of the variables needed for gradient computation "
                       r"has been modified by an inplace operation") as info:
        ft.export_training_step(InPlaceSigmoid(16, 32), models.mse_loss, x, y)
    assert "static shapes" not in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)


class TrainingRefused(models.MLP):
    def forward(self, x):
        if torch.is_grad_enabled():
            raise ValueError("this model only runs without autograd")
        return super().forward(x)


def test_trace_failure_keeps_its_type_and_message():
    # Any other failure of the trace: its type and message, nothing guessed.
    _, x, y = small()
    with pytest.raises(fp4train.Error, match=r"^the step cannot be traced: "
                       r"ValueError: this model only runs without autograd$"):
        ft.export_training_step(TrainingRefused(16, 32), models.mse_loss, x, y)


class ZeroSizeParameter(models.MLP):
    def __init__(self):
        super().__init__(16, 32)
        self.empty = nn.Parameter(torch.zeros(0))

    def forward(self, x):
        return super().forward(x) + self.empty.sum()


class ZeroSizeBuffer(models.MLP):
    def __init__(self):
        super().__init__(16, 32)
        self.register_buffer("empty", torch.zeros(3, 0))

    def forward(self, x):
        return super().forward(x) + self.empty.sum()


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
@pytest.mark.parametrize("make, message", [
    # nn.Linear(32, 0) killed the process (SIGFPE in torch-mlir's lowering).
    (lambda: (nn.Sequential(nn.Linear(16, 32), nn.Linear(32, 0)),
              lambda m, x: m(x).sum(), torch.randn(8, 16)),
     r"parameter 1\.weight has shape \[0, 32\]"),
    (lambda: (ZeroSizeParameter(), lambda m, x: m(x).sum(), torch.randn(8, 16)),
     r"parameter empty has shape \[0\]"),
    (lambda: (ZeroSizeBuffer(), lambda m, x: m(x).sum(), torch.randn(8, 16)),
     r"buffer empty has shape \[3, 0\]"),
    (lambda: (models.MLP(16, 32), lambda m, x, y: m(x).sum() + y.sum(),
              torch.randn(8, 16), torch.randn(4, 0)),
     r"data argument 1 has shape \[4, 0\]"),
], ids=["linear-without-outputs", "parameter", "buffer", "data"])
def test_zero_size_tensors_are_refused(make, message):
    # Refused by name before torch-mlir sees them.
    with pytest.raises(fp4train.Error, match=message + ", with no elements; "
                       "fp4train steps take no zero-size tensors"):
        ft.export_training_step(*make())
