"""
MiniMind basic components: example code
=======================================

This script shows how three core building blocks work:
1. Token Embedding (word embedding layer)
2. RMSNorm (root mean square layer normalization)
3. RoPE (rotary position embedding)

How to run:
    python 02-basic-components-demo.en.py

Dependencies:
    - PyTorch (the CPU build is enough)

Environment: runs on a CPU, no GPU needed.
"""

import torch
import torch.nn as nn
import math


# =============================================================================
# Example 1: Token Embedding (word embedding layer)
# =============================================================================
print("=" * 70)
print("Example 1: Token Embedding (word embedding layer)")
print("=" * 70)

vocab_size = 10  # vocabulary size
hidden_size = 4   # embedding dimension

# Create a small Embedding layer
embedding = nn.Embedding(vocab_size, hidden_size)

# Initialize with a fixed random seed so the results are reproducible
torch.manual_seed(42)
nn.init.xavier_uniform_(embedding.weight)

# Build the input: batch_size=2, seq_len=3
input_ids = torch.tensor([
    [1, 3, 5],   # token ids of sentence 1
    [2, 4, 6]    # token ids of sentence 2
], dtype=torch.long)

print("\nInput input_ids:")
print(f"  shape: {input_ids.shape}")
print(f"  dtype: {input_ids.dtype}")
print(f"  values:\n{input_ids}")

# Forward pass: token ids -> embedding vectors
hidden_states = embedding(input_ids)

print("\nOutput hidden_states:")
print(f"  shape: {hidden_states.shape}  # [batch_size, seq_len, hidden_size]")
print(f"  dtype: {hidden_states.dtype}")
print(f"  values:\n{hidden_states}")

# Print the embedding vector of one token
token_id = 3
token_embedding = embedding.weight[token_id]
print(f"\nEmbedding vector of token {token_id}:")
print(f"  shape: {token_embedding.shape}")
print(f"  value: {token_embedding}")

# Check: looking the row up directly in embedding.weight matches the forward pass
print(f"\nCheck: does the table lookup for input_ids[0, 1] (token {input_ids[0, 1].item()}) match the forward pass?")
print(f"  lookup: {embedding.weight[input_ids[0, 1]]}")
print(f"  forward: {hidden_states[0, 1]}")
print(f"  Match: {torch.allclose(embedding.weight[input_ids[0, 1]], hidden_states[0, 1])}")

print()


# =============================================================================
# Example 2: RMSNorm (root mean square layer normalization)
# =============================================================================
print("=" * 70)
print("Example 2: RMSNorm (root mean square layer normalization)")
print("=" * 70)


# A simplified, hand-written RMSNorm class
class SimpleRMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        # Root mean square: rms = sqrt(mean(x^2) + eps)
        rms = torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        # Normalize, then multiply by the learnable weight
        return self.weight * x / rms


# Test input
batch_size, seq_len, hidden_size = 2, 3, 4
torch.manual_seed(123)
x = torch.randn(batch_size, seq_len, hidden_size)

print("\nInput x:")
print(f"  shape: {x.shape}")
print(f"  values at sample 0, position 0: {x[0, 0]}")
print(f"  original mean: {x[0, 0].mean().item():.6f}")
print(f"  original root mean square: {torch.sqrt(x[0, 0].pow(2).mean()).item():.6f}")

# Create the RMSNorm layer
rms_norm = SimpleRMSNorm(hidden_size, eps=1e-6)
rms_output = rms_norm(x)

print("\nRMSNorm output:")
print(f"  shape: {rms_output.shape}")
print(f"  values at sample 0, position 0: {rms_output[0, 0]}")
print(f"  output mean: {rms_output[0, 0].mean().item():.6f}  # note: RMSNorm does not subtract the mean")
print(f"  output root mean square: {torch.sqrt(rms_output[0, 0].pow(2).mean()).item():.6f}  # about 1 (when every weight is 1)")

# Compare with PyTorch's built-in LayerNorm
layer_norm = nn.LayerNorm(hidden_size, eps=1e-6)
layer_norm.weight.data.fill_(1.0)
layer_norm.bias.data.fill_(0.0)
ln_output = layer_norm(x)

print("\nLayerNorm output:")
print(f"  values at sample 0, position 0: {ln_output[0, 0]}")
print(f"  output mean: {ln_output[0, 0].mean().item():.6f}  # LayerNorm's mean is 0")
print(f"  output root mean square: {torch.sqrt(ln_output[0, 0].pow(2).mean()).item():.6f}")

# Compare the two
diff = (rms_output - ln_output).abs().mean()
print(f"\nMean absolute difference between RMSNorm and LayerNorm: {diff.item():.6f}")
print("  Why they differ: LayerNorm subtracts the mean, RMSNorm does not")

# Check RMSNorm's scaling property
x_mean = x.mean(-1, keepdim=True)
rms_mean = rms_output.mean(-1, keepdim=True)
ratio = rms_mean / x_mean  # scaling ratio of the mean
rms_value = torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
print(f"\nCheck: is the scaling ratio of the mean ≈ 1/rms?")
print(f"  actual ratio: {ratio[0, 0].item():.6f}")
print(f"  1 / rms: {(1.0 / rms_value[0, 0]).item():.6f}")
print(f"  Match: {torch.allclose(ratio, 1.0 / rms_value, atol=1e-5)}")

print()


# =============================================================================
# Example 3: RoPE (rotary position embedding)
# =============================================================================
print("=" * 70)
print("Example 3: RoPE (rotary position embedding)")
print("=" * 70)


