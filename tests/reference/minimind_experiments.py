#!/usr/bin/env python3
"""Four interpretability experiments on the reference models, done with PyTorch hooks the way
TransformerLens does them: head ablation, the logit lens, direct logit attribution (DLA) and
activation patching.

The models are tests/reference/minimind_model.py's MiniMindForCausalLM (MiniMind's module
names) and, for llama2.c's checkpoints, Llama2cModule below: tests/reference/llama2c.py's model
laid out as modules with llama2.c's model.py names, computing exactly what Llama2c.forward
computes. Both are wrapped by Hooked, which names the points the hooks attach to:

    resid_pre[l]   the residual stream entering layer l      forward pre-hook on the layer
    z[l]           the heads' outputs, o_proj's input         forward pre-hook on o_proj
                   [.., heads*hd]; head h is [.., h*hd:(h+1)*hd]
    mlp_out[l]     the FFN (or MoE) output added to the stream   forward hook on the FFN
    final          the stream after the last layer            forward hook on the last layer

Neither model has a bias in o_proj (MiniMind's Linear(bias=False), llama2.c's wo), so a head's
share of the attention output is exactly its slice of z through its columns of o_proj.

The experiments, for token ids at positions 0..T-1 (the model's own float32 run):
    ablation    z[l][.., h*hd:(h+1)*hd] = 0 at every position, for each (l, h) of the set
    lens        [n_layers+1, T, vocab]: lm_head(norm(s)) for s = resid_pre[0..L-1], final;
                its last row is the logits
    DLA         for a target token t, with r[p] = sqrt(mean(final[p]^2) + eps) (the run's own
                final-norm RMS) and u = norm.weight * lm_head.weight[t]:
                    dla[l, h, p]  = (z[l][p, h*hd:(h+1)*hd] . Wo[l][:, h*hd:(h+1)*hd]^T) . u / r[p]
                    dla_embed[p]  = resid_pre[0][p] . u / r[p]
                    dla_ffn[l, p] = mlp_out[l][p] . u / r[p]
                computed in float64 from the run's float32 activations; the parts add up to
                logits[p, t] up to float32 rounding of the stream
    patching    metric(run) = logit(answer) - logit(wrong) at the last position (float32).
                Clean and corrupt prompts have the same length. Each patch is its own full
                forward of the corrupt prompt with one point taken from the clean run:
                    head[l, h]  z[l]'s slice of head h, at every position
                    resid[l, p] resid_pre[l] at position p
                plus the unpatched metrics of both runs.

Run directly it prints one experiment's tensors:

    /usr/bin/python3 tests/reference/minimind_experiments.py MODEL --ids 1,17,42 \
        [--ablate 0.1,1.3] [--target ID] [--corrupt 1,17,43 --answer ID --wrong ID]

MODEL is a MiniMind folder (config.json + model file) or a llama2.c .bin file.
"""

import argparse
import contextlib
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import llama2c  # noqa: E402
import minimind_model  # noqa: E402


# --------------------------------------------------------------------------------------------
# llama2.c's model as modules
# --------------------------------------------------------------------------------------------

class RMSNormL2c(nn.Module):
    """llama2c.rmsnorm with its weight as a module's parameter."""

    def __init__(self, weight, eps):
        super().__init__()
        self.weight, self.eps = nn.Parameter(weight, requires_grad=False), eps

    def forward(self, x):
        return llama2c.rmsnorm(x, self.weight, self.eps)


def linear(weight):
    """An nn.Linear without bias holding weight [out, in]: its forward is F.linear(x, weight)."""
    m = nn.Linear(weight.shape[1], weight.shape[0], bias=False)
    m.weight = nn.Parameter(weight, requires_grad=False)
    return m


class AttentionL2c(nn.Module):
    """Q, K, V, RoPE and the softmax are the base model's own (_qkv, _attend); wo is a module so
    that a pre-hook sees the heads' outputs [T, heads*hd]."""

    def __init__(self, base, layer):
        super().__init__()
        self.base, self.layer = base, layer
        self.wo = linear(base.w["wo"][layer])

    def forward(self, h):
        q, k, v = self.base._qkv(self.layer, h, 0)
        o, _ = self.base._attend(q, k, v, 0)
        return self.wo(o)


class FeedForwardL2c(nn.Module):
    """w2(silu(w1(h)) * w3(h))."""

    def __init__(self, w, layer):
        super().__init__()
        self.w1, self.w2, self.w3 = (linear(w[n][layer]) for n in ("w1", "w2", "w3"))

    def forward(self, h):
        return self.w2(F.silu(self.w1(h)) * self.w3(h))


