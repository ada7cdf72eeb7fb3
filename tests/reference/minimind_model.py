#!/usr/bin/env python3
"""An independent PyTorch reference of MiniMind's MiniMindForCausalLM (jingyaogong/minimind,
model/model_minimind.py): config, forward pass with a KV cache, MoE routing, generation (greedy,
or sampled with torch.multinomial as MiniMind's generate samples), and reading a checkpoint (Hugging Face safetensors folder or MiniMind's torch.save `.pth`).

Written from /work/shared/MINIMIND-FACTS.md and a reading of MiniMind's model file, without
transformers. The modules carry MiniMind's names and registration order, so state_dict() has
MiniMind's keys in MiniMind's order. Every operation is done in the same order and precision
as MiniMind's eager (non-flash) path, in float32; weights stored as F16/BF16 are upcast
exactly. tests/fixtures/gen_minimind.py and gen_minimind_sample.py import it; run directly it
prints a greedy continuation of a checkpoint folder, or a sampled one after
torch.manual_seed(SEED):

    /usr/bin/python3 tests/reference/minimind_model.py DIR --ids 1,17,42 [-n 24] [--penalty 1.3]
        [--seed S [--temperature T] [--top-k K] [--top-p P]]

The maths, for a sequence of token ids at positions p0..p0+T-1 (all float32):
    x = embed_tokens[id]                                                   [T, hidden]
    per layer:
        rmsnorm(x, w) = w * (x * rsqrt(mean(x^2) + eps))
        h = rmsnorm(x, input_layernorm)
        q, k, v = h Wq^T, h Wk^T, h Wv^T split into heads                  [T, heads|kv, hd]
        q, k = rmsnorm per head (q_norm, k_norm), then RoPE:
              x*cos + rotate_half(x)*sin, rotate_half(x) = cat(-x[hd/2:], x[:hd/2]),
              cos[m] = cat(cos(m f), cos(m f)) * attention_factor, f_i = 1/theta^(2i/hd)
              (f_i scaled by YaRN's ramp when rope_scaling applies)
        k, v appended to the cache; query head h reads KV head h // (heads/kv)
        a = softmax(q k^T / sqrt(hd) + causal mask on the last T key columns)   (float32)
        x = x + o_proj(a v)
        h = rmsnorm(x, post_attention_layernorm)
        dense: x = x + down(silu(gate(h)) * up(h))   (+ 0 when intermediate_size is 0)
        MoE:   p = softmax(gate(h)); w, e = topk(p, k); w /= sum(w) + 1e-20 if norm_topk_prob;
               x = x + sum over chosen experts, in ascending expert id, of w * expert(h)
    logits = rmsnorm(x, norm) lm_head^T        (lm_head = embed_tokens when tied)
"""

import argparse
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F
from torch import nn

BOS = 1
EOS = 2

# MiniMindConfig's rope_scaling when inference_rope_scaling is true.
YARN_DEFAULTS = {"beta_fast": 32, "beta_slow": 1, "factor": 16,
                 "original_max_position_embeddings": 2048, "attention_factor": 1.0,
                 "type": "yarn"}


class FormatError(ValueError):
    """A checkpoint or config that does not match what MiniMind writes."""


# --------------------------------------------------------------------------------------------
# Config
# --------------------------------------------------------------------------------------------

