#!/usr/bin/env python3
"""Training on top of tests/reference/minimind_model.py: MiniMind's loss (cross-entropy plus the
MoE load-balancing loss) with autograd, and MiniMind's pretraining loop (AdamW, gradient
accumulation, clipping, cosine learning rate), in float32 or float64.

tests/fixtures/gen_train.py imports it. The model is minimind_model.MiniMindForCausalLM (its
parameters, names and buffers); the forward pass is written again here because the reference's
is inference only (no_grad, float32 casts that would spoil a float64 copy). For float32 it does
the same operations in the same order as the reference and as MiniMind's eager attention path.
Two options, off in MiniMind, make llama2.c's models trainable by the same code: "rope_interleaved"
(RoPE rotates the pairs (x[2i], x[2i+1]), as tests/reference/llama2c.py's rope_interleaved, with
MiniMind's frequencies) and "qk_norm" false (no q_norm / k_norm: the modules and their state_dict
keys are removed).

What MiniMind's code does, read in jingyaogong/minimind:

model/model_minimind.py (commit 0074dcfd), MOEFeedForward.forward:
    scores = F.softmax(self.gate(x_flat), dim=-1)                      # [N = B*T, E]
    topk_weight, topk_idx = torch.topk(scores, k, dim=-1, sorted=False)
    ...
    elif self.training: y[0, 0] += 0 * sum(p.sum() for p in expert.parameters())
    if self.training and self.config.router_aux_loss_coef > 0:
        load = F.one_hot(topk_idx, self.config.num_experts).float().mean(0)          # [k, E]
        self.aux_loss = (load * scores.mean(0)).sum() * num_experts * router_aux_loss_coef
  - The aux loss exists only in training mode (and with coef > 0); in eval it is 0.
  - There is no MoEGate class and no seq_aux in this version: the statistics run over all
    N = B*T tokens of the batch at once (older MiniMind files had DeepSeek's MoEGate with
    aux_loss_alpha and a per-sequence seq_aux variant; those are not what is implemented).
  - one_hot over [N, k, E] is averaged over the tokens only, giving [k, E]; multiplied by
    scores.mean(0) [E] (broadcast over the k slots) and summed over slots and experts. So
    aux = E * coef * sum_e (c_e / N) * P_e, c_e = the number of tokens that chose expert e
    in any slot, P_e = the mean router probability of e. It is not divided by k: a perfectly
    balanced top-2 router gives 2 * coef. The slot order of topk(sorted=False) does not matter.
  - The gradient flows through scores only (one_hot is a constant): d aux / d scores[n, e] =
    E * coef * (c_e / N) / N.
  - An expert no token chose gets a zero gradient (not None), through the `0 * sum(...)`
    term, so AdamW still decays it and updates its moments. This file keeps that term.
  - MiniMindModel.forward: aux_loss = sum(layer aux losses, start=0.0);
    MiniMindForCausalLM.forward: loss = F.cross_entropy(logits[..., :-1, :] flattened,
    labels[..., 1:] flattened, ignore_index=-100) (mean over the targets that are not -100).

trainer/train_pretrain.py (commit 00da9595) and trainer/trainer_utils.py:
    for step, (input_ids, labels) in enumerate(loader, start=start_step + 1):
        lr = get_lr(epoch * iters + step, args.epochs * iters, args.learning_rate)
        for param_group in optimizer.param_groups: param_group['lr'] = lr
        res = model(input_ids, labels=labels)
        loss = (res.loss + res.aux_loss) / args.accumulation_steps
        scaler.scale(loss).backward()
        if step % args.accumulation_steps == 0 or step == iters:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
            scaler.step(optimizer); scaler.update()
            optimizer.zero_grad(set_to_none=True)
    def get_lr(current_step, total_steps, lr):
        return lr*(0.1 + 0.45*(1 + math.cos(math.pi * current_step / total_steps)))
    optimizer = optim.AdamW(model.parameters(), lr=args.learning_rate)
  - `step` is the 1-based index of the micro-batch within the epoch; iters = len(loader)
    (micro-batches per epoch); total = epochs * iters, in micro-batches. The lr is set before
    every micro-batch, so an optimizer step uses the lr of its last micro-batch: with
    accumulation a, step j of the first epoch uses get_lr(j * a, total, lr).
  - One parameter group, every parameter (embedding, norms, router, experts, head) with
    PyTorch's defaults betas (0.9, 0.999), eps 1e-8, weight_decay 0.01: no decay exclusions.
    A tied head is one parameter (model.parameters() yields it once).
  - The GradScaler is enabled only for float16 on CUDA; in float32 unscale_ does nothing and
    scaler.step is optimizer.step. A last window shorter than accumulation_steps (step == iters)
    still divides by accumulation_steps.

torch 1.13's clip_grad_norm_ and AdamW (single-tensor path on the CPU), which train() calls,
in float32; each Python scalar is rounded to float32 once; fma = one rounding (the CPU kernels
this machine runs fuse those multiply-adds):
    norm = ||(||g_1||_2, ..., ||g_P||_2)||_2; coef = min(1 / (norm + 1e-6) * clip, 1);
    every g *= coef (also when coef is 1)
    t += 1; bc1 = 1 - b1^t, bc2 = 1 - b2^t (in double)
    p = p * (1 - lr*wd)
    m = fma(g, 1 - b1, m * b1)                      (add_ with alpha)
    v = fma((1 - b2) * g, g, v * b2)                 (addcmul_)
    p = p + ((-lr / bc1) * m) / (sqrt(v) / sqrt(bc2) + eps)     (addcdiv_)
  tests/fixtures/gen_train.py checks that this order gives torch's weights bit for bit.
"""