class BlockL2c(nn.Module):
    def __init__(self, base, layer):
        super().__init__()
        w = base.w
        self.attention = AttentionL2c(base, layer)
        self.feed_forward = FeedForwardL2c(w, layer)
        self.attention_norm = RMSNormL2c(w["rms_att"][layer], llama2c.RMS_EPS)
        self.ffn_norm = RMSNormL2c(w["rms_ffn"][layer], llama2c.RMS_EPS)

    def forward(self, x):
        h = x + self.attention(self.attention_norm(x))
        return h + self.feed_forward(self.ffn_norm(h))


class Llama2cModule(nn.Module):
    """llama2c.Llama2c's uncached forward, with llama2.c's model.py module names:
    tok_embeddings, layers.N.{attention.wo, feed_forward.{w1,w2,w3}, attention_norm, ffn_norm},
    norm, output. The same operations in the same order on the same tensors, so the logits are
    Llama2c.forward's bit for bit (tests/fixtures/gen_experiments.py checks it)."""

    def __init__(self, path):
        super().__init__()
        self.base = base = llama2c.Llama2c(path)
        self.cfg = base.cfg
        self.tok_embeddings = nn.Embedding.from_pretrained(base.w["token_embedding"])
        self.layers = nn.ModuleList([BlockL2c(base, l) for l in range(base.cfg.n_layers)])
        self.norm = RMSNormL2c(base.w["rms_final"], llama2c.RMS_EPS)
        self.output = linear(base.classifier)

    @torch.no_grad()
    def forward(self, ids):
        """ids: list of ints -> logits [T, vocab]."""
        x = self.tok_embeddings(torch.tensor(ids, dtype=torch.long))        # [T, dim]
        for layer in self.layers:
            x = layer(x)
        return self.output(self.norm(x))


# --------------------------------------------------------------------------------------------
# The hook points of either model
# --------------------------------------------------------------------------------------------

class Hooked:
    """One model and the modules the experiments hook. Streams keep the model's own shape:
    [1, T, hidden] for MiniMind, [T, hidden] for llama2.c; positions are always dim -2.

    route_gaps: for a MoE model, every forward appends each MoE layer's smallest gap between the
    k-th and (k+1)-th router probability over the tokens (a near-tie flips under rounding)."""

    def __init__(self, path):
        if os.path.isdir(path):
            self.kind = "minimind"
            self.model = m = minimind_model.load_model(path)
            cfg = m.config
            self.n_layers, self.n_heads = cfg.num_hidden_layers, cfg.num_attention_heads
            self.head_dim, self.vocab = cfg.head_dim, cfg.vocab_size
            self.layers = list(m.model.layers)
            self.o_proj = [b.self_attn.o_proj for b in self.layers]
            self.mlp = [b.mlp for b in self.layers]
            self.norm, self.unembed = m.model.norm, m.lm_head
            self.eps = cfg.rms_norm_eps
            self.top_k = cfg.num_experts_per_tok if cfg.use_moe else None
        else:
            self.kind = "llama2c"
            self.model = m = Llama2cModule(path)
            self.n_layers, self.n_heads = m.cfg.n_layers, m.cfg.n_heads
            self.head_dim, self.vocab = m.cfg.head_dim, m.cfg.vocab_size
            self.layers = list(m.layers)
            self.o_proj = [b.attention.wo for b in self.layers]
            self.mlp = [b.feed_forward for b in self.layers]
            self.norm, self.unembed = m.norm, m.output
            self.eps = llama2c.RMS_EPS
            self.top_k = None
        for name, w in (("o_proj", self.o_proj[0]), ("lm_head", self.unembed)):
            assert w.bias is None, "%s has a bias" % name
        self.route_gaps = []
        if self.top_k is not None:
            for mlp in self.mlp:
                mlp.register_forward_hook(self._watch_route)

    def _watch_route(self, module, inputs, output):
        probs = output[1][2]                                           # [N, experts]
        top = torch.sort(probs, dim=-1, descending=True).values
        k = self.top_k
        self.route_gaps.append(float((top[:, k - 1] - top[:, k]).min()))

    def forward(self, ids):
        """One uncached pass with whatever hooks are registered -> logits [T, vocab]."""
        if self.kind == "minimind":
            return self.model(torch.tensor([list(ids)], dtype=torch.long))[0][0]
        return self.model(list(ids))

    def head_slice(self, h):
        return slice(h * self.head_dim, (h + 1) * self.head_dim)

    def lens_row(self, stream):
        """lm_head(norm(stream)) -> [T, vocab], the same modules on the same shape as the run."""
        with torch.no_grad():
            out = self.unembed(self.norm(stream))
        return out[0] if self.kind == "minimind" else out


