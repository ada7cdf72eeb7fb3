"""The PyTorch processes' common start: one thread, and which BLAS kernel runs.

One thread means one thread: torch.set_num_threads(1) bounds PyTorch's own pool, but the
OpenBLAS under Debian's python3-torch starts a thread per core unless told before it loads (on
an idle 2-core machine that alone made PyTorch twice as fast). OPENBLAS_CORETYPE is left as the
bench gives it (tests/bench/blas.mjs names the CPU's widest kernel when OpenBLAS would fall back
to an older one). blas_info() says what ran: OpenBLAS's core (threadpoolctl's 'architecture',
else openblas_get_corename) and the threads of each pool. Run alone, it prints that as JSON.

    /usr/bin/python3 tests/bench/torch_env.py
"""
import ctypes
import json
import os

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import torch  # noqa: E402

torch.set_num_threads(1)


def blas_info():
    info = {"torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "coretype_env": os.environ.get("OPENBLAS_CORETYPE")}
    try:
        import threadpoolctl
        for pool in threadpoolctl.threadpool_info():
            if pool.get("internal_api") == "openblas":
                info.update(blas="OpenBLAS " + str(pool.get("version")), core=pool.get("architecture"),
                            blas_threads=pool.get("num_threads"), blas_path=pool.get("filepath"))
            elif pool.get("user_api") == "openmp":
                info["openmp_threads"] = pool.get("num_threads")
    except ImportError:
        pass
    if not info.get("core"):
        # without threadpoolctl: OpenBLAS's own answer, from the library PyTorch loaded
        for line in open("/proc/self/maps", encoding="utf-8"):
            if "libopenblas" in line:
                lib = ctypes.CDLL(line.split()[-1])
                lib.openblas_get_corename.restype = ctypes.c_char_p
                info.update(blas="OpenBLAS", core=lib.openblas_get_corename().decode(),
                            blas_threads=lib.openblas_get_num_threads(), blas_path=line.split()[-1])
                break
    return info


if __name__ == "__main__":
    print(json.dumps(blas_info()))
