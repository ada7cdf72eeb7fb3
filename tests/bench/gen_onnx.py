"""The ONNX graphs the bench runs under onnxruntime-web (tests/bench/peers.mjs), with the
weights and inputs the peers and AttnLab share:

  <out>/<size>/layer.onnx            the tutorial's SimpleAttention (03-attention-demo.py) as
                                     exported by torch.onnx.export: inputs x [1, seq, hidden],
                                     cos, sin [seq, head_dim]; output y [1, seq, hidden]; seq
                                     is a dynamic axis
  <out>/<size>/layer_add.onnx        the same layer with its one in-place line
                                     `scores[:, :, :, -seq_len:] += mask` written
                                     `scores = scores + mask` (the same numbers without a cache,
                                     where the slice is every key): the exporter turns the
                                     in-place slice into ScatterND over index tensors built by
                                     Concat and Expand, and this graph has a plain Add instead
  <out>/<size>/weights.safetensors   its state_dict (q_proj, k_proj, v_proj, o_proj, q_norm,
                                     k_norm), drawn as `attnlab bench` draws them:
                                     torch.manual_seed(seed), then the layer's init
  <out>/<size>/input_<seq>.safetensors  x = randn(1, seq, hidden) drawn right after that init
                                     (the bench's input), and the RoPE tables of
                                     precompute_freqs_cis(head_dim, seq, rope_base)
  <out>/stories260K/step.onnx        one decode step of stories260K (llama2.c's model, as
                                     tests/reference/llama2c.py computes it): inputs token [1],
                                     pos [1] (int64), k_cache, v_cache [n_layers, pos, n_kv_heads,
                                     head_dim]; outputs logits [vocab] and the caches with this
                                     position appended (pos + 1 rows)
  <out>/stories260K/meta.json        the shapes the caller needs to start from empty caches

    /usr/bin/python3 tests/bench/gen_onnx.py OUT_DIR '{"layers": [{"name": "seeds", "hidden": 16,
        "heads": 4, "kv_heads": 2, "head_dim": 8, "rope_base": 10000, "seqs": [6, 128]}],
        "stories": "models/stories260K/stories260K.bin", "seed": 0}'
"""
import json
import os
import sys
import warnings

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ left in the source folders it imports from
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
from safetensors_io import write_safetensors  # noqa: E402
from llama2c import Llama2c, rmsnorm, rope_interleaved  # noqa: E402

SRC = open(os.path.join(HERE, "..", "reference", "03-attention-demo.py"), encoding="utf-8").read()
SRC = SRC[:SRC.index("\ntorch.manual_seed(42)")]
IN_PLACE_MASK = "scores[:, :, :, -seq_len:] += mask"
assert SRC.count(IN_PLACE_MASK) == 1, "03-attention-demo.py's mask line has changed"
ns, ns_add = {}, {}
exec(SRC, ns)
exec(SRC.replace(IN_PLACE_MASK, "scores = scores + mask"), ns_add)
SimpleAttention, precompute = ns["SimpleAttention"], ns["precompute_freqs_cis"]
OPSET = 17


class LayerOutput(torch.nn.Module):
    """SimpleAttention's forward without the cache: its output alone (export wants tensors)."""

    def __init__(self, attn):
        super().__init__()
        self.attn = attn

    def forward(self, x, cos, sin):
        return self.attn(x, cos, sin)[0]


def export(module, args, path, inputs, outputs, dynamic_axes):
    with warnings.catch_warnings():
        # The tracer warns that `if seq_len > 1` (the causal mask) is fixed at trace time: it is
        # traced with seq > 1, which every prefill the bench runs has.
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, path, input_names=inputs, output_names=outputs,
                          dynamic_axes=dynamic_axes, opset_version=OPSET)


def layer_files(out, c, seed):
    """The layer's graph, weights and inputs for each of c["seqs"]."""
    folder = os.path.join(out, c["name"])
    os.makedirs(folder, exist_ok=True)
    for seq in c["seqs"]:
        # What al_bench_run draws: the layer's init then randn(1, seq, hidden), one generator.
        torch.manual_seed(seed)
        attn = SimpleAttention(c["hidden"], c["heads"], c["kv_heads"], c["head_dim"]).eval()
        x = torch.randn(1, seq, c["hidden"])
        cos, sin = precompute(c["head_dim"], seq, rope_base=float(c["rope_base"]))
        write_safetensors(os.path.join(folder, "input_%d.safetensors" % seq),
                          [("x", x), ("cos", cos), ("sin", sin)])
    write_safetensors(os.path.join(folder, "weights.safetensors"), list(attn.state_dict().items()),
                      {"rope_base": float(c["rope_base"]), "eps": attn.q_norm.eps})
    attn_add = ns_add["SimpleAttention"](c["hidden"], c["heads"], c["kv_heads"], c["head_dim"]).eval()
    attn_add.load_state_dict(attn.state_dict())
    n = 6  # traced at the seeds' prefill; seq stays symbolic in the graph
    args = (torch.randn(1, n, c["hidden"]),) + precompute(c["head_dim"], n, float(c["rope_base"]))
    for layer, name in ((attn, "layer.onnx"), (attn_add, "layer_add.onnx")):
        export(LayerOutput(layer), args, os.path.join(folder, name), ["x", "cos", "sin"], ["y"],
               {"x": {1: "seq"}, "cos": {0: "seq"}, "sin": {0: "seq"}, "y": {1: "seq"}})


