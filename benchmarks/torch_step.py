#!/usr/bin/env python3
"""One training step of examples/torch/nanogpt.py: fp4train vs torchao.

The same model (4 blocks, tied head, batch 4 x 64 bytes) and batch, in one
process, on the CPU:
  - fp4train: the step exported by fp4train.torch and JIT-compiled under
    f32, mxfp4 and nvfp4 (TrainingStep.run, conversions included);
  - eager torch f32 (forward + backward);
  - torchao 0.18's emulation of the same formats on every nn.Linear: MXFP4
    through torchao's MX autograd function (mx_mm, KernelPreference.EMULATED:
    quantize, dequantize, f32 matmul for each of the three GEMMs) and NVFP4
    through NVFP4Tensor quantize/dequantize around the three GEMMs (torchao
    has no CPU NVFP4 training path; its NVFP4 training config needs Triton on
    a GPU). Attention stays in f32 in both, as in fp4train's recipes.
Prints milliseconds per step (median of --repeat) and the ratios.

    PYTHONPATH=build/python_packages .venv/bin/python benchmarks/torch_step.py
"""

import argparse
import pathlib
import statistics
import sys
import time
import types
import warnings

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]
                       / "examples" / "torch"))
import nanogpt  # noqa: E402


def median_ms(fn, repeat):
    fn()  # warm-up (and, for fp4train, the JIT compile)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def torchao_linear(kind):
    """A forward for nn.Linear that runs its three GEMMs through torchao's
    emulation of ``kind`` ("mxfp4" or "nvfp4")."""
    from torchao.prototype.mx_formats.config import (
        MXFP8Dim0CastKernelChoice, MXFP8Dim1CastKernelChoice,
        ScaleCalculationMode)
    from torchao.prototype.mx_formats.nvfp4_tensor import (
        NVFP4Tensor, per_tensor_amax_to_scale)
    from torchao.prototype.moe_training.mxfp8_linear import mx_mm
    from torchao.quantization.quantize_.common.kernel_preference import (
        KernelPreference)

    def nvfp4(t):
        # Blocks of 16 along the last dimension, with the per-tensor scale.
        t = t.contiguous()
        scale = per_tensor_amax_to_scale(t.abs().amax())
        return NVFP4Tensor.to_nvfp4(t, 16, per_tensor_scale=scale).dequantize(
            torch.float32)

    class NVFP4MM(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return nvfp4(x) @ nvfp4(w).t()

        @staticmethod
        def backward(ctx, dy):
            x, w = ctx.saved_tensors
            dx = nvfp4(dy) @ nvfp4(w.t()).t()
            dw = nvfp4(dy.t()) @ nvfp4(x.t()).t()
            return dx, dw

    fp4 = torch.float4_e2m1fn_x2

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1])
        if kind == "mxfp4":
            y = mx_mm.apply(rows, self.weight, fp4, fp4, fp4, 32,
                            KernelPreference.EMULATED,
                            MXFP8Dim0CastKernelChoice.TORCH,
                            MXFP8Dim1CastKernelChoice.TORCH,
                            ScaleCalculationMode.FLOOR, False)
        else:
            y = NVFP4MM.apply(rows, self.weight)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*x.shape[:-1], -1)

    return forward


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(2)

    import fp4train.torch as ft

    model, loss_fn, tokens, targets = nanogpt.training_step()
    step = ft.export_training_step(model, loss_fn, tokens, targets)
    ours = {recipe: median_ms(lambda r=recipe: step.run(r, tokens, targets),
                              args.repeat)
            for recipe in ("f32", "mxfp4", "nvfp4")}

    def eager_step(m):
        m.zero_grad(set_to_none=True)
        loss_fn(m, tokens, targets).backward()

    theirs = {"f32": median_ms(lambda: eager_step(model), args.repeat)}
    for kind in ("mxfp4", "nvfp4"):
        emulated, *_ = nanogpt.training_step()
        forward = torchao_linear(kind)
        for module in emulated.modules():
            if isinstance(module, torch.nn.Linear):
                module.forward = types.MethodType(forward, module)
        theirs[kind] = median_ms(lambda m=emulated: eager_step(m), args.repeat)

    print()
    print("One training step of examples/torch/nanogpt.py (4 blocks, batch 4x64),"
          f" CPU, {torch.get_num_threads()} threads, median of {args.repeat}")
    print("%-8s %14s %22s %10s" % ("format", "fp4train (ms)",
                                     "torch/torchao eager (ms)", "ratio"))
    for kind in ("f32", "mxfp4", "nvfp4"):
        print("%-8s %14.1f %22.1f %10.2f" % (kind, ours[kind], theirs[kind],
                                             ours[kind] / theirs[kind]))
    print("ratio = fp4train time / eager time (f32: plain torch; mxfp4, nvfp4:"
          " torchao's emulation); below 1 is faster.")


if __name__ == "__main__":
    main()
