#!/usr/bin/env python3
"""An independent PyTorch reference of the llama2.c model family and its tokenizer.

Written from models/stories260K/SOURCE.md (the two file formats) and the algorithm of
karpathy/llama2.c (run.c: checkpoint reading, encode, decode, greedy generation; model.py: the
float32 forward pass). It reads the legacy checkpoint (`.bin`) and the tokenizer (`tok512.bin`)
itself, computes RoPE itself, and shares no code with AttnLab's C core. The fixture generator
tests/fixtures/gen_llama2c.py imports it; run directly it behaves like `run <model> -t 0`:

    /usr/bin/python3 tests/reference/llama2c.py [-n STEPS] [-i PROMPT] [-m MODEL] [-z TOKENIZER]

The maths, per position t of a sequence of token ids (all float32):
    x = embedding[id]                                          [dim]
    per layer l:
        h = rmsnorm(x, rms_att[l])      rmsnorm(x, w) = x * rsqrt(mean(x^2) + 1e-5) * w
        q, k, v = h Wq^T, h Wk^T, h Wv^T                       [heads, hd], [kv, hd], [kv, hd]
        q, k: each pair (x[2i], x[2i+1]) of a head rotated by the angle t * theta_i,
              theta_i = 10000^(-2i/hd)                         (interleaved RoPE)
        a[h, t, s] = softmax_s(q[h, t] . k[h // (heads/kv), s] / sqrt(hd)), s <= t (causal)
        x = x + (sum_s a[h, t, s] v[h // (heads/kv), s]) Wo^T
        h = rmsnorm(x, rms_ffn[l])
        x = x + W2 (silu(W1 h) * (W3 h))
    logits = rmsnorm(x, rms_final) E^T    (E = embedding when tied, else wcls)
"""

import argparse
import math
import os
import re
import struct
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "models", "stories260K", "stories260K.bin")
DEFAULT_TOKENIZER = os.path.join(ROOT, "models", "stories260K", "tok512.bin")

BOS = 1
EOS = 2
RMS_EPS = 1e-5
ROPE_BASE = 10000.0
HEADER_FIELDS = ("dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size",
                 "seq_len")


class FormatError(ValueError):
    """A checkpoint or tokenizer file that does not match its format."""


# --------------------------------------------------------------------------------------------
# Checkpoint
# --------------------------------------------------------------------------------------------

