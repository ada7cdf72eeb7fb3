"""PyTorch side of the benchmark: the tutorial's own SimpleAttention (from
tests/reference/03-attention-demo.py) on one thread, the same sizes and the same weights and
inputs as `attnlab bench` (torch.manual_seed(seed), the layer's nn.Linear init, then randn),
timed as the median of repeated runs after a warm-up of at least 0.1 s. Prints one JSON line
per case, with the BLAS kernel and threads that ran it (torch_env.blas_info). GFLOP/s are the
bench's, from the core's counts (run.mjs).

    /usr/bin/python3 tests/bench/torch_bench.py '[{"hidden":768,"heads":8,"kv_heads":4,
        "head_dim":96,"rope_base":1e6,"seq":512,"decode_at":2048,"repeats":10}]'
"""
import json
import os
import sys
import time

# One thread, and the BLAS kernel reported with every result (torch_env.py).
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_env import blas_info  # noqa: E402
import torch  # noqa: E402

SRC = open(os.path.join(HERE, "..", "reference", "03-attention-demo.py"), encoding="utf-8").read()
ns = {}
exec(SRC[:SRC.index("\ntorch.manual_seed(42)")], ns)
SimpleAttention, precompute = ns["SimpleAttention"], ns["precompute_freqs_cis"]


def median_ms(fn, repeats):
    # Warm-up for at least 0.1 s, as `attnlab bench` does (caches, allocator, CPU clock).
    start = time.perf_counter()
    fn()
    while time.perf_counter() - start < 0.1:
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    n = len(times)
    return times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])


def run(c):
    torch.manual_seed(c.get("seed", 0))
    attn = SimpleAttention(c["hidden"], c["heads"], c["kv_heads"], c["head_dim"])
    seq, at, reps = c.get("seq", 0), c.get("decode_at", 0), c.get("repeats", 10)
    n = max(seq, at + 1)
    x = torch.randn(1, n, c["hidden"])
    cos, sin = precompute(c["head_dim"], n, rope_base=c["rope_base"])
    out = dict(c)
    with torch.no_grad():
        if seq:
            xs, cs, ss = x[:, :seq], cos[:seq], sin[:seq]
            out["prefill_ms"] = median_ms(lambda: attn(xs, cs, ss), reps)
        if at:
            _, past = attn(x[:, :at], cos[:at], sin[:at], use_cache=True)
            tok, ct, st = x[:, at:at + 1], cos[at:at + 1], sin[at:at + 1]
            out["decode_ms"] = median_ms(lambda: attn(tok, ct, st, past_kv=past, use_cache=True), reps)
            xr, cr, sr = x[:, :at + 1], cos[:at + 1], sin[:at + 1]
            out["decode_recompute_ms"] = median_ms(lambda: attn(xr, cr, sr), reps)
    return out


if __name__ == "__main__":
    info = blas_info()
    for case in json.loads(sys.argv[1]):
        print(json.dumps({**run(case), "blas": info}), flush=True)