def stream_of(output):
    """A layer's output: MiniMind's block returns (x, present, weights, route)."""
    return output[0] if isinstance(output, tuple) else output


@contextlib.contextmanager
def hooks(pairs):
    """pairs: (register function, hook). Removes every hook on exit."""
    handles = [register(fn) for register, fn in pairs]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def ablation_hooks(m, ablate):
    """Pre-hooks on every layer's o_proj that zero the listed heads' slices at every position
    (a layer with none listed passes a copy through unchanged: ablating no head is the same
    path)."""
    by_layer = [[] for _ in range(m.n_layers)]
    for layer, head in ablate:
        if not (0 <= layer < m.n_layers and 0 <= head < m.n_heads):
            raise ValueError("head %d.%d outside %d layers x %d heads"
                             % (layer, head, m.n_layers, m.n_heads))
        by_layer[layer].append(head)
    pairs = []
    for layer, heads in enumerate(by_layer):
        def zero(module, inputs, heads=tuple(heads)):
            z = inputs[0].clone()
            for h in heads:
                z[..., m.head_slice(h)] = 0
            return (z,) + tuple(inputs[1:])
        pairs.append((m.o_proj[layer].register_forward_pre_hook, zero))
    return pairs


def capture_hooks(m, cache):
    """Hooks that store resid_pre [L], z [L], mlp_out [L] and final in cache (no changes)."""
    cache.update(resid_pre=[None] * m.n_layers, z=[None] * m.n_layers,
                 mlp_out=[None] * m.n_layers, final=None)
    pairs = []
    for l in range(m.n_layers):
        def pre(module, inputs, l=l):
            cache["resid_pre"][l] = inputs[0].clone()

        def z(module, inputs, l=l):
            cache["z"][l] = inputs[0].clone()

        def mlp(module, inputs, output, l=l):
            cache["mlp_out"][l] = stream_of(output).clone()
        pairs += [(m.layers[l].register_forward_pre_hook, pre),
                  (m.o_proj[l].register_forward_pre_hook, z),
                  (m.mlp[l].register_forward_hook, mlp)]

    def final(module, inputs, output):
        cache["final"] = stream_of(output).clone()
    pairs.append((m.layers[-1].register_forward_hook, final))
    return pairs


# --------------------------------------------------------------------------------------------
# The experiments
# --------------------------------------------------------------------------------------------

def run(m, ids, ablate=()):
    """The run with the heads of ablate off, its activations captured.
    Returns {"logits" [T, vocab], "resid_pre", "z", "mlp_out", "final"}. The capture hooks are
    registered after the ablation ones, so z holds the ablated heads' zeros."""
    cache = {}
    with hooks(ablation_hooks(m, ablate) + capture_hooks(m, cache)):
        cache["logits"] = m.forward(ids)
    return cache


def logit_lens(m, cache):
    """[n_layers+1, T, vocab]: the final norm and lm_head on the stream before layer 0 and after
    each layer (resid_pre[l+1] is the output of layer l)."""
    streams = cache["resid_pre"] + [cache["final"]]
    return torch.stack([m.lens_row(s) for s in streams])


@torch.no_grad()
def direct_logit_attribution(m, cache, target):
    """(dla [L, heads, T], dla_embed [T], dla_ffn [L, T]) in float64, see the module's doc."""
    if not 0 <= target < m.vocab:
        raise ValueError("target %d outside the vocabulary of %d" % (target, m.vocab))
    hidden = cache["final"].shape[-1]
    final = cache["final"].double().reshape(-1, hidden)                # [T, hidden]
    inv_rms = 1.0 / torch.sqrt(final.pow(2).mean(-1) + m.eps)           # [T]
    u = m.norm.weight.double() * m.unembed.weight[target].double()       # [hidden]
    dla = []
    for l in range(m.n_layers):
        z = cache["z"][l].double().reshape(final.shape[0], -1)          # [T, heads*hd]
        wo = m.o_proj[l].weight.double()                                # [hidden, heads*hd]
        dla.append(torch.stack([(z[:, m.head_slice(h)] @ wo[:, m.head_slice(h)].T) @ u * inv_rms
                                for h in range(m.n_heads)]))
    embed = cache["resid_pre"][0].double().reshape(-1, hidden) @ u * inv_rms
    ffn = torch.stack([cache["mlp_out"][l].double().reshape(-1, hidden) @ u * inv_rms
                       for l in range(m.n_layers)])
    return torch.stack(dla), embed, ffn