import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import minimind_model as ref  # noqa: E402
from llama2c import rope_interleaved  # noqa: E402

IGNORE_INDEX = -100
TRAIN_KEYS = {"rope_interleaved": False, "qk_norm": True}   # MiniMind's values


# --------------------------------------------------------------------------------------------
# Config and model
# --------------------------------------------------------------------------------------------

def make_config(**kw):
    """ref.MiniMindConfig with two more fields: rope_interleaved (default False) and qk_norm
    (default True), MiniMind's own behaviour when absent."""
    extra = {k: bool(kw.pop(k, v)) for k, v in TRAIN_KEYS.items()}
    cfg = ref.MiniMindConfig(**kw)
    for k, v in extra.items():
        setattr(cfg, k, v)
    return cfg


def config_from_dict(d):
    d = dict(d)
    if not d.get("inference_rope_scaling", False):
        d.pop("rope_scaling", None)
    return make_config(**d)


def train_keys(cfg):
    """The extra keys whose values differ from MiniMind's (what config.json carries)."""
    return {k: getattr(cfg, k) for k, v in TRAIN_KEYS.items() if getattr(cfg, k) != v}


def build_model(cfg):
    """A MiniMindForCausalLM in training mode; without qk_norm the q_norm / k_norm modules are
    removed, so state_dict() and parameters() have no such entries."""
    model = ref.MiniMindForCausalLM(cfg)
    if not cfg.qk_norm:
        for layer in model.model.layers:
            del layer.self_attn.q_norm
            del layer.self_attn.k_norm
    return model.train()


def param_names(model):
    """Names of the distinct parameters in registration order (a tied head appears once, as
    model.embed_tokens.weight)."""
    return [n for n, _ in model.named_parameters()]


# --------------------------------------------------------------------------------------------
# Forward with loss
# --------------------------------------------------------------------------------------------

