"""PyTorch side of the training benchmark: MiniMind's training step on the independent
reference model (tests/reference/minimind_train.py), eager, one thread — forward with labels
(cross-entropy, + the load-balancing loss for MoE), backward, clip_grad_norm_(1.0), AdamW —
on random windows of random ids, the median time of `steps` steps after two warm-up steps.
Prints one JSON line with tokens_per_s (batch · seq per step), as `attnlab bench --train`.

    /usr/bin/python3 tests/bench/torch_train_bench.py '{"hidden": 128, "layers": 4, "heads": 4,
        "kv_heads": 2, "vocab": 6400, "batch": 8, "seq": 128, "steps": 5}'
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
import minimind_train as mt  # noqa: E402


def main():
    a = json.loads(sys.argv[1])
    torch.manual_seed(0)
    cfg = mt.make_config(hidden_size=a["hidden"], num_hidden_layers=a["layers"], num_attention_heads=a["heads"],
                         num_key_value_heads=a["kv_heads"], vocab_size=a["vocab"],
                         max_position_embeddings=max(a["seq"], 64))
    model = mt.build_model(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4)
    times = []
    for step in range(a["steps"] + 2):
        ids = torch.randint(0, a["vocab"], (a["batch"], a["seq"]))
        t0 = time.perf_counter()
        out = mt.forward(model, ids, ids)
        out["loss"].backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step >= 2:
            times.append(time.perf_counter() - t0)
    times.sort()
    t = times[len(times) // 2]
    print(json.dumps({"torch": torch.__version__, "blas": blas_info(), "step_ms": t * 1e3, "tokens_per_s": a["batch"] * a["seq"] / t}))


if __name__ == "__main__":
    main()