# A simplified, hand-written precompute_freqs_cis
def precompute_freqs_cis(dim: int, end: int, rope_base: float = 10000.0):
    """
    Precompute the cos/sin tables RoPE needs
    Inputs:
        dim: the size of head_dim (must be even)
        end: maximum sequence length
        rope_base: base of the frequencies
    Outputs:
        freqs_cos: [end, dim]
        freqs_sin: [end, dim]
    """
    # Frequencies: theta_i = rope_base ^ (-2i / dim)
    freqs = 1.0 / (rope_base ** (torch.arange(0, dim, 2).float() / dim))
    # Positions: 0, 1, 2, ..., end-1
    t = torch.arange(end, device=freqs.device)
    # Outer product gives the rotation angle of every position: [end, dim//2]
    freqs = torch.outer(t, freqs).float()
    # Concatenate into the full cos/sin tables: [end, dim]
    freqs_cos = torch.cat([torch.cos(freqs), torch.cos(freqs)], dim=-1)
    freqs_sin = torch.cat([torch.sin(freqs), torch.sin(freqs)], dim=-1)
    return freqs_cos, freqs_sin


def apply_rotary_pos_emb(x, cos, sin):
    """
    Apply rotary position embedding to the input tensor x
    Inputs:
        x: [seq_len, head_dim] or [batch, seq, num_heads, head_dim]
        cos, sin: [seq_len, head_dim]
    Output:
        the rotated x, with the same shape as the input
    """
    def rotate_half(x_in):
        # Negate the second half and put it in front of the first half: the imaginary part of a complex multiplication
        half = x_in.shape[-1] // 2
        return torch.cat((-x_in[..., half:], x_in[..., :half]), dim=-1)

    # Make the cos/sin shapes match (so they broadcast)
    if x.dim() == 4:
        cos = cos.unsqueeze(0).unsqueeze(0)
        sin = sin.unsqueeze(0).unsqueeze(0)

    return (x * cos) + (rotate_half(x) * sin)


print("\n3.1 Precompute the cos/sin tables")
head_dim = 8   # dimension of each attention head
seq_len = 4    # sequence length
freqs_cos, freqs_sin = precompute_freqs_cis(dim=head_dim, end=seq_len, rope_base=10000.0)

print(f"  head_dim: {head_dim}, seq_len: {seq_len}")
print(f"  freqs_cos shape: {freqs_cos.shape}")
print(f"  freqs_sin shape: {freqs_sin.shape}")
print(f"  cos at position 0: {freqs_cos[0]}")
print(f"  cos at position 1: {freqs_cos[1]}")
print(f"  sin at position 0: {freqs_sin[0]}  # all 0, because sin(0) = 0")

print("\n3.2 Test the rotation on a simple Q vector")
# Build a Q that is the same at every position, to make the rotation easy to see
q = torch.zeros(seq_len, head_dim)
q[:, 0] = 1.0  # dimension 0 set to 1, the others 0
print(f"  original Q (same at every position): {q[0]}")

# Apply RoPE
q_rotated = apply_rotary_pos_emb(q, freqs_cos, freqs_sin)

print(f"\n  Q after rotation:")
for i in range(seq_len):
    print(f"    position {i}: {q_rotated[i]}")
print(f"\n  Observe: the vector at position 0 is unchanged (rotation angle 0)")
print(f"  Observe: the further the position, the larger the rotation angle")

print("\n3.3 Check relative position invariance")
print("  Check: dot product of positions 0 and 1 ≈ that of positions 1 and 2 ≈ that of positions 2 and 3")

# Use the same vector as both Q and K (a simplified test)
v = torch.randn(head_dim)
print(f"  test vector v: {v}")

# Rotated vector at each position
v_at = []
for pos in range(seq_len):
    cos_p = freqs_cos[pos:pos+1, :]
    sin_p = freqs_sin[pos:pos+1, :]
    v_rot = apply_rotary_pos_emb(v.unsqueeze(0), cos_p, sin_p).squeeze(0)
    v_at.append(v_rot)

# Dot products of neighbouring positions
dot_0_1 = torch.dot(v_at[0], v_at[1]).item()
dot_1_2 = torch.dot(v_at[1], v_at[2]).item()
dot_2_3 = torch.dot(v_at[2], v_at[3]).item()

print(f"\n  Dot products:")
print(f"    <v(0), v(1)> = {dot_0_1:.6f}")
print(f"    <v(1), v(2)> = {dot_1_2:.6f}")
print(f"    <v(2), v(3)> = {dot_2_3:.6f}")

# Check relative position invariance
diff_01_12 = abs(dot_0_1 - dot_1_2)
diff_12_23 = abs(dot_1_2 - dot_2_3)

print(f"\n  Differences:")
print(f"    |<0,1> - <1,2>| = {diff_01_12:.2e}")
print(f"    |<1,2> - <2,3>| = {diff_12_23:.2e}")

print(f"\n  Relative position invariance check: {'passed' if diff_01_12 < 1e-5 and diff_12_23 < 1e-5 else 'failed'}")
print(f"  (a difference within 1e-5 counts as passed: floating-point rounding error)")

# Extra check: dot products at distance 2 should also be equal
print(f"\n  Extra check: dot products at distance 2 are equal too")
dot_0_2 = torch.dot(v_at[0], v_at[2]).item()
dot_1_3 = torch.dot(v_at[1], v_at[3]).item()
print(f"    <v(0), v(2)> = {dot_0_2:.6f}")
print(f"    <v(1), v(3)> = {dot_1_3:.6f}")
print(f"    difference: {abs(dot_0_2 - dot_1_3):.2e}")
print(f"    check: {'passed' if abs(dot_0_2 - dot_1_3) < 1e-5 else 'failed'}")

print()
print("=" * 70)
print("All examples finished!")
print("=" * 70)