class Llama2cStep(torch.nn.Module):
    """llama2c.Llama2c.step as a graph: the cache comes in and goes out instead of living in
    the object. Per layer the new K/V row is appended to the cache, and the one query attends
    to every cached position (all are <= pos, so there is nothing to mask)."""

    def __init__(self, model):
        super().__init__()
        c, w = model.cfg, model.w
        self.n_layers, self.n_heads, self.n_kv, self.hd = c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim
        self.n_rep = c.n_heads // c.n_kv_heads
        for name in ("token_embedding", "rms_att", "wq", "wk", "wv", "wo", "rms_ffn", "w1", "w2",
                     "w3", "rms_final"):
            self.register_buffer(name, w[name])
        self.register_buffer("classifier", model.classifier)
        self.register_buffer("cos", model.cos)   # [seq_len, head_dim / 2]
        self.register_buffer("sin", model.sin)

    def forward(self, token, pos, k_cache, v_cache):
        # token, pos [1]; k_cache, v_cache [n_layers, pos, n_kv_heads, head_dim]
        x = self.token_embedding[token]                                  # [1, dim]
        cos, sin = self.cos[pos], self.sin[pos]                          # [1, head_dim / 2]
        ks, vs = [], []
        for l in range(self.n_layers):
            h = rmsnorm(x, self.rms_att[l])
            q = rope_interleaved(F.linear(h, self.wq[l]).view(1, self.n_heads, self.hd), cos, sin)
            k = rope_interleaved(F.linear(h, self.wk[l]).view(1, self.n_kv, self.hd), cos, sin)
            v = F.linear(h, self.wv[l]).view(1, self.n_kv, self.hd)
            k = torch.cat([k_cache[l], k], dim=0)                        # [pos + 1, kv, hd]
            v = torch.cat([v_cache[l], v], dim=0)
            ks.append(k)
            vs.append(v)
            # GQA: query head h reads KV head h // n_rep (repeat_kv)
            S = k.shape[0]
            kk = k[:, :, None, :].expand(S, self.n_kv, self.n_rep, self.hd).reshape(S, self.n_heads, self.hd)
            vv = v[:, :, None, :].expand(S, self.n_kv, self.n_rep, self.hd).reshape(S, self.n_heads, self.hd)
            scores = torch.matmul(q.transpose(0, 1), kk.permute(1, 2, 0)) / (self.hd ** 0.5)  # [heads, 1, S]
            a = F.softmax(scores, dim=-1)
            o = torch.matmul(a, vv.transpose(0, 1)).transpose(0, 1).reshape(1, self.n_heads * self.hd)
            x = x + F.linear(o, self.wo[l])
            h = rmsnorm(x, self.rms_ffn[l])
            x = x + F.linear(F.silu(F.linear(h, self.w1[l])) * F.linear(h, self.w3[l]), self.w2[l])
        logits = F.linear(rmsnorm(x, self.rms_final), self.classifier)[0]
        return logits, torch.stack(ks), torch.stack(vs)


def stories_files(out, path):
    folder = os.path.join(out, "stories260K")
    os.makedirs(folder, exist_ok=True)
    model = Llama2c(path)
    c = model.cfg
    step = Llama2cStep(model).eval()
    past = 3  # traced with a short cache; its length stays symbolic in the graph
    cache = torch.zeros(c.n_layers, past, c.n_kv_heads, c.head_dim)
    args = (torch.tensor([5]), torch.tensor([past]), cache, cache.clone())
    axes = {"k_cache": {1: "past"}, "v_cache": {1: "past"}, "k_new": {1: "len"}, "v_new": {1: "len"}}
    export(step, args, os.path.join(folder, "step.onnx"), ["token", "pos", "k_cache", "v_cache"],
           ["logits", "k_new", "v_new"], axes)
    meta = {"n_layers": c.n_layers, "n_kv_heads": c.n_kv_heads, "head_dim": c.head_dim,
            "vocab": c.vocab_size, "seq_len": c.seq_len}
    with open(os.path.join(folder, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f)


def main():
    out, spec = sys.argv[1], json.loads(sys.argv[2])
    torch.set_num_threads(1)
    with torch.no_grad():
        for c in spec.get("layers", []):
            layer_files(out, c, spec.get("seed", 0))
        if spec.get("stories"):
            stories_files(out, spec["stories"])
    print(json.dumps({"torch": torch.__version__, "opset": OPSET}))


if __name__ == "__main__":
    main()
