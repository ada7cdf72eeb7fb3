"""
MiniMind attention mechanism: example code
==========================================

This script walks through the whole computation of the attention mechanism, following
chapter 3 of the tutorial:
1. Q/K/V linear projections and the split into heads
2. repeat_kv for GQA (grouped-query attention)
3. RoPE (rotary position embedding)
4. Causal mask
5. The complete attention forward pass
6. Two-phase generation: prefill + decode
7. Checking that the KV cache is correct

How to run:
    python 03-attention-demo.en.py

Dependencies:
    - PyTorch (the CPU build is enough)

Environment: runs on a CPU, no GPU needed.
This example is a self-contained, simplified implementation; it does not depend on the MiniMind source code.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import math


# ---------------------------------------------------------------------------
# Simplified RMSNorm (used for QK-Norm)
# ---------------------------------------------------------------------------
class SimpleRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        rms = torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x / rms


# ---------------------------------------------------------------------------
# RoPE precomputation and application (simplified; corresponds to precompute_freqs_cis / apply_rotary_pos_emb in model_minimind.py)
# ---------------------------------------------------------------------------
def precompute_freqs_cis(head_dim, end, rope_base=10000.0):
    freqs = 1.0 / (rope_base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    t = torch.arange(end).float()
    freqs = torch.outer(t, freqs)                       # [end, head_dim//2]
    cos = torch.cat([freqs.cos(), freqs.cos()], dim=-1)  # [end, head_dim]
    sin = torch.cat([freqs.sin(), freqs.sin()], dim=-1)  # [end, head_dim]
    return cos, sin


def apply_rotary_pos_emb(q, k, cos, sin):
    # q, k: [batch, seq, n_heads, head_dim]; cos/sin: [seq, head_dim]
    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    cos = cos.unsqueeze(0).unsqueeze(2)   # [1, seq, 1, head_dim]
    sin = sin.unsqueeze(0).unsqueeze(2)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


# ---------------------------------------------------------------------------
# repeat_kv: copy the KV heads until there are as many as Q heads (the key step of GQA)
# ---------------------------------------------------------------------------
def repeat_kv(x, n_rep):
    # x: [batch, seq, n_kv_heads, head_dim]
    bs, slen, n_kv, hd = x.shape
    if n_rep == 1:
        return x
    return x[:, :, :, None, :].expand(bs, slen, n_kv, n_rep, hd).reshape(bs, slen, n_kv * n_rep, hd)


# ---------------------------------------------------------------------------
# SimpleAttention: with GQA, RoPE, QK-Norm, causal mask and KV cache
# ---------------------------------------------------------------------------
class SimpleAttention(nn.Module):
    def __init__(self, hidden_size=16, n_heads=4, n_kv_heads=2, head_dim=8):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.n_rep = n_heads // n_kv_heads
        self.head_dim = head_dim
        self.q_proj = nn.Linear(hidden_size, n_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, hidden_size, bias=False)
        self.q_norm = SimpleRMSNorm(head_dim)
        self.k_norm = SimpleRMSNorm(head_dim)

    def forward(self, x, cos, sin, past_kv=None, use_cache=False):
        bsz, seq_len, _ = x.shape
        xq = self.q_proj(x).view(bsz, seq_len, self.n_heads, self.head_dim)
        xk = self.k_proj(x).view(bsz, seq_len, self.n_kv_heads, self.head_dim)
        xv = self.v_proj(x).view(bsz, seq_len, self.n_kv_heads, self.head_dim)
        # QK-Norm: RMSNorm on each head before RoPE, to stabilize training
        xq = self.q_norm(xq)
        xk = self.k_norm(xk)
        # RoPE: applied to Q and K only
        xq, xk = apply_rotary_pos_emb(xq, xk, cos, sin)
        # KV cache: concatenate the past K/V back in front
        if past_kv is not None:
            xk = torch.cat([past_kv[0], xk], dim=1)
            xv = torch.cat([past_kv[1], xv], dim=1)
        past_kv = (xk, xv) if use_cache else None
        # Split heads: [batch, heads, seq, head_dim]
        xq = xq.transpose(1, 2)
        xk = repeat_kv(xk, self.n_rep).transpose(1, 2)
        xv = repeat_kv(xv, self.n_rep).transpose(1, 2)
        # Attention scores
        scores = (xq @ xk.transpose(-2, -1)) / math.sqrt(self.head_dim)
        # Causal mask: a position must not see future tokens (masks only the "new input" part)
        if seq_len > 1:
            mask = torch.full((seq_len, seq_len), float("-inf")).triu(1)
            scores[:, :, :, -seq_len:] += mask
        attn = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = attn @ xv                                   # [batch, heads, seq, head_dim]
        output = output.transpose(1, 2).reshape(bsz, seq_len, -1)
        output = self.o_proj(output)
        return output, past_kv


torch.manual_seed(42)


# =============================================================================
# Example 1: Q/K/V linear projections and the split into heads
# =============================================================================
print("=" * 70)
print("Example 1: Q/K/V linear projections and the split into heads")
print("=" * 70)

hidden_size, n_heads, n_kv_heads, head_dim = 16, 4, 2, 8
attn = SimpleAttention(hidden_size, n_heads, n_kv_heads, head_dim)
batch, seq = 2, 5
x = torch.randn(batch, seq, hidden_size)

q = attn.q_proj(x).view(batch, seq, n_heads, head_dim)
k = attn.k_proj(x).view(batch, seq, n_kv_heads, head_dim)
v = attn.v_proj(x).view(batch, seq, n_kv_heads, head_dim)

print(f"\nInput x shape: {x.shape}  # [batch, seq, hidden_size]")
print(f"Q shape: {q.shape}  # [batch, seq, n_heads={n_heads}, head_dim={head_dim}]")
print(f"K shape: {k.shape}  # [batch, seq, n_kv_heads={n_kv_heads}, head_dim={head_dim}]")
print(f"V shape: {v.shape}  # [batch, seq, n_kv_heads={n_kv_heads}, head_dim={head_dim}]")
print(f"\nGQA configuration: {n_heads} Q heads for {n_kv_heads} KV heads, a ratio of {n_heads // n_kv_heads}")
print(f"  → each KV head is copied {n_heads // n_kv_heads} times, shared by {n_heads // n_kv_heads} Q heads")

assert q.shape == (batch, seq, n_heads, head_dim)
assert k.shape == (batch, seq, n_kv_heads, head_dim)
print("\nCheck passed: the shapes after the split into heads are correct")
print()


# =============================================================================
# Example 2: repeat_kv (the key step of GQA)
# =============================================================================
print("=" * 70)
print("Example 2: repeat_kv (copy the KV heads until there are as many as Q heads)")
print("=" * 70)

n_rep = n_heads // n_kv_heads
k_expanded = repeat_kv(k, n_rep)
v_expanded = repeat_kv(v, n_rep)

print(f"\nOriginal K shape: {k.shape}  # [batch, seq, n_kv_heads={n_kv_heads}, head_dim]")
print(f"K shape after repeat_kv: {k_expanded.shape}  # [batch, seq, n_heads={n_heads}, head_dim]")

# Check: copied heads 0 and 1 should be identical (both come from KV head 0)
same = torch.allclose(k_expanded[:, :, 0, :], k_expanded[:, :, 1, :])
same2 = torch.allclose(k_expanded[:, :, 2, :], k_expanded[:, :, 3, :])
print(f"\nCheck: KV head 0 is copied to Q heads 0 and 1 → are they identical? {same}")
print(f"Check: KV head 1 is copied to Q heads 2 and 3 → are they identical? {same2}")
print("  (by sharing KV heads, GQA greatly reduces the memory used by the KV cache)")
print()


# =============================================================================
# Example 3: RoPE rotary position embedding
# =============================================================================
print("=" * 70)
print("Example 3: RoPE rotary position embedding")
print("=" * 70)

max_seq = 16
cos, sin = precompute_freqs_cis(head_dim, max_seq, rope_base=10000.0)
print(f"\nPrecomputed cos/sin shape: {cos.shape}  # [max_seq, head_dim]")

# Take K vectors at two positions and observe that after RoPE the dot product depends only on the relative distance
k_raw = torch.randn(1, 2, n_kv_heads, head_dim)
k_pos0 = k_raw[:, 0:1].clone()
k_pos1 = k_raw[:, 1:2].clone()
k0_rot, _ = apply_rotary_pos_emb(k_pos0, k_pos0, cos[0:1], sin[0:1])
k1_rot, _ = apply_rotary_pos_emb(k_pos1, k_pos1, cos[1:2], sin[1:2])

print(f"\nPosition 0, K[0,0,0] before rotation: {k_pos0[0,0,0]}")
print(f"Position 0, K[0,0,0] after rotation: {k0_rot[0,0,0]}")
print(f"  The rotation angle at position 0 is 0, so the norm is the same before and after")
norm_before = k_pos0[0,0,0].norm().item()
norm_after = k0_rot[0,0,0].norm().item()
print(f"  norm before rotation: {norm_before:.6f}")
print(f"  norm after rotation: {norm_after:.6f}")
print(f"  norm unchanged? {abs(norm_before - norm_after) < 1e-5}")

# Relative position invariance: the same vector rotated at positions (0,1) and (1,2) should give equal dot products
v_test = torch.randn(1, 1, n_kv_heads, head_dim)
v0, _ = apply_rotary_pos_emb(v_test, v_test, cos[0:1], sin[0:1])
v1, _ = apply_rotary_pos_emb(v_test, v_test, cos[1:2], sin[1:2])
v2, _ = apply_rotary_pos_emb(v_test, v_test, cos[2:2+1] if 2 < max_seq else cos[1:2], sin[2:2+1] if 2 < max_seq else sin[1:2])
dot_01 = (v0 * v1).sum().item()
dot_12 = (v1 * v2).sum().item()
print(f"\nRelative position invariance check (same vector, dot products of neighbouring positions):")
print(f"  <v(0), v(1)> = {dot_01:.6f}")
print(f"  <v(1), v(2)> = {dot_12:.6f}")
print(f"  difference: {abs(dot_01 - dot_12):.2e}  → {'passed' if abs(dot_01 - dot_12) < 1e-5 else 'failed'}")
print()


# =============================================================================
# Example 4: Causal mask
# =============================================================================
print("=" * 70)
print("Example 4: Causal mask")
print("=" * 70)

seq_len = 5
# Build a scores matrix by hand and apply the causal mask
scores = torch.zeros(seq_len, seq_len)
causal_mask = torch.full((seq_len, seq_len), float("-inf")).triu(1)
masked_scores = scores + causal_mask
attn_weights = F.softmax(masked_scores, dim=-1)

print(f"\nRaw scores (all 0, assumed unnormalized):")
print(scores)
print(f"\nCausal mask (-inf above the diagonal):")
print(causal_mask)
print(f"\nAttention weights after masking and softmax:")
print(attn_weights)
print(f"\nObserve: the weights are uniform on and below the diagonal, 0 above it")
# Check that everything above the diagonal is 0
upper_zero = torch.all(attn_weights.triu(1) == 0)
print(f"Check: are all weights above the diagonal (future tokens) 0? {upper_zero}")
print(f"Check: does every row of weights sum to 1? {torch.allclose(attn_weights.sum(-1), torch.ones(seq_len))}")
print()


# =============================================================================
# Example 5: The complete attention forward pass
# =============================================================================
print("=" * 70)
print("Example 5: The complete attention forward pass (GQA + RoPE + QK-Norm + causal mask)")
print("=" * 70)

batch, seq = 2, 6
x = torch.randn(batch, seq, hidden_size)
cos_s, sin_s = precompute_freqs_cis(head_dim, seq, rope_base=10000.0)

output, past_kv = attn(x, cos_s, sin_s, use_cache=True)
print(f"\nInput x shape: {x.shape}  # [batch={batch}, seq={seq}, hidden_size={hidden_size}]")
print(f"Output shape: {output.shape}  # [batch, seq, hidden_size] (same as the input)")
print(f"KV cache K shape: {past_kv[0].shape}  # [batch, seq, n_kv_heads={n_kv_heads}, head_dim={head_dim}]")
print(f"KV cache V shape: {past_kv[1].shape}  # [batch, seq, n_kv_heads={n_kv_heads}, head_dim={head_dim}]")

assert output.shape == x.shape
assert past_kv[0].shape == (batch, seq, n_kv_heads, head_dim)
print("\nCheck passed: the output shape matches the input, and the KV cache has been saved")
print()


# =============================================================================
# Example 6: Two-phase generation: prefill + decode
# =============================================================================
print("=" * 70)
print("Example 6: Two-phase generation: prefill + decode (with the KV cache)")
print("=" * 70)

prompt_len = 4
prompt = torch.randn(1, prompt_len, hidden_size)
cos_p, sin_p = precompute_freqs_cis(head_dim, prompt_len, rope_base=10000.0)

# Phase 1: prefill -- process the whole prompt at once
out_prefill, past_kv = attn(prompt, cos_p, sin_p, use_cache=True)
print(f"\n[Prefill] input prompt shape: {prompt.shape}")
print(f"[Prefill] output shape: {out_prefill.shape}")
print(f"[Prefill] KV cache length: {past_kv[0].shape[1]}  # = prompt_len={prompt_len}")

# Phase 2: decode -- generate token by token, feeding only 1 new token each time
decode_steps = 3
print(f"\n[Decode] decoding token by token for {decode_steps} steps:")
for step in range(decode_steps):
    new_token = torch.randn(1, 1, hidden_size)           # stands in for the token generated by the previous step
    total_len = past_kv[0].shape[1] + 1
    cos_d, sin_d = precompute_freqs_cis(head_dim, total_len, rope_base=10000.0)
    # Take only the cos/sin of the newest position (seq_len=1 when decoding)
    out_decode, past_kv = attn(new_token, cos_d[total_len-1:total_len], sin_d[total_len-1:total_len],
                               past_kv=past_kv, use_cache=True)
    print(f"  step {step+1}: input 1 token, KV cache length {past_kv[0].shape[1]}, output shape {out_decode.shape}")

print(f"\nFinal KV cache length: {past_kv[0].shape[1]}  # = prompt_len + decode_steps = {prompt_len + decode_steps}")
print("  → each decode step computes Q/K/V for the 1 new token only and reads past K/V from the cache: attention still reads all n cached keys, O(n) per step, against O(n²) to recompute the whole sequence without a cache")
print()


# =============================================================================
# Example 7: Checking that the KV cache is correct
# =============================================================================
print("=" * 70)
print("Example 7: Checking that the KV cache is correct (results with and without the cache should match)")
print("=" * 70)

total_len = prompt_len + decode_steps
all_tokens = torch.randn(1, total_len, hidden_size)
cos_all, sin_all = precompute_freqs_cis(head_dim, total_len, rope_base=10000.0)

# Method A: no cache, one forward pass over the whole sequence
out_no_cache, _ = attn(all_tokens, cos_all, sin_all, use_cache=False)

# Method B: with the cache, prefill + token-by-token decode (same input tokens)
out_prefill2, past_kv2 = attn(all_tokens[:, :prompt_len], cos_all[:prompt_len], sin_all[:prompt_len], use_cache=True)
cached_outputs = [out_prefill2[:, -1:]]  # keep the output of each position (the last one)
for i in range(prompt_len, total_len):
    tok = all_tokens[:, i:i+1]
    out_d, past_kv2 = attn(tok, cos_all[i:i+1], sin_all[i:i+1], past_kv=past_kv2, use_cache=True)
    cached_outputs.append(out_d)
out_with_cache = torch.cat(cached_outputs, dim=1)

# The cached path covers positions prompt_len-1 to total_len-1; compare with the same positions without the cache
overlap_no_cache = out_no_cache[:, prompt_len-1:]
max_diff = (overlap_no_cache - out_with_cache).abs().max().item()
print(f"\nNo cache, single forward pass (positions {prompt_len-1} to {total_len-1}) shape: {overlap_no_cache.shape}")
print(f"With cache, step-by-step forward output shape: {out_with_cache.shape}")
print(f"Maximum absolute difference between the two: {max_diff:.2e}")
print(f"Check passed (difference < 1e-5)? {max_diff < 1e-5}")
print("  → the KV cache is purely a speed optimization; it does not change the results")
print()

print("=" * 70)
print("All examples finished!")
print("=" * 70)
