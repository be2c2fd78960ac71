"""Hugging Face models for the tests that export them (the sharding tests,
the mixture-of-experts tests): tiny configurations, random weights, nothing
downloaded. Each function returns (model, loss_fn, tokens, targets) for
``python -m fp4train.torch.export SCRIPT.py:FUNCTION`` and for
``export_training_step``."""

import torch
import torch.nn.functional as F
from transformers import (GPT2Config, GPT2LMHeadModel, LlamaConfig,
                          LlamaForCausalLM, MixtralConfig, MixtralForCausalLM,
                          Qwen2MoeConfig, Qwen2MoeForCausalLM)

VOCAB, LENGTH, BATCH = 256, 16, 4


def _next_token_loss(model, tokens, targets):
    logits = model(input_ids=tokens).logits
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def _batch():
    tokens = torch.randint(0, VOCAB, (BATCH, LENGTH))
    return tokens, torch.roll(tokens, -1, 1)


def gpt2():
    """GPT-2: Conv1D weights stored [in, out], learned positions, a head
    tied to the token embedding."""
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=VOCAB, n_positions=LENGTH, n_embd=64,
                        n_layer=1, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0,
                        attn_pdrop=0.0, bos_token_id=None, eos_token_id=None)
    return (GPT2LMHeadModel(config), _next_token_loss, *_batch())


def llama():
    """Llama: RoPE (rotate_half's slices and concatenation), grouped-query
    attention (4 query heads, 2 key/value heads), SwiGLU, RMSNorm, an
    untied head."""
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=64,
                         intermediate_size=128, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=LENGTH, bos_token_id=None,
                         eos_token_id=None)
    return (LlamaForCausalLM(config), _next_token_loss, *_batch())


# Two blocks, four experts, top-2 routing: the mixture-of-experts models.
_MOE = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2,
            max_position_embeddings=LENGTH, num_experts_per_tok=2,
            bos_token_id=None, eos_token_id=None)


def mixtral():
    """Mixtral: a softmax top-2 router (``mlp.gate``, [4, 32]) over four
    SwiGLU experts stored as ``gate_up_proj [4, 128, 32]`` and
    ``down_proj [4, 32, 64]``."""
    torch.manual_seed(0)
    config = MixtralConfig(intermediate_size=64, num_local_experts=4, **_MOE)
    return (MixtralForCausalLM(config), _next_token_loss, *_batch())


def qwen2_moe():
    """Qwen2-MoE: Mixtral's routed experts beside a shared SwiGLU expert
    whose output a sigmoid gate (``shared_expert_gate``, [1, 32]) scales,
    and biases on Q, K and V."""
    torch.manual_seed(0)
    config = Qwen2MoeConfig(intermediate_size=64, moe_intermediate_size=32,
                            shared_expert_intermediate_size=64, num_experts=4,
                            decoder_sparse_step=1, **_MOE)
    return (Qwen2MoeForCausalLM(config), _next_token_loss, *_batch())
