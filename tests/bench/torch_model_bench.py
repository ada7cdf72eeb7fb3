"""PyTorch side of the whole-model benchmark: the independent reference of MiniMind's model
(tests/reference/minimind_model.py) with MiniMind-3's shape (768 hidden, 8 layers, 8/4 heads,
6400 vocab, fp32, random weights), eager, one thread, its KV cache — a prefill of `seq` tokens
and `decode` one-token steps, each the median of `repeats` runs after a warm-up. Prints one JSON
line, as `attnlab bench --preset minimind-3` does.

    /usr/bin/python3 tests/bench/torch_model_bench.py '{"seq": 512, "decode": 64, "repeats": 3}'
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

sys.path.insert(0, os.path.join(HERE, "..", "reference"))
from minimind_model import MiniMindConfig, MiniMindForCausalLM  # noqa: E402


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def main():
    args = json.loads(sys.argv[1])
    torch.manual_seed(0)
    cfg = MiniMindConfig(max_position_embeddings=args["seq"] + args["decode"] + 1)
    model = MiniMindForCausalLM(cfg).eval()
    for p in model.parameters():
        if p.dim() == 2:
            torch.nn.init.normal_(p, 0.0, 0.02)
    ids = (torch.arange(args["seq"] + args["decode"]) * 7 + 3) % cfg.vocab_size
    prefill, step = [], []
    for r in range(args["repeats"] + 1):  # the first is the warm-up
        with torch.no_grad():
            t0 = time.perf_counter()
            _, past = model(ids[None, :args["seq"]], use_cache=True)
            t1 = time.perf_counter()
            for i in range(args["decode"]):
                _, past = model(ids[None, args["seq"] + i:args["seq"] + i + 1], past_key_values=past, use_cache=True)
            t2 = time.perf_counter()
        if r:
            prefill.append((t1 - t0) * 1e3)
            step.append((t2 - t1) * 1e3 / max(1, args["decode"]))
    p, s = median(prefill), median(step)
    print(json.dumps({"torch": torch.__version__, "blas": blas_info(), "prefill_ms": p, "prefill_tokens_per_s": 1e3 * args["seq"] / p,
                      "decode_ms": s, "decode_tokens_per_s": 1e3 / s if args["decode"] else 0.0}))


if __name__ == "__main__":
    main()
