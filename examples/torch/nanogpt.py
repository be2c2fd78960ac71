#!/usr/bin/env python3
"""Trains a small nanoGPT-style model through fp4train.torch (docs/frontends.md).

Byte-level language model: token and position embeddings, 4 pre-norm blocks of
causal self-attention and a GELU MLP, a final LayerNorm and a head tied to the
token embedding. The script exports one training step with torch-mlir, prints
the role report by parameter name, trains the model from the same start on
the same batches under each recipe (torch's AdamW updating the parameters
from the step's gradients), and writes the loss curves to OUT/losses.csv:

    PYTHONPATH=build/python_packages .venv/bin/python examples/torch/nanogpt.py \\
        --steps 200 --out build/torch-results

``python -m fp4train.torch.export examples/torch/nanogpt.py -o step.mlir``
writes the step for fp4-opt and fp4-train (``training_step`` below).
"""

import argparse
import csv
import pathlib

import torch
import torch.nn.functional as F
from torch import nn

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.out = nn.Linear(4 * width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(width, dim=2)
        shape = (batch, length, self.heads, width // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(batch, length, width))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class NanoGPT(nn.Module):
    def __init__(self, vocab=256, length=64, width=64, heads=4, blocks=4):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(length, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(blocks))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.wte.weight  # tied
        for name, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, tokens):
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def loss_fn(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def corpus():
    """The project's documentation as bytes: a small real text."""
    return b"".join(p.read_bytes() for p in sorted((ROOT / "docs").glob("*.md")))


def batches(text, count, batch, length, seed):
    data = torch.tensor(list(text), dtype=torch.int64)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(count):
        start = torch.randint(0, len(data) - length - 1, (batch,),
                              generator=generator)
        window = torch.stack([data[s:s + length + 1] for s in start.tolist()])
        yield window[:, :-1].contiguous(), window[:, 1:].contiguous()


def training_step(batch=4, length=64, blocks=4, seed=0):
    """(model, loss_fn, tokens, targets) for fp4train.torch.export."""
    torch.manual_seed(seed)
    model = NanoGPT(length=length, blocks=blocks)
    tokens, targets = next(batches(corpus(), 1, batch, length, seed))
    return model, loss_fn, tokens, targets


def small_training_step():
    """One block over windows of 16 bytes: the configuration the tests shard
    (``nanogpt.py:small_training_step`` for fp4train.torch.export)."""
    return training_step(batch=4, length=16, blocks=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipes", default="f32,mxfp4-hadamard,nvfp4")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="build/torch-results")
    args = parser.parse_args()

    import fp4train.torch as ft

    text = corpus()
    curves = {}
    for recipe in args.recipes.split(","):
        model, _, tokens, targets = training_step(args.batch, args.length,
                                                  args.blocks, args.seed)
        step = ft.export_training_step(model, loss_fn, tokens, targets)
        if not curves:
            print("roles by parameter (fprop/dgrad/wgrad; attention is 'other'):")
            for name, entries in step.roles().items():
                if entries:
                    print(f"  {name or '(no parameter)'}: "
                          + ", ".join(e["role"] for e in entries))
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
        data = batches(text, args.steps, args.batch, args.length, args.seed + 1)
        curves[recipe] = ft.train(step, data, recipe, optimizer)
        window = curves[recipe][-10:]
        print(f"{recipe}: first loss {curves[recipe][0]:.4f}, final loss "
              f"(mean of the last {len(window)}) {sum(window) / len(window):.4f}")

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "losses.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["step", *curves])
        for i in range(args.steps):
            writer.writerow([i, *(f"{curves[r][i]:.6f}" for r in curves)])
    print(f"wrote {out / 'losses.csv'}")


if __name__ == "__main__":
    main()