def rmsnorm(x, w, eps):
    """w * (x * rsqrt(mean(x^2) + eps)) in x's dtype (MiniMind upcasts to float32, a no-op for
    the float32 model; the float64 copy stays float64)."""
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def attention(attn, x, cos, sin, cfg):
    """x [B, T, hidden]; cos, sin [T, head_dim] (MiniMind's tables: each row cat(c, c)).
    q, k = per-head RMSNorm (if qk_norm), then RoPE: rotate_half (MiniMind) or pairs
    (rope_interleaved, with the first half of the table's columns: cos(t f_i), i < hd/2).
    softmax(q k^T / sqrt(hd) + causal -inf mask) v, GQA by repeat_kv, then o_proj."""
    b, t, _ = x.shape
    hd, eps = attn.head_dim, cfg.rms_norm_eps
    q = attn.q_proj(x).view(b, t, attn.n_heads, hd)
    k = attn.k_proj(x).view(b, t, attn.n_kv, hd)
    v = attn.v_proj(x).view(b, t, attn.n_kv, hd)
    if cfg.qk_norm:
        q, k = rmsnorm(q, attn.q_norm.weight, eps), rmsnorm(k, attn.k_norm.weight, eps)
    if cfg.rope_interleaved:
        c, s = cos[:, :hd // 2], sin[:, :hd // 2]
        q, k = rope_interleaved(q, c, s), rope_interleaved(k, c, s)
    else:
        q, k = ref.apply_rope(q, cos, sin), ref.apply_rope(k, cos, sin)
    q = q.transpose(1, 2)                                           # [B, heads, T, hd]
    k = ref.repeat_kv(k, attn.n_rep).transpose(1, 2)
    v = ref.repeat_kv(v, attn.n_rep).transpose(1, 2)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)              # [B, heads, T, T]
    scores = scores + torch.full((t, t), float("-inf"), dtype=scores.dtype).triu(1)
    weights = F.softmax(scores, dim=-1)
    out = (weights @ v).transpose(1, 2).reshape(b, t, -1)
    return attn.o_proj(out)


def moe(mlp, x, cfg):
    """MiniMind's MOEFeedForward in training mode. x [B, T, hidden] ->
    (y [B, T, hidden], aux_loss [], topk_idx [N, k], scores [N, E])."""
    b, t, d = x.shape
    flat = x.view(-1, d)
    scores = F.softmax(mlp.gate(flat), dim=-1)
    weight, idx = torch.topk(scores, k=cfg.num_experts_per_tok, dim=-1, sorted=False)
    if cfg.norm_topk_prob:
        weight = weight / (weight.sum(dim=-1, keepdim=True) + 1e-20)
    y = torch.zeros_like(flat)
    for e, expert in enumerate(mlp.experts):
        chosen = idx == e
        if chosen.any():
            tokens = chosen.any(dim=-1).nonzero().flatten()
            w = weight[chosen].view(-1, 1)
            y.index_add_(0, tokens, (expert(flat[tokens]) * w).to(y.dtype))
        else:
            # An unused expert gets a zero gradient, not None (MiniMind's own line).
            y[0, 0] += 0 * sum(p.sum() for p in expert.parameters())
    if cfg.router_aux_loss_coef > 0:
        load = F.one_hot(idx, cfg.num_experts).to(scores.dtype).mean(0)     # [k, E]
        aux = (load * scores.mean(0)).sum() * cfg.num_experts * cfg.router_aux_loss_coef
    else:
        aux = scores.new_zeros(())
    return y.view(b, t, d), aux, idx, scores


def route_gap(idx, scores, k):
    """The smallest margin of the routing decision: k-th largest minus (k+1)-th largest router
    probability over all tokens (inf with k = E)."""
    if k >= scores.shape[-1]:
        return float("inf")
    top = torch.topk(scores.detach(), k + 1, dim=-1).values
    return float((top[:, k - 1] - top[:, k]).min())