class MiniMindConfig:
    """MiniMindConfig's fields and defaults; every field can be overridden by keyword.

    Derived defaults follow MiniMind: head_dim = hidden_size // num_attention_heads,
    intermediate_size = ceil(hidden_size * pi / 64) * 64, moe_intermediate_size =
    intermediate_size, rope_scaling = YARN_DEFAULTS if inference_rope_scaling else None.

    One deliberate difference: an explicit rope_scaling dict (from config.json or a keyword) is
    kept when inference_rope_scaling is true. MiniMind's MiniMindConfig overwrites it with its
    defaults, so with MiniMind a custom YaRN needs config.rope_scaling set after construction
    (the maths of precompute_freqs_cis reads whatever dict it is given). A config.json that
    MiniMind itself saved holds either null or exactly the defaults, so both agree on it."""

    def __init__(self, **kw):
        g = kw.pop
        self.hidden_size = g("hidden_size", 768)
        self.num_hidden_layers = g("num_hidden_layers", 8)
        self.use_moe = g("use_moe", False)
        self.dropout = g("dropout", 0.0)
        self.vocab_size = g("vocab_size", 6400)
        self.bos_token_id = g("bos_token_id", BOS)
        self.eos_token_id = g("eos_token_id", EOS)
        self.flash_attn = g("flash_attn", True)
        self.num_attention_heads = g("num_attention_heads", 8)
        self.num_key_value_heads = g("num_key_value_heads", 4)
        self.head_dim = g("head_dim", self.hidden_size // self.num_attention_heads)
        self.hidden_act = g("hidden_act", "silu")
        self.intermediate_size = g("intermediate_size",
                                   math.ceil(self.hidden_size * math.pi / 64) * 64)
        self.max_position_embeddings = g("max_position_embeddings", 32768)
        self.rms_norm_eps = g("rms_norm_eps", 1e-6)
        self.rope_theta = g("rope_theta", 1e6)
        self.tie_word_embeddings = g("tie_word_embeddings", True)
        self.inference_rope_scaling = g("inference_rope_scaling", False)
        scaling = g("rope_scaling", None)
        if self.inference_rope_scaling:
            self.rope_scaling = dict(YARN_DEFAULTS if scaling is None else scaling)
        else:
            self.rope_scaling = None
        self.num_experts = g("num_experts", 4)
        self.num_experts_per_tok = g("num_experts_per_tok", 1)
        self.moe_intermediate_size = g("moe_intermediate_size", self.intermediate_size)
        self.norm_topk_prob = g("norm_topk_prob", True)
        self.router_aux_loss_coef = g("router_aux_loss_coef", 5e-4)
        # Keys a Hugging Face config.json carries that do not change the maths.
        for key in ("architectures", "model_type", "torch_dtype", "transformers_version",
                    "auto_map"):
            kw.pop(key, None)
        if kw:
            raise FormatError("unknown config keys: %s" % ", ".join(sorted(kw)))
        self.check()

    def check(self):
        for name in ("hidden_size", "num_hidden_layers", "vocab_size", "num_attention_heads",
                     "num_key_value_heads", "head_dim", "max_position_embeddings"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) <= 0:
                raise FormatError("config: %s = %r, must be an int > 0"
                                  % (name, getattr(self, name)))
        # intermediate_size 0: MiniMind's FeedForward is Linear(hidden, 0) and Linear(0, hidden),
        # which adds zeros: an attention-only model.
        if not isinstance(self.intermediate_size, int) or self.intermediate_size < 0:
            raise FormatError("config: intermediate_size = %r, must be an int >= 0"
                              % (self.intermediate_size,))
        if self.num_attention_heads % self.num_key_value_heads:
            raise FormatError("config: num_attention_heads %d not a multiple of "
                              "num_key_value_heads %d"
                              % (self.num_attention_heads, self.num_key_value_heads))
        if self.head_dim % 2:
            raise FormatError("config: head_dim %d is odd, RoPE needs halves" % self.head_dim)
        if self.hidden_act != "silu":
            raise FormatError("config: hidden_act %r, only silu" % self.hidden_act)
        if self.use_moe and not 0 < self.num_experts_per_tok <= self.num_experts:
            raise FormatError("config: num_experts_per_tok %d not in 1..num_experts %d"
                              % (self.num_experts_per_tok, self.num_experts))

    def to_dict(self):
        """The fields in MiniMindConfig's order (what its config.json holds, minus transformers'
        own bookkeeping)."""
        keys = ("hidden_size", "num_hidden_layers", "use_moe", "dropout", "vocab_size",
                "bos_token_id", "eos_token_id", "flash_attn", "num_attention_heads",
                "num_key_value_heads", "head_dim", "hidden_act", "intermediate_size",
                "max_position_embeddings", "rms_norm_eps", "rope_theta", "tie_word_embeddings",
                "inference_rope_scaling", "rope_scaling", "num_experts", "num_experts_per_tok",
                "moe_intermediate_size", "norm_topk_prob", "router_aux_loss_coef")
        return {k: getattr(self, k) for k in keys}

    @classmethod
    def from_json(cls, path):
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        inference = d.get("inference_rope_scaling", False)
        if not inference:
            d.pop("rope_scaling", None)
        return cls(**d)


# --------------------------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    """weight * (x * rsqrt(mean(x^2) + eps)), in float32, cast back to x's dtype."""

    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (self.weight * normed).type_as(x)


def yarn_ramp_bounds(head_dim, theta, orig_max, beta_fast, beta_slow):
    """(low, high): the dimension pairs where YaRN's linear ramp starts and ends.
    inv_dim(b) = head_dim * ln(orig_max / (2 pi b)) / (2 ln theta) is the pair index whose
    wavelength fits b times into orig_max positions."""
    def inv_dim(b):
        return head_dim * math.log(orig_max / (b * 2 * math.pi)) / (2 * math.log(theta))
    low = max(math.floor(inv_dim(beta_fast)), 0)
    high = min(math.ceil(inv_dim(beta_slow)), head_dim // 2 - 1)
    return low, high


def rope_frequencies(head_dim, end, theta, rope_scaling=None):
    """(freqs [head_dim/2], attention_factor): f_i = 1 / theta^(2i/head_dim); with YaRN, when
    end / original_max_position_embeddings > 1, f_i *= (1 - ramp_i) + ramp_i / factor with
    ramp_i = clamp((i - low) / max(high - low, 0.001), 0, 1)."""
    half = head_dim // 2
    exponents = torch.arange(0, head_dim, 2)[:half].float() / head_dim
    freqs = 1.0 / (theta ** exponents)
    attn_factor = 1.0
    if rope_scaling is not None:
        orig_max = rope_scaling.get("original_max_position_embeddings", 2048)
        factor = rope_scaling.get("factor", 16)
        beta_fast = rope_scaling.get("beta_fast", 32.0)
        beta_slow = rope_scaling.get("beta_slow", 1.0)
        attn_factor = rope_scaling.get("attention_factor", 1.0)
        if end / orig_max > 1.0:
            low, high = yarn_ramp_bounds(head_dim, theta, orig_max, beta_fast, beta_slow)
            ramp = torch.clamp((torch.arange(half).float() - low) / max(high - low, 0.001), 0, 1)
            freqs = freqs * (1 - ramp + ramp / factor)
    return freqs, attn_factor


def rope_tables(head_dim, end, theta, rope_scaling=None):
    """cos, sin [end, head_dim]: row m is cat(cos(m f), cos(m f)) * attention_factor (same for
    sin). The whole table is computed, as MiniMind does at load time: torch's vectorised cos
    and sin may round a block's tail differently, so rows are not computed on their own."""
    freqs, attn_factor = rope_frequencies(head_dim, end, theta, rope_scaling)
    angles = torch.outer(torch.arange(end), freqs).float()
    cos = torch.cat([torch.cos(angles), torch.cos(angles)], dim=-1) * attn_factor
    sin = torch.cat([torch.sin(angles), torch.sin(angles)], dim=-1) * attn_factor
    return cos, sin


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x, cos, sin):
    """x [B, T, heads, hd]; cos, sin [T, hd] (the rows of the tokens' positions)."""
    c, s = cos.unsqueeze(1), sin.unsqueeze(1)
    return ((x * c) + (rotate_half(x) * s)).to(x.dtype)


def repeat_kv(x, n_rep):
    """[B, S, kv, hd] -> [B, S, kv * n_rep, hd], KV head j repeated for query heads
    j*n_rep .. j*n_rep + n_rep - 1."""
    if n_rep == 1:
        return x
    b, s, kv, hd = x.shape
    return x[:, :, :, None, :].expand(b, s, kv, n_rep, hd).reshape(b, s, kv * n_rep, hd)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_heads, self.n_kv = cfg.num_attention_heads, cfg.num_key_value_heads
        self.n_rep, self.head_dim = self.n_heads // self.n_kv, cfg.head_dim
        hd = self.head_dim
        self.q_proj = nn.Linear(cfg.hidden_size, self.n_heads * hd, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, self.n_kv * hd, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, self.n_kv * hd, bias=False)
        self.o_proj = nn.Linear(self.n_heads * hd, cfg.hidden_size, bias=False)
        self.q_norm = RMSNorm(hd, cfg.rms_norm_eps)
        self.k_norm = RMSNorm(hd, cfg.rms_norm_eps)

    def forward(self, x, cos, sin, past=None, use_cache=False):
        """x [B, T, hidden]; cos, sin [T, hd]; past (k, v) [B, S0, kv, hd] or None.
        Returns (out [B, T, hidden], present (k, v) [B, S0+T, kv, hd] or None,
        weights [B, heads, T, S0+T])."""
        b, t, _ = x.shape
        hd = self.head_dim
        q = self.q_proj(x).view(b, t, self.n_heads, hd)
        k = self.k_proj(x).view(b, t, self.n_kv, hd)
        v = self.v_proj(x).view(b, t, self.n_kv, hd)
        q, k = self.q_norm(q), self.k_norm(k)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if past is not None:
            k = torch.cat([past[0], k], dim=1)
            v = torch.cat([past[1], v], dim=1)
        present = (k, v) if use_cache else None
        q = q.transpose(1, 2)                                   # [B, heads, T, hd]
        k = repeat_kv(k, self.n_rep).transpose(1, 2)            # [B, heads, S, hd]
        v = repeat_kv(v, self.n_rep).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)      # [B, heads, T, S]
        # Causal mask on the last T key columns: new token i may not see new token j > i.
        scores[:, :, :, -t:] += torch.full((t, t), float("-inf")).triu(1)
        weights = F.softmax(scores.float(), dim=-1).type_as(q)
        out = (weights @ v).transpose(1, 2).reshape(b, t, -1)
        return self.o_proj(out), present, weights