def metric(logits, answer, wrong):
    """logit(answer) - logit(wrong) at the last position, float32."""
    return logits[-1, answer] - logits[-1, wrong]


def patch_head_hooks(m, clean, layer, head):
    def patch(module, inputs):
        z = inputs[0].clone()
        z[..., m.head_slice(head)] = clean["z"][layer][..., m.head_slice(head)]
        return (z,) + tuple(inputs[1:])
    return [(m.o_proj[layer].register_forward_pre_hook, patch)]


def patch_resid_hooks(m, clean, layer, positions):
    def patch(module, inputs):
        x = inputs[0].clone()
        x[..., positions, :] = clean["resid_pre"][layer][..., positions, :]
        return (x,) + tuple(inputs[1:])
    return [(m.layers[layer].register_forward_pre_hook, patch)]


def patched_metric(m, corrupt_ids, pairs, answer, wrong):
    with hooks(pairs):
        return metric(m.forward(corrupt_ids), answer, wrong)


def activation_patching(m, clean_ids, corrupt_ids, answer, wrong):
    """{"head" [L, heads], "resid" [L, T], "clean" [1], "corrupt" [1]} float32, each patched
    value from its own full forward of the corrupt prompt."""
    if len(clean_ids) != len(corrupt_ids):
        raise ValueError("clean has %d tokens, corrupt %d" % (len(clean_ids), len(corrupt_ids)))
    if answer == wrong:
        raise ValueError("answer and wrong are both %d" % answer)
    clean = run(m, clean_ids)
    corrupt_logits = m.forward(corrupt_ids)
    head = torch.stack([torch.stack([
        patched_metric(m, corrupt_ids, patch_head_hooks(m, clean, l, h), answer, wrong)
        for h in range(m.n_heads)]) for l in range(m.n_layers)])
    resid = torch.stack([torch.stack([
        patched_metric(m, corrupt_ids, patch_resid_hooks(m, clean, l, [p]), answer, wrong)
        for p in range(len(clean_ids))]) for l in range(m.n_layers)])
    return {"head": head, "resid": resid,
            "clean": metric(clean["logits"], answer, wrong).reshape(1),
            "corrupt": metric(corrupt_logits, answer, wrong).reshape(1)}


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def parse_ids(text):
    return [int(s) for s in text.split(",") if s.strip()]


def main():
    ap = argparse.ArgumentParser(description="ablation, logit lens, DLA and patching in PyTorch")
    ap.add_argument("model", help="a MiniMind folder or a llama2.c .bin file")
    ap.add_argument("--ids", required=True, help="token ids, comma-separated")
    ap.add_argument("--ablate", default="", help="heads L.H, comma-separated (for the lens "
                    "and the attribution)")
    ap.add_argument("--target", type=int, help="token for the attribution (default: the argmax "
                    "at the last position)")
    ap.add_argument("--corrupt", help="corrupt ids for patching (--ids is the clean prompt)")
    ap.add_argument("--answer", type=int)
    ap.add_argument("--wrong", type=int)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_printoptions(precision=4, sci_mode=False, linewidth=120)
    m = Hooked(args.model)
    ids = parse_ids(args.ids)
    ablate = [tuple(int(v) for v in s.split(".")) for s in args.ablate.split(",") if s.strip()]
    cache = run(m, ids, ablate)
    lens = logit_lens(m, cache)
    print("logit lens, top token per layer (rows) and position (columns):")
    print(lens.argmax(-1))
    target = args.target if args.target is not None else int(cache["logits"][-1].argmax())
    dla, embed, ffn = direct_logit_attribution(m, cache, target)
    print("DLA of token %d: heads [layers, heads, positions]" % target)
    print(dla.float())
    print("embedding", embed.float())
    print("FFN", ffn.float())
    if args.corrupt:
        r = activation_patching(m, ids, parse_ids(args.corrupt), args.answer, args.wrong)
        print("metric: clean %.6f, corrupt %.6f" % (r["clean"], r["corrupt"]))
        print("patched heads [layers, heads]:")
        print(r["head"])
        print("patched residual stream [layers, positions]:")
        print(r["resid"])


if __name__ == "__main__":
    main()