def forward(model, input_ids, labels=None):
    """input_ids, labels [B, T] (int64). Returns a dict: logits [B, T, V]; with labels
    loss = ce_loss + aux_loss (scalars), ce_loss = cross_entropy(logits[:, :-1], labels[:, 1:],
    ignore_index=-100), aux_loss = the sum of the MoE layers' aux losses (0 for dense);
    aux_layers (per-layer aux), routes (per layer (topk_idx, scores)), min_gap."""
    cfg, m = model.config, model.model
    _, t = input_ids.shape
    eps = cfg.rms_norm_eps
    cos, sin = m.freqs_cos[:t], m.freqs_sin[:t]
    x = m.embed_tokens(input_ids)
    aux = x.new_zeros(())
    aux_layers, routes, gap = [], [], float("inf")
    for layer in m.layers:
        h = attention(layer.self_attn, rmsnorm(x, layer.input_layernorm.weight, eps), cos, sin,
                      cfg)
        x = h + x
        h = rmsnorm(x, layer.post_attention_layernorm.weight, eps)
        if cfg.use_moe:
            y, a, idx, scores = moe(layer.mlp, h, cfg)
            aux = aux + a
            aux_layers.append(a)
            routes.append((idx, scores))
            gap = min(gap, route_gap(idx, scores, cfg.num_experts_per_tok))
        else:
            y = layer.mlp(h)
        x = x + y
    logits = model.lm_head(rmsnorm(x, m.norm.weight, eps))
    out = {"logits": logits, "aux_layers": aux_layers, "routes": routes, "min_gap": gap}
    if labels is not None:
        v = logits.shape[-1]
        ce = F.cross_entropy(logits[:, :-1, :].contiguous().view(-1, v),
                             labels[:, 1:].contiguous().view(-1), ignore_index=IGNORE_INDEX)
        out.update(loss=ce + aux, ce_loss=ce, aux_loss=aux)
    return out


def gradients(model, input_ids, labels):
    """(forward dict, {name: gradient of the total loss}) for one batch, grads zeroed first."""
    model.zero_grad(set_to_none=True)
    out = forward(model, input_ids, labels)
    out["loss"].backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    return out, grads


# --------------------------------------------------------------------------------------------
# MiniMind's training loop
# --------------------------------------------------------------------------------------------

def get_lr(current_step, total_steps, lr):
    """trainer_utils.get_lr: lr * (0.1 + 0.45 * (1 + cos(pi * current_step / total_steps)))."""
    return lr * (0.1 + 0.45 * (1 + math.cos(math.pi * current_step / total_steps)))


def train(model, micro_batches, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, clip=1.0,
          accumulation_steps=8, epochs=1):
    """train_pretrain.py's train_epoch for one epoch (epoch 0) over micro_batches, a list of
    (input_ids, labels); iters = len(micro_batches), schedule total = epochs * iters (epochs
    only sets the schedule's length). Returns a list with one record per optimizer step:
    {"micro": [indices of its micro-batches], "schedule_step": the micro-batch step the lr
    came from, "lr", "losses": the unscaled losses (ce + aux, tensors) of its micro-batches,
    "ce", "aux" (the same split), "grad_norm": clip_grad_norm_'s result (the norm before
    clipping), "routes": per micro-batch the MoE layers' expert ids [N, k] (each row sorted),
    "min_gap": the smallest routing margin}. The model is updated in place."""
    iters = len(micro_batches)
    total = epochs * iters
    epoch = 0
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=betas, eps=eps,
                                  weight_decay=weight_decay)
    new_window = lambda: {"micro": [], "losses": [], "ce": [], "aux": [], "routes": [],  # noqa
                          "min_gap": float("inf")}
    records, window = [], new_window()
    for step, (input_ids, labels) in enumerate(micro_batches, start=1):
        cur_lr = get_lr(epoch * iters + step, total, lr)
        for group in optimizer.param_groups:
            group["lr"] = cur_lr
        out = forward(model, input_ids, labels)
        loss = out["loss"] / accumulation_steps
        loss.backward()
        window["micro"].append(step - 1)
        window["losses"].append(out["loss"].detach().clone())
        window["ce"].append(out["ce_loss"].detach().clone())
        window["aux"].append(out["aux_loss"].detach().clone())
        window["routes"].append([idx.sort(dim=-1).values for idx, _ in out["routes"]])
        window["min_gap"] = min(window["min_gap"], out["min_gap"])
        if step % accumulation_steps == 0 or step == iters:
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            window.update(schedule_step=epoch * iters + step, lr=cur_lr,
                          grad_norm=norm.detach().clone())
            records.append(window)
            window = new_window()
    return records
