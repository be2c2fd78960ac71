"""The models the front end's tests export: each a common building block of
what users train, written as PyTorch users write them."""

import pathlib
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]
                       / "examples" / "torch"))
import nanogpt  # noqa: E402


class MLP(nn.Module):
    """Two linear layers (one without bias) around GELU; mean squared error."""

    def __init__(self, width=64, hidden=128):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width, bias=False)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


def mse_loss(model, x, target):
    return F.mse_loss(model(x), target)


def NanoGPT(vocab=64, length=16, width=32, heads=2, blocks=2):
    """examples/torch/nanogpt.py's model (token and position embeddings,
    pre-norm blocks of causal attention and a GELU MLP, a head tied to the
    token embedding), small."""
    return nanogpt.NanoGPT(vocab, length, width, heads, blocks)


def lm_loss(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class RMSNorm(nn.Module):
    def __init__(self, width, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class LlamaBlock(nn.Module):
    """RMSNorm, grouped-query attention with rotary position embeddings and a
    SwiGLU MLP, no biases (Llama's decoder layer)."""

    def __init__(self, width=64, heads=4, kv_heads=2, hidden=128, length=16):
        super().__init__()
        self.heads, self.kv_heads = heads, kv_heads
        self.head_dim = width // heads
        self.attn_norm = RMSNorm(width)
        self.q_proj = nn.Linear(width, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, width, bias=False)
        self.mlp_norm = RMSNorm(width)
        self.gate_proj = nn.Linear(width, hidden, bias=False)
        self.up_proj = nn.Linear(width, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, width, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float()
                                    / self.head_dim))
        angles = torch.outer(torch.arange(length).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x):
        batch, length, _ = x.shape
        h = self.attn_norm(x)
        q = self.q_proj(h).view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(h).view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(h).view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * self.cos + rotate_half(q) * self.sin
        k = k * self.cos + rotate_half(k) * self.sin
        repeat = self.heads // self.kv_heads
        k = k.repeat_interleave(repeat, dim=1)
        v = v.repeat_interleave(repeat, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o_proj(y.transpose(1, 2).reshape(batch, length, -1))
        h = self.mlp_norm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class TiedEmbeddings(nn.Module):
    """An embedding whose transpose is the output layer, with a hidden
    linear layer between: the tied weight is both a lookup and a GEMM."""

    def __init__(self, vocab=64, width=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.hidden = nn.Linear(width, width)
        self.unembed = nn.Linear(width, vocab, bias=False)
        self.unembed.weight = self.embed.weight

    def forward(self, tokens):
        return self.unembed(F.silu(self.hidden(self.embed(tokens))))


class SoftMoE(nn.Module):
    """A mixture-of-experts MLP with dense (soft) routing: every token goes
    through every expert ([E, out, in] weights, batched GEMMs), weighted by
    the router's softmax (TopKMoE routes top-k)."""

    def __init__(self, width=32, hidden=64, experts=4, router_name="router"):
        super().__init__()
        self.inp = nn.Linear(width, width)
        # The router's attribute (hence parameter) name: structure, not the
        # name, makes it a router ([MOE2]).
        self.router_name = router_name
        setattr(self, router_name, nn.Linear(width, experts, bias=False))
        self.w1 = nn.Parameter(torch.randn(experts, hidden, width) * width ** -0.5)
        self.w2 = nn.Parameter(torch.randn(experts, width, hidden) * hidden ** -0.5)

    def forward(self, x):
        x = self.inp(x)
        gates = F.softmax(getattr(self, self.router_name)(x), dim=-1)
        xe = x.unsqueeze(0).expand(self.w1.shape[0], -1, -1)
        h = F.gelu(torch.bmm(xe, self.w1.transpose(1, 2)))
        ye = torch.bmm(h, self.w2.transpose(1, 2))
        return torch.einsum("te,etd->td", gates, ye)


class TopKMoE(nn.Module):
    """A mixture-of-experts MLP as plain PyTorch writes top-k routing: the
    router's softmax, ``torch.topk``, every expert over every token
    (``[E, out, in]`` weights, batched GEMMs), and the chosen experts'
    outputs combined per token with ``index_add_`` (``combine="index_add"``)
    or through a dense ``[tokens, E]`` table of routing weights built by a
    ``scatter_add`` (``combine="scatter_add"``) or from ``F.one_hot``
    (``combine="one_hot"``)."""

    def __init__(self, width=32, hidden=64, experts=4, topk=2,
                 combine="index_add"):
        super().__init__()
        self.inp = nn.Linear(width, width)
        self.router = nn.Linear(width, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, hidden, width) * width ** -0.5)
        self.w2 = nn.Parameter(torch.randn(experts, width, hidden) * hidden ** -0.5)
        self.topk = topk
        self.combine = combine

    def forward(self, x):
        x = self.inp(x)
        tokens, experts = x.shape[0], self.w1.shape[0]
        probs = F.softmax(self.router(x), dim=-1)
        weights, chosen = torch.topk(probs, self.topk, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        xe = x.unsqueeze(0).expand(experts, -1, -1)
        ye = torch.bmm(F.silu(torch.bmm(xe, self.w1.transpose(1, 2))),
                       self.w2.transpose(1, 2))  # [E, tokens, width]
        if self.combine != "index_add":
            if self.combine == "scatter_add":
                table = torch.zeros(tokens, experts).scatter_add(1, chosen,
                                                                 weights)
            else:
                table = (F.one_hot(chosen, experts) * weights.unsqueeze(-1)
                         ).sum(1)
            return torch.einsum("te,etd->td", table, ye)
        token = torch.arange(tokens).repeat_interleave(self.topk)
        picked = ye[chosen.reshape(-1), token] * weights.reshape(-1, 1)
        return torch.zeros_like(x).index_add_(0, token, picked)


class AutocastMLP(MLP):
    """The MLP with its matmuls under bf16 autocast (float32 master weights)."""

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = super().forward(x)
        return y.float()