class Config:
    """The legacy header: 7 little-endian int32. A negative vocab_size means the classifier is
    not tied to the embedding and its own [vocab, dim] matrix ends the file."""

    def __init__(self, dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len):
        self.shared_classifier = vocab_size > 0
        self.dim, self.hidden_dim, self.n_layers = dim, hidden_dim, n_layers
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.vocab_size, self.seq_len = abs(vocab_size), seq_len
        for name in HEADER_FIELDS:
            if getattr(self, name) <= 0:
                raise FormatError("header: %s = %d, must be > 0" % (name, getattr(self, name)))
        if dim % n_heads:
            raise FormatError("header: dim %d not a multiple of n_heads %d" % (dim, n_heads))
        if n_heads % n_kv_heads:
            raise FormatError("header: n_heads %d not a multiple of n_kv_heads %d"
                              % (n_heads, n_kv_heads))
        self.head_dim = dim // n_heads
        if self.head_dim % 2:
            raise FormatError("header: head_dim %d is odd, RoPE needs pairs" % self.head_dim)
        self.kv_dim = n_kv_heads * self.head_dim

    def layout(self):
        """(name, shape) of every float32 array in file order (freq_cis included)."""
        L, d, hd, kv, hid = self.n_layers, self.dim, self.head_dim, self.kv_dim, self.hidden_dim
        arrays = [
            ("token_embedding", (self.vocab_size, d)),
            ("rms_att", (L, d)),
            ("wq", (L, self.n_heads * hd, d)),
            ("wk", (L, kv, d)),
            ("wv", (L, kv, d)),
            ("wo", (L, d, self.n_heads * hd)),
            ("rms_ffn", (L, d)),
            ("w1", (L, hid, d)),
            ("w2", (L, d, hid)),
            ("w3", (L, hid, d)),
            ("rms_final", (d,)),
            ("freq_cis_real", (self.seq_len, hd // 2)),
            ("freq_cis_imag", (self.seq_len, hd // 2)),
        ]
        if not self.shared_classifier:
            arrays.append(("wcls", (self.vocab_size, d)))
        return arrays

    def __repr__(self):
        return "Config(%s, shared_classifier=%s)" % (
            ", ".join("%s=%d" % (n, getattr(self, n)) for n in HEADER_FIELDS),
            self.shared_classifier)


def read_checkpoint(path):
    """Returns (Config, {name: float32 tensor}). The file size must equal the header's."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 28:
        raise FormatError("%s: %d bytes, shorter than the 28-byte header" % (path, len(data)))
    cfg = Config(*struct.unpack_from("<7i", data, 0))
    layout = cfg.layout()
    n_floats = sum(math.prod(shape) for _, shape in layout)
    want = 28 + 4 * n_floats
    if len(data) != want:
        raise FormatError("%s: %d bytes, the header %r says %d" % (path, len(data), cfg, want))
    flat = torch.frombuffer(bytearray(data[28:]), dtype=torch.float32)
    if sys.byteorder != "little":
        flat = flat.byteswap()   # pragma: no cover - the file is little-endian
    weights, off = {}, 0
    for name, shape in layout:
        n = math.prod(shape)
        weights[name] = flat[off:off + n].reshape(shape).clone()
        off += n
    assert off == n_floats
    return cfg, weights


# --------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------

def rope_tables(head_dim, seq_len, base=ROPE_BASE):
    """cos, sin [seq_len, head_dim/2] of the angles pos * theta_i, theta_i = base^(-2i/hd),
    computed in float32 as llama2.c's model.py does (the file's freq_cis arrays are ignored)."""
    theta = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), theta)
    return torch.cos(angles), torch.sin(angles)


def rope_interleaved(x, cos, sin):
    """x [seq, heads, hd]; cos, sin [seq, hd/2]. Rotates each pair (x[2i], x[2i+1]):
    (a, b) -> (a cos - b sin, a sin + b cos)."""
    a, b = x.reshape(x.shape[:-1] + (-1, 2)).unbind(-1)
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.stack([a * c - b * s, a * s + b * c], dim=-1).flatten(-2)


def rmsnorm(x, w, eps=RMS_EPS):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


class Llama2c:
    """The model in float32. forward() runs a whole sequence in one uncached pass (model.py);
    step() runs one position against a KV cache (run.c's forward)."""

    def __init__(self, path=DEFAULT_MODEL):
        self.cfg, self.w = read_checkpoint(path)
        c = self.cfg
        self.cos, self.sin = rope_tables(c.head_dim, c.seq_len)
        self.classifier = self.w["token_embedding"] if c.shared_classifier else self.w["wcls"]
        self.n_rep = c.n_heads // c.n_kv_heads
        self.reset()

    def reset(self):
        c = self.cfg
        # [n_layers, seq_len, n_kv_heads, head_dim], after RoPE for K
        self.k_cache = torch.zeros(c.n_layers, c.seq_len, c.n_kv_heads, c.head_dim)
        self.v_cache = torch.zeros(c.n_layers, c.seq_len, c.n_kv_heads, c.head_dim)

    def _qkv(self, l, h, pos0):
        """h [T, dim] at positions pos0..pos0+T-1 -> q [T, heads, hd], k, v [T, kv, hd]."""
        c, w = self.cfg, self.w
        T = h.shape[0]
        q = F.linear(h, w["wq"][l]).view(T, c.n_heads, c.head_dim)
        k = F.linear(h, w["wk"][l]).view(T, c.n_kv_heads, c.head_dim)
        v = F.linear(h, w["wv"][l]).view(T, c.n_kv_heads, c.head_dim)
        cos, sin = self.cos[pos0:pos0 + T], self.sin[pos0:pos0 + T]
        return rope_interleaved(q, cos, sin), rope_interleaved(k, cos, sin), v

    def _attend(self, q, k, v, pos0):
        """q [T, heads, hd] at positions pos0.. ; k, v [S, kv, hd] at positions 0..S-1.
        Returns (out [T, heads*hd], weights [heads, T, S]); masked weights are exactly 0."""
        c = self.cfg
        T, S = q.shape[0], k.shape[0]
        # GQA: query head h reads KV head h // n_rep (repeat_kv)
        kk = k.repeat_interleave(self.n_rep, dim=1).transpose(0, 1)     # [heads, S, hd]
        vv = v.repeat_interleave(self.n_rep, dim=1).transpose(0, 1)     # [heads, S, hd]
        scores = torch.matmul(q.transpose(0, 1), kk.transpose(1, 2)) / math.sqrt(c.head_dim)
        qpos = torch.arange(pos0, pos0 + T)[:, None]
        masked = torch.arange(S)[None, :] > qpos                        # [T, S]
        scores = scores.masked_fill(masked, float("-inf"))
        a = F.softmax(scores.float(), dim=-1)
        out = torch.matmul(a, vv).transpose(0, 1).reshape(T, c.n_heads * c.head_dim)
        return out, a

    def _ffn(self, l, x):
        w = self.w
        h = rmsnorm(x, w["rms_ffn"][l])
        return x + F.linear(F.silu(F.linear(h, w["w1"][l])) * F.linear(h, w["w3"][l]),
                            w["w2"][l])

    @torch.no_grad()
    def forward(self, ids, resid=None):
        """One uncached pass over ids (positions 0..T-1). Returns (logits [T, vocab],
        [attention weights [heads, T, T] per layer]). If resid is a list, the residual stream
        after each layer ([T, dim]) is appended to it."""
        c, w = self.cfg, self.w
        if not 0 < len(ids) <= c.seq_len:
            raise ValueError("sequence length %d not in 1..%d" % (len(ids), c.seq_len))
        x = w["token_embedding"][torch.tensor(ids, dtype=torch.long)]   # [T, dim]
        attn = []
        for l in range(c.n_layers):
            q, k, v = self._qkv(l, rmsnorm(x, w["rms_att"][l]), 0)
            o, a = self._attend(q, k, v, 0)
            attn.append(a)
            x = self._ffn(l, x + F.linear(o, w["wo"][l]))
            if resid is not None:
                resid.append(x)
        return F.linear(rmsnorm(x, w["rms_final"]), self.classifier), attn

    @torch.no_grad()
    def step(self, token, pos):
        """run.c's forward: one token at position pos, K/V appended to the cache.
        Returns logits [vocab]."""
        c, w = self.cfg, self.w
        if not 0 <= pos < c.seq_len:
            raise ValueError("position %d not in 0..%d" % (pos, c.seq_len - 1))
        x = w["token_embedding"][token][None, :]                        # [1, dim]
        for l in range(c.n_layers):
            q, k, v = self._qkv(l, rmsnorm(x, w["rms_att"][l]), pos)
            self.k_cache[l, pos] = k[0]
            self.v_cache[l, pos] = v[0]
            o, _ = self._attend(q, self.k_cache[l, :pos + 1], self.v_cache[l, :pos + 1], pos)
            x = self._ffn(l, x + F.linear(o, w["wo"][l]))
        return F.linear(rmsnorm(x, w["rms_final"]), self.classifier)[0]


def argmax_first(logits):
    """run.c's sample_argmax: the first index of the largest value (strict > scan)."""
    values = logits.tolist()
    best = 0
    for i in range(1, len(values)):
        if values[i] > values[best]:
            best = i
    return best


# --------------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------------

BYTE_PIECE = re.compile(rb"<0x([0-9A-Fa-f]{1,2})")   # what sscanf("<0x%02hhX>") accepts


class Tokenizer:
    """llama2.c's tokenizer.bin: int32 max_token_length, then per token float32 score, int32
    byte length, the bytes. Pieces are bytes; ids 3..258 are the byte pieces <0x00>..<0xFF>."""

    def __init__(self, path=DEFAULT_TOKENIZER, vocab_size=512):
        with open(path, "rb") as f:
            data = f.read()
        if len(data) < 4:
            raise FormatError("%s: no max_token_length" % path)
        (self.max_token_length,) = struct.unpack_from("<i", data, 0)
        off = 4
        self.pieces, self.scores = [], []
        for i in range(vocab_size):
            if off + 8 > len(data):
                raise FormatError("%s: token %d: header past the end of the file" % (path, i))
            score, n = struct.unpack_from("<fi", data, off)
            off += 8
            if n < 0 or n > self.max_token_length or off + n > len(data):
                raise FormatError("%s: token %d: length %d (max %d, %d bytes left)"
                                  % (path, i, n, self.max_token_length, len(data) - off))
            self.pieces.append(data[off:off + n])
            self.scores.append(score)
            off += n
        if off != len(data):
            raise FormatError("%s: %d bytes after the last token" % (path, len(data) - off))
        self.lookup = {p: i for i, p in enumerate(self.pieces)}
        if len(self.lookup) != vocab_size:
            raise FormatError("%s: duplicate pieces (run.c's bsearch would be ambiguous)" % path)
        for b in range(256):
            if self.pieces[b + 3] != b"<0x%02X>" % b:
                raise FormatError("%s: id %d is %r, not <0x%02X>" % (path, b + 3,
                                                                     self.pieces[b + 3], b))
        if b" " not in self.lookup:
            raise FormatError("%s: no ' ' piece for the dummy prefix" % path)

    def encode(self, text, bos=True, eos=False):
        """run.c's encode: ids of text (str or UTF-8 bytes)."""
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        if b"\0" in data:
            raise ValueError("text contains a NUL byte; run.c's C string would end there")
        ids = [BOS] if bos else []
        if data:
            ids.append(self.lookup[b" "])          # SentencePiece's add_dummy_prefix
        # One token per UTF-8 character: a lead or ASCII byte starts a character, continuation
        # bytes (10xxxxxx) extend it up to 4 bytes. A character not in the vocabulary becomes
        # one byte token per byte (id = byte + 3).
        i = 0
        while i < len(data):
            j = i + 1
            while j < len(data) and (data[j] & 0xC0) == 0x80 and j - i < 4:
                j += 1
            char = data[i:j]
            if char in self.lookup:
                ids.append(self.lookup[char])
            else:
                ids.extend(b + 3 for b in char)
            i = j
        # Merge the adjacent pair whose concatenation is a piece with the highest score; on a
        # tie the leftmost pair wins (strict >). Repeat until no pair is a piece.
        while True:
            best_score, best_id, best_idx = -1e10, -1, -1
            for k in range(len(ids) - 1):
                merged = self.lookup.get(self.pieces[ids[k]] + self.pieces[ids[k + 1]])
                if merged is not None and self.scores[merged] > best_score:
                    best_score, best_id, best_idx = self.scores[merged], merged, k
            if best_idx < 0:
                break
            ids[best_idx:best_idx + 2] = [best_id]
        if eos:
            ids.append(EOS)
        return ids

    def decode_piece(self, prev, token):
        """run.c's decode: the bytes token prints after prev. After BOS a leading space is
        dropped; a <0xNN> piece is the byte NN (0x00 is an empty C string)."""
        piece = self.pieces[token]
        if prev == BOS and piece[:1] == b" ":
            piece = piece[1:]
        m = BYTE_PIECE.match(piece)
        if m:
            byte = int(m.group(1), 16)
            piece = bytes([byte]) if byte else b""
        return piece

    def decode(self, ids, prev=None):
        """The bytes of ids, each decoded after its predecessor (the first after prev)."""
        out = []
        for t in ids:
            out.append(self.decode_piece(prev, t))
            prev = t
        return b"".join(out)

    @staticmethod
    def safe_piece(piece):
        """run.c's safe_printf: a one-byte piece that is neither printable nor whitespace (in
        the C locale) is not printed."""
        if len(piece) == 1 and not (0x20 <= piece[0] <= 0x7E or piece[0] in b"\t\n\v\f\r"):
            return b""
        return piece


# --------------------------------------------------------------------------------------------
# Greedy generation (run.c, temperature 0)
# --------------------------------------------------------------------------------------------

def generate(model, tok, prompt, steps):
    """run.c's generate with temperature 0. Feeds BOS + the prompt's ids one position at a time
    (KV cache); from the last prompt position on, the next token is the argmax of the logits.
    Stops when pos reaches steps, or before emitting a BOS. Returns a dict:
    prompt_ids, ids (the generated ids; a final BOS is not included), stop ("steps" or "bos"),
    gaps (top1 - top2 logit for each generated id), stdout (the bytes run.c prints)."""
    c = model.cfg
    steps = c.seq_len if steps <= 0 or steps > c.seq_len else steps
    prompt_ids = tok.encode(prompt, bos=True)
    model.reset()
    token, pos = prompt_ids[0], 0
    ids, gaps, stdout, stop = [], [], [], "steps"
    while pos < steps:
        logits = model.step(token, pos)
        if pos < len(prompt_ids) - 1:
            nxt = prompt_ids[pos + 1]
        else:
            nxt = argmax_first(logits)
            top2 = torch.topk(logits, 2).values.tolist()
            gaps.append(top2[0] - top2[1])
        pos += 1
        if nxt == BOS:
            stop = "bos"
            break
        if pos >= len(prompt_ids):
            ids.append(nxt)
        stdout.append(tok.safe_piece(tok.decode_piece(token, nxt)))
        token = nxt
    stdout.append(b"\n")
    return {"prompt_ids": prompt_ids, "ids": ids, "stop": stop, "gaps": gaps,
            "stdout": b"".join(stdout)}


def main():
    ap = argparse.ArgumentParser(description="llama2.c's run with -t 0, in PyTorch")
    ap.add_argument("-m", "--model", default=DEFAULT_MODEL)
    ap.add_argument("-z", "--tokenizer", default=DEFAULT_TOKENIZER)
    ap.add_argument("-n", "--steps", type=int, default=256)
    ap.add_argument("-i", "--prompt", default="")
    args = ap.parse_args()
    model = Llama2c(args.model)
    tok = Tokenizer(args.tokenizer, model.cfg.vocab_size)
    r = generate(model, tok, args.prompt, args.steps)
    sys.stdout.buffer.write(r["stdout"])


if __name__ == "__main__":
    main()
