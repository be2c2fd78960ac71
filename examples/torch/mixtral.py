#!/usr/bin/env python3
"""A Hugging Face Mixtral (transformers' own model, random weights, nothing
downloaded) as an fp4train training step, for fp4-opt and fp4-train:

    PYTHONPATH=build/python_packages .venv/bin/python -m fp4train.torch.export \\
        examples/torch/mixtral.py -o mixtral.mlir
    build/bin/fp4-train mixtral.mlir --compare f32,nvfp4,mxfp4-hadamard

Byte-level (256 tokens), 4 decoder blocks of width 128 (grouped-query
attention with RoPE, 4 query and 2 key/value heads), each MLP 4 SwiGLU
experts of width 256 with top-2 routing (a token's two experts cost what a
dense MLP of width 512 does), 64 tokens per step. The experts export with
capacity dispatch (docs/frontends.md [FE8]); the routers are found by
structure and kept in f32 ([MOE2]). docs/ablation.md trains it.
"""

import torch
import torch.nn.functional as F
from transformers import MixtralConfig, MixtralForCausalLM

VOCAB, LENGTH, BATCH = 256, 32, 2


def training_step():
    torch.manual_seed(0)
    config = MixtralConfig(
        vocab_size=VOCAB, hidden_size=128, intermediate_size=256,
        num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
        num_local_experts=4, num_experts_per_tok=2,
        max_position_embeddings=LENGTH, bos_token_id=None, eos_token_id=None)
    model = MixtralForCausalLM(config)

    def loss_fn(model, tokens, targets):
        logits = model(input_ids=tokens).logits
        return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))

    tokens = torch.randint(0, VOCAB, (BATCH, LENGTH))
    return model, loss_fn, tokens, torch.roll(tokens, -1, 1)