class FeedForward(nn.Module):
    """down(silu(gate(x)) * up(x)); registered gate, down, up as in MiniMind."""

    def __init__(self, cfg, intermediate_size=None):
        super().__init__()
        inter = intermediate_size or cfg.intermediate_size
        self.gate_proj = nn.Linear(cfg.hidden_size, inter, bias=False)
        self.down_proj = nn.Linear(inter, cfg.hidden_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, inter, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class MoEFeedForward(nn.Module):
    """Router gate (Linear hidden -> experts, no bias) and routed experts, no shared expert."""

    def __init__(self, cfg):
        super().__init__()
        self.top_k, self.norm_topk_prob = cfg.num_experts_per_tok, cfg.norm_topk_prob
        self.gate = nn.Linear(cfg.hidden_size, cfg.num_experts, bias=False)
        self.experts = nn.ModuleList([FeedForward(cfg, cfg.moe_intermediate_size)
                                      for _ in range(cfg.num_experts)])

    def forward(self, x):
        """x [B, T, hidden] -> (y [B, T, hidden], route): route is (ids [B*T, k],
        weights [B*T, k], probs [B*T, experts]) with the slots in topk(sorted=False)'s order."""
        b, t, d = x.shape
        flat = x.view(-1, d)
        probs = F.softmax(self.gate(flat), dim=-1)
        weight, idx = torch.topk(probs, k=self.top_k, dim=-1, sorted=False)
        if self.norm_topk_prob:
            weight = weight / (weight.sum(dim=-1, keepdim=True) + 1e-20)
        y = torch.zeros_like(flat)
        # Expert by expert in ascending id: each adds w * expert(x) to the tokens routed to it,
        # so a token's terms are summed in ascending expert order, starting from 0.
        for e, expert in enumerate(self.experts):
            chosen = idx == e                                   # [N, k], at most one per row
            if not chosen.any():
                continue
            tokens = chosen.any(dim=-1).nonzero().flatten()
            w = weight[chosen].view(-1, 1)                      # row-major: token order
            y.index_add_(0, tokens, (expert(flat[tokens]) * w).to(y.dtype))
        return y.view(b, t, d), (idx, weight, probs)


class MiniMindBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self_attn = Attention(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MoEFeedForward(cfg) if cfg.use_moe else FeedForward(cfg)

    def forward(self, x, cos, sin, past=None, use_cache=False):
        attn_out, present, weights = self.self_attn(self.input_layernorm(x), cos, sin, past,
                                                    use_cache)
        h = attn_out + x
        m = self.mlp(self.post_attention_layernorm(h))
        route = None
        if isinstance(m, tuple):
            m, route = m
        return h + m, present, weights, route


class MiniMindModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([MiniMindBlock(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        cos, sin = rope_tables(cfg.head_dim, cfg.max_position_embeddings, cfg.rope_theta,
                               cfg.rope_scaling)
        self.register_buffer("freqs_cos", cos, persistent=False)
        self.register_buffer("freqs_sin", sin, persistent=False)


class MiniMindForCausalLM(nn.Module):
    """state_dict keys: model.embed_tokens.weight, model.layers.N.self_attn.{q,k,v,o}_proj.weight,
    model.layers.N.self_attn.{q,k}_norm.weight, model.layers.N.input_layernorm.weight,
    model.layers.N.post_attention_layernorm.weight, model.layers.N.mlp.{gate,down,up}_proj.weight
    or model.layers.N.mlp.gate.weight + model.layers.N.mlp.experts.E.{gate,down,up}_proj.weight,
    model.norm.weight, lm_head.weight (the same Parameter as the embedding when tied: both keys
    appear, as in MiniMind's state_dict)."""

    def __init__(self, cfg=None):
        super().__init__()
        self.config = cfg or MiniMindConfig()
        self.model = MiniMindModel(self.config)
        self.lm_head = nn.Linear(self.config.hidden_size, self.config.vocab_size, bias=False)
        if self.config.tie_word_embeddings:
            self.model.embed_tokens.weight = self.lm_head.weight

    @torch.no_grad()
    def forward(self, input_ids, past_key_values=None, use_cache=False, trace=None):
        """input_ids [B, T] (long). past_key_values: None or a list of (k, v) per layer, k/v
        [B, S0, kv, hd] (k after QK-Norm and RoPE). The tokens take positions S0..S0+T-1.
        Returns (logits [B, T, vocab], presents: list of (k, v) per layer, or Nones).
        trace, if a dict, receives per layer "attn" [B, heads, T, S0+T] weights, "resid"
        [B, T, hidden] (the residual stream after the layer) and for MoE "route" (ids, weights,
        probs) as MoEFeedForward returns them."""
        cfg, m = self.config, self.model
        _, t = input_ids.shape
        if past_key_values is None:
            past_key_values = [None] * cfg.num_hidden_layers
        start = past_key_values[0][0].shape[1] if past_key_values[0] is not None else 0
        if start + t > cfg.max_position_embeddings:
            raise ValueError("positions up to %d, max_position_embeddings is %d"
                             % (start + t, cfg.max_position_embeddings))
        cos, sin = m.freqs_cos[start:start + t], m.freqs_sin[start:start + t]
        x = m.embed_tokens(input_ids)
        presents = []
        if trace is not None:
            trace.setdefault("attn", []), trace.setdefault("resid", [])
            trace.setdefault("route", [])
        for layer, past in zip(m.layers, past_key_values):
            x, present, weights, route = layer(x, cos, sin, past, use_cache)
            presents.append(present)
            if trace is not None:
                trace["attn"].append(weights)
                trace["resid"].append(x)
                trace["route"].append(route)
        return self.lm_head(m.norm(x)), presents


# --------------------------------------------------------------------------------------------
# Routing in a fixed slot order
# --------------------------------------------------------------------------------------------

def canonical_route(idx, weight):
    """topk(sorted=False) leaves the slot order unspecified. Returns (ids, weights) [N, k] with
    each row's slots by descending weight, equal weights by ascending expert id."""
    ids, ws = [], []
    for row_i, row_w in zip(idx.tolist(), weight.tolist()):
        order = sorted(range(len(row_i)), key=lambda j: (-row_w[j], row_i[j]))
        ids.append([row_i[j] for j in order])
        ws.append([row_w[j] for j in order])
    return (torch.tensor(ids, dtype=torch.long),
            torch.tensor(ws, dtype=torch.float32).reshape(weight.shape))


# --------------------------------------------------------------------------------------------
# Generation (MiniMind's generate)
# --------------------------------------------------------------------------------------------

@torch.no_grad()
def generate(model, prompt_ids, max_new_tokens=24, temperature=1.0, top_k=50, top_p=0.85,
             repetition_penalty=1.0, eos_token_id=EOS, use_cache=True, do_sample=False):
    """MiniMind's generate for one sequence: per step, the logits of the last position /
    temperature; repetition penalty over every id of the sequence so far (prompt included):
    positive logits divided by it, negative ones multiplied; top-k and top-p masks (they never
    remove the largest logit); then with do_sample torch.multinomial(torch.softmax(logits), 1)
    on the default generator (seed it first with torch.manual_seed, as a caller of MiniMind's
    generate does), without it argmax (first index on ties). The token is appended;
    generation stops after max_new_tokens or after appending eos_token_id.
    With use_cache the prompt is one pass and each new token one cached step; without, every
    step recomputes the whole sequence.
    Returns {"ids": new ids (eos included when it stops), "stop": "eos" | "max_new_tokens",
    "gaps": top-1 minus top-2 of the penalised logits at each step}."""
    ids = torch.tensor([list(prompt_ids)], dtype=torch.long)
    past, new, gaps, stop = None, [], [], "max_new_tokens"
    for _ in range(max_new_tokens):
        past_len = past[0][0].shape[1] if past else 0
        logits, presents = model(ids[:, past_len:], past, use_cache=use_cache)
        logits = logits[:, -1, :] / temperature
        if repetition_penalty != 1.0:
            seen = torch.unique(ids[0])
            score = logits[0, seen]
            logits[0, seen] = torch.where(score > 0, score / repetition_penalty,
                                          score * repetition_penalty)
        top2 = torch.topk(logits[0], 2).values.tolist()
        gaps.append(top2[0] - top2[1])
        if top_k > 0:
            logits[logits < torch.topk(logits, top_k)[0][..., -1, None]] = -float("inf")
        if top_p < 1.0:
            sorted_logits, sorted_idx = torch.sort(logits, descending=True)
            mask = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1) > top_p
            mask[..., 1:], mask[..., 0] = mask[..., :-1].clone(), False
            logits[mask.scatter(1, sorted_idx, mask)] = -float("inf")
        if do_sample:
            nxt = torch.multinomial(torch.softmax(logits, dim=-1), num_samples=1)
        else:
            nxt = torch.argmax(logits, dim=-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=-1)
        new.append(int(nxt))
        past = presents if use_cache else None
        if eos_token_id is not None and int(nxt) == eos_token_id:
            stop = "eos"
            break
    return {"ids": new, "stop": stop, "gaps": gaps}


# --------------------------------------------------------------------------------------------
# Checkpoints
# --------------------------------------------------------------------------------------------

ST_DTYPES = {"F32": (torch.float32, 4), "F16": (torch.float16, 2), "BF16": (torch.bfloat16, 2),
             "I64": (torch.int64, 8)}


def read_safetensors(path):
    """Returns ({name: tensor}, metadata). Checks that the offsets tile the data exactly."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise FormatError("%s: shorter than the 8-byte header length" % path)
    (n,) = struct.unpack_from("<Q", data, 0)
    if 8 + n > len(data):
        raise FormatError("%s: header length %d past the end of the file" % (path, n))
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {}) or {}
    body = data[8 + n:]
    out, spans = {}, []
    for name, e in header.items():
        if e["dtype"] not in ST_DTYPES:
            raise FormatError("%s: %s has dtype %s" % (path, name, e["dtype"]))
        dtype, size = ST_DTYPES[e["dtype"]]
        a, b = e["data_offsets"]
        if not 0 <= a <= b <= len(body) or b - a != size * math.prod(e["shape"]):
            raise FormatError("%s: %s: offsets %r for shape %r" % (path, name, (a, b),
                                                                    e["shape"]))
        spans.append((a, b))
        raw = bytearray(body[a:b])
        if dtype == torch.bfloat16:
            t = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16) if raw else \
                torch.empty(0, dtype=dtype)
        else:
            t = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        out[name] = t.reshape(e["shape"]).clone()
    spans.sort()
    if spans and (spans[0][0] != 0 or spans[-1][1] != len(body)
                  or any(p[1] != q[0] for p, q in zip(spans, spans[1:]))):
        raise FormatError("%s: tensor data does not tile the body" % path)
    return out, meta


def load_state_dict(model, sd):
    """As MiniMind's init_model: load_state_dict(strict=False), here with the leftovers checked:
    nothing unexpected, and only lm_head.weight may be missing (when tied). Values are copied
    into the float32 parameters (F16/BF16 upcast exactly). With a tied head and both keys
    present, the later key (lm_head.weight) is what the shared parameter ends up holding."""
    sd = {k: v.float() for k, v in sd.items()}
    result = model.load_state_dict(sd, strict=False)
    missing = set(result.missing_keys)
    tied = {"model.embed_tokens.weight", "lm_head.weight"}
    if model.config.tie_word_embeddings and tied & set(sd):
        missing -= tied                 # one shared parameter: either key fills it
    if missing or result.unexpected_keys:
        raise FormatError("checkpoint: missing %s, unexpected %s"
                          % (sorted(missing), sorted(result.unexpected_keys)))


def load_model(folder):
    """A folder with config.json and model.safetensors or model.pth (MiniMind's .pth: a dict of
    tensors written by torch.save)."""
    cfg = MiniMindConfig.from_json(os.path.join(folder, "config.json"))
    model = MiniMindForCausalLM(cfg).eval()
    st = os.path.join(folder, "model.safetensors")
    if os.path.exists(st):
        sd, _ = read_safetensors(st)
    else:
        sd = torch.load(os.path.join(folder, "model.pth"), map_location="cpu")
    load_state_dict(model, sd)
    return model


def main():
    ap = argparse.ArgumentParser(description="MiniMind generation, in PyTorch (greedy unless --seed)")
    ap.add_argument("folder", help="config.json + model.safetensors or model.pth")
    ap.add_argument("--ids", default="1", help="prompt ids, comma-separated (default: 1)")
    ap.add_argument("-n", "--max-new-tokens", type=int, default=24)
    ap.add_argument("--penalty", type=float, default=1.0, help="repetition_penalty")
    ap.add_argument("--seed", type=int, help="sample: torch.manual_seed(SEED), then do_sample")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--top-k", type=int, default=50)
    ap.add_argument("--top-p", type=float, default=0.85)
    args = ap.parse_args()
    model = load_model(args.folder)
    prompt = [int(s) for s in args.ids.split(",") if s.strip()]
    if args.seed is not None:
        torch.manual_seed(args.seed)
    r = generate(model, prompt, args.max_new_tokens, args.temperature, args.top_k, args.top_p,
                 repetition_penalty=args.penalty, do_sample=args.seed is not None)
    print(" ".join(str(i) for i in r["ids"]), "(%s)" % r["stop"])


if __name__ == "__main__":
    sys.exit(main())
