"""Seed corpus for the fuzzer: every valid and malformed file of tests/malformed and the
attention fixtures' weights, each behind the 5-byte prefix the harness reads (path, layer,
rope base, eps, prefill), plus files holding a whole layer *and* an input `x` so the forward
path runs end to end. Writes tests/fuzz/seeds/ (committed).

    /usr/bin/python3 tests/fuzz/make_seeds.py
"""
import glob
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
OUT = os.path.join(HERE, "seeds")
os.makedirs(OUT, exist_ok=True)


def read_st(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n]), data[8 + n:]


def merge(weights_path, input_path):
    """One file with the tensors of both (offsets rebased)."""
    hw, dw = read_st(weights_path)
    hi, di = read_st(input_path)
    header = dict(hw)
    for name, info in hi.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        header[name] = dict(info, data_offsets=[a + len(dw), b + len(dw)])
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + dw + di


count = 0
for path in sorted(glob.glob(os.path.join(ROOT, "tests", "malformed", "*.safetensors"))):
    blob = open(path, "rb").read()
    for prefix in (b"\x00\x00\x00\x00\x00", b"\x01\x00\x01\x01\x00"):
        open(os.path.join(OUT, "%s-%d" % (os.path.basename(path), prefix[0])), "wb").write(prefix + blob)
        count += 1
cases = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "attention", "*", "")))
for case in cases[:12]:
    name = os.path.basename(os.path.dirname(case))
    w, x = os.path.join(case, "weights.safetensors"), os.path.join(case, "input.safetensors")
    if os.path.getsize(w) > 64 * 1024:
        continue
    layer = b"\x02" if "layer1" in name else b"\x04" if "layer3" in name else b"\x00"
    open(os.path.join(OUT, name + "-forward"), "wb").write(b"\x01" + layer + b"\x00\x00\x03" + merge(w, x))
    count += 1
print("wrote %d seeds to tests/fuzz/seeds" % count)
