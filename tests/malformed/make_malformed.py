#!/usr/bin/python3
"""make_malformed.py — writes the safetensors files that tests/test_safetensors.c reads, and
EXPECTED.txt, which says what each must produce. Valid files carry values computed by torch
(f16/bf16 conversions checked bit for bit against a float32 reference file); malformed files
each break one rule of the format. The `safetensors` package is not needed: the format is
written by hand the way the reference writer lays it out (compact JSON, tensors sorted by
descending dtype alignment then name, header padded with spaces to a multiple of 8).

Run from anywhere:  /usr/bin/python3 tests/malformed/make_malformed.py
"""
import json
import os
import struct

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

# Dtype order of the reference implementation (increasing alignment), used to sort tensors.
DTYPE_ORDER = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16",
               "I32", "U32", "F32", "F64", "I64", "U64"]

rows = []  # (file, stage, status, fragment-or-reference)


def raw_bytes(t):
    """Little-endian bytes of a tensor (bfloat16 through its int16 view: numpy has no bf16)."""
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


DTYPE_NAME = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
              torch.int64: "I64", torch.int32: "I32", torch.uint8: "U8", torch.int8: "I8"}


def pad8(header: bytes) -> bytes:
    return header + b" " * ((8 - len(header) % 8) % 8)


def container(header: bytes, data: bytes = b"", n=None) -> bytes:
    """8-byte little-endian header length (n, or the header's real length), header, data."""
    return struct.pack("<Q", len(header) if n is None else n) + header + data


def st_bytes(tensors: dict, metadata=None) -> bytes:
    """A file as the reference writer produces it."""
    items = sorted(tensors.items(),
                   key=lambda kv: (-DTYPE_ORDER.index(DTYPE_NAME[kv[1].dtype]), kv[0]))
    hdr, data = {}, b""
    if metadata is not None:
        hdr["__metadata__"] = metadata
    for name, t in items:
        b = raw_bytes(t)
        hdr[name] = {"dtype": DTYPE_NAME[t.dtype], "shape": list(t.shape),
                     "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    text = json.dumps(hdr, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return container(pad8(text), data)


def write(name, content, stage, status, fragment):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(content)
    assert "\n" not in fragment
    rows.append((name, stage, status, fragment))


def bad_header(name, text, fragment, data=b"", n=None):
    """A file whose header (given as text, or bytes when non-UTF-8 is the point) is malformed."""
    hdr = text if isinstance(text, bytes) else text.encode("utf-8")
    write(name, container(hdr, data, n), "parse", "FORMAT", fragment)


def entry(name, dtype="F32", shape="[2]", offsets="[0,8]"):
    return '"%s":{"dtype":"%s","shape":%s,"data_offsets":%s}' % (name, dtype, shape, offsets)


def main():
    for f in os.listdir(HERE):
        if f.endswith(".safetensors"):
            os.remove(os.path.join(HERE, f))
    torch.manual_seed(0)

    # ---- valid files --------------------------------------------------------------------
    ramp = torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.25 - 1.0  # -1, -0.75, ...
    write("valid_f32.safetensors",
          st_bytes({"ramp": ramp, "q_proj.weight": torch.randn(8, 16)}, {"format": "pt"}),
          "ok", "OK", "-")

    specials16 = torch.tensor([0.0, -0.0, 1.0, -2.0, 65504.0, -65504.0, 2.0 ** -24, -2.0 ** -24,
                               2.0 ** -14, 1023 * 2.0 ** -24, 1e-5, 0.1, 1 / 3, 3.14159],
                              dtype=torch.float32).half()
    f16 = {"q_proj.weight": torch.randn(4, 8).half(), "specials": specials16}
    write("valid_f16.safetensors", st_bytes(f16, {"format": "pt", "dtype": "float16"}),
          "ok", "OK", "valid_f16.ref.safetensors")
    write("valid_f16.ref.safetensors",
          st_bytes({k: v.float() for k, v in f16.items()}), "ok", "OK", "-")

    specials_bf = torch.tensor([0.0, -0.0, 1.0, -3.0, 1e-40, -1e-40, 3.3895314e38, 1 / 3,
                                2.0 ** -126, 2.0 ** -133], dtype=torch.float32).bfloat16()
    bf16 = {"k_proj.weight": torch.randn(4, 8).bfloat16(), "specials": specials_bf}
    write("valid_bf16.safetensors", st_bytes(bf16, {"format": "pt"}),
          "ok", "OK", "valid_bf16.ref.safetensors")
    write("valid_bf16.ref.safetensors",
          st_bytes({k: v.float() for k, v in bf16.items()}), "ok", "OK", "-")

    mixed = {"model.layers.0.self_attn.q_proj.weight": torch.randn(8, 8),
             "model.layers.0.self_attn.q_norm.weight": torch.randn(4).half(),
             "model.layers.0.self_attn.k_norm.weight": torch.randn(4).bfloat16(),
             "positions": torch.arange(5, dtype=torch.int64),
             "empty": torch.zeros(0, 3),
             "scalar": torch.tensor(2.5)}
    meta = {"format": "pt", "note": 'quote " backslash \\ newline \n tab \t \u00e9 \u2603 \U0001F600'}
    write("valid_mixed.safetensors", st_bytes(mixed, meta), "ok", "OK",
          "valid_mixed.ref.safetensors")
    write("valid_mixed.ref.safetensors",
          st_bytes({k: v.float() for k, v in mixed.items() if v.dtype != torch.int64}, meta),
          "ok", "OK", "-")

    # Same layout written by a different hand: pretty-printed, keys not in offset order,
    # names spelled with \u escapes, CRLF line breaks; the reference reader accepts it.
    w = torch.randn(2, 2)
    text = ('{\r\n  "k_proj.weight": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]},\r\n'
            '  "\\u0071_proj.weight" : { "shape" : [ 2 , 2 ] , "data_offsets" : [ 0 , 16 ] ,'
            ' "dtype" : "F32" },\r\n  "__metadata__": {"s\\u00e9ed": "\\ud83d\\ude00"}\r\n}')
    write("valid_unordered.safetensors",
          container(pad8(text.encode()), raw_bytes(w) + raw_bytes(torch.tensor([7.0, -7.0]))),
          "ok", "OK", "-")
    write("valid_no_tensors.safetensors", container(b"{}      "), "ok", "OK", "-")

    # ---- the 8-byte length and the header's bounds ------------------------------------
    write("empty.safetensors", b"", "parse", "FORMAT", "file is empty")
    write("short_5_bytes.safetensors", b"\x10\x00\x00\x00\x00", "parse", "FORMAT",
          "file is 5 bytes, shorter than the 8-byte header length field")
    write("header_len_zero.safetensors", container(b"{}", n=0), "parse", "FORMAT",
          "header length is 0")
    write("header_len_past_eof.safetensors", container(b'{"a":1}', n=1000), "parse", "FORMAT",
          "header length 1000 runs past the end of the file (7 bytes follow")
    write("header_len_absurd.safetensors", container(b"{}      " * 2, n=1 << 63), "parse",
          "FORMAT", "header length 9223372036854775808 exceeds the 100000000-byte limit")

    # ---- JSON syntax ---------------------------------------------------------------------
    good = "{" + entry("w") + "}"
    bad_header("header_not_json.safetensors", "hello, world!!!!",
               "header is not valid JSON: unexpected 'h' at byte 0")
    bad_header("json_truncated.safetensors", '{"w":{"dtype":"F32","shape":[2]',
               "unexpected end of text at byte 31")
    bad_header("json_truncated_in_string.safetensors", '{"w":{"dtype":"F3',
               "unexpected end of text inside the string that starts at byte 14")
    bad_header("json_not_object.safetensors", "[1, 2, 3]", "header is an array, not an object")
    bad_header("json_string_top.safetensors", '"weights"', "header is a string, not an object")
    bad_header("trailing_garbage.safetensors", good + "xyz",
               "unexpected 'x' after the top-level value at byte %d" % len(good), b"\0" * 8)
    bad_header("trailing_nul_padding.safetensors", good + "\0\0\0",
               "unexpected byte 0x00 after the top-level value", b"\0" * 8)
    bad_header("missing_comma.safetensors", "{" + entry("a") + " " + entry("b", offsets="[8,16]") + "}",
               "expected ',' or '}' but found '\"'", b"\0" * 16)
    bad_header("bad_escape.safetensors", "{" + entry("q\\qproj") + "}",
               "invalid escape '\\q' at byte 3", b"\0" * 8)
    bad_header("bad_unicode_escape.safetensors", "{" + entry("q\\u12G4") + "}",
               "invalid \\u escape (needs 4 hex digits) at byte 3", b"\0" * 8)
    bad_header("lone_high_surrogate.safetensors", "{" + entry("q\\ud800x") + "}",
               "unpaired surrogate in a \\u escape at byte 3", b"\0" * 8)
    bad_header("lone_low_surrogate.safetensors", "{" + entry("qk\\udc00") + "}",
               "unpaired surrogate in a \\u escape at byte 4", b"\0" * 8)
    bad_header("invalid_utf8_ff.safetensors", b'{"q\xffproj":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
               "invalid UTF-8 byte 0xff in a string at byte 3", b"\0" * 8)
    bad_header("invalid_utf8_overlong.safetensors", b'{"q\xc0\xafproj":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
               "invalid UTF-8 byte 0xc0 in a string at byte 3", b"\0" * 8)
    bad_header("invalid_utf8_surrogate.safetensors", b'{"q\xed\xa0\x80":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
               "invalid UTF-8 byte 0xed in a string at byte 3", b"\0" * 8)
    bad_header("control_char_in_string.safetensors", "{" + entry("q\nproj") + "}",
               "unescaped control character 0x0a in a string at byte 3", b"\0" * 8)
    bad_header("leading_zero.safetensors", "{" + entry("w", shape="[02]") + "}",
               "invalid number (leading zero) at byte 30", b"\0" * 8)
    bad_header("bad_literal.safetensors", "{" + entry("w", shape="[tru]") + "}",
               "unexpected ']' at byte 32", b"\0" * 8)
    deep = '{"__metadata__":{"k":' + "[" * 100 + "]" * 100 + "}}"
    bad_header("deep_nesting.safetensors", deep, "nested deeper than 64 levels at byte 83")

    # ---- schema --------------------------------------------------------------------------
    Z = b"\0" * 64
    bad_header("nul_in_name.safetensors", "{" + entry("q\\u0000proj") + "}",
               "tensor name 'q\\x00proj' contains a NUL character", Z)
    bad_header("missing_dtype.safetensors", '{"w":{"shape":[2],"data_offsets":[0,8]}}',
               "tensor 'w': missing \"dtype\"", Z)
    bad_header("missing_shape.safetensors", '{"w":{"dtype":"F32","data_offsets":[0,8]}}',
               "tensor 'w': missing \"shape\"", Z)
    bad_header("missing_data_offsets.safetensors", '{"w":{"dtype":"F32","shape":[2]}}',
               "tensor 'w': missing \"data_offsets\"", Z)
    bad_header("dtype_not_string.safetensors", "{" + entry("w", dtype='4').replace('"4"', "4") + "}",
               "tensor 'w': \"dtype\" must be a string, got a number", Z)
    bad_header("unknown_dtype.safetensors", "{" + entry("w", dtype="Q4_0") + "}",
               "tensor 'w': unknown dtype 'Q4_0'", Z)
    bad_header("dtype_lowercase.safetensors", "{" + entry("w", dtype="float32") + "}",
               "tensor 'w': unknown dtype 'float32'", Z)
    bad_header("tensor_not_object.safetensors", '{"w":[1,2]}',
               "tensor 'w': entry must be an object, got an array", Z)
    bad_header("duplicate_field.safetensors",
               '{"w":{"dtype":"F32","shape":[2],"shape":[2],"data_offsets":[0,8]}}',
               "tensor 'w': duplicate field \"shape\"", Z)
    bad_header("unknown_field.safetensors", '{"w":{"dtype":"F32","shape":[2],"offsets":[0,8]}}',
               "tensor 'w': unknown field 'offsets'", Z)
    bad_header("shape_not_array.safetensors", "{" + entry("w", shape="2") + "}",
               "tensor 'w': \"shape\" must be an array, got a number", Z)
    bad_header("shape_negative.safetensors", "{" + entry("w", shape="[-3,4]") + "}",
               "tensor 'w': shape[0] must be a non-negative integer, got -3", Z)
    bad_header("shape_float.safetensors", "{" + entry("w", shape="[2.5]") + "}",
               "tensor 'w': shape[0] must be a non-negative integer, got 2.5", Z)
    bad_header("shape_exponent.safetensors", "{" + entry("w", shape="[4,1e3]") + "}",
               "tensor 'w': shape[1] must be a non-negative integer, got 1e3", Z)
    bad_header("shape_string.safetensors", "{" + entry("w", shape='["4"]') + "}",
               "tensor 'w': shape[0] must be a non-negative integer, got a string", Z)
    bad_header("shape_huge.safetensors", "{" + entry("w", shape="[99999999999999999999]") + "}",
               "tensor 'w': shape[0] = 99999999999999999999 is too large", Z)
    bad_header("shape_int64_max_plus_one.safetensors",
               "{" + entry("w", shape="[9223372036854775808]") + "}",
               "tensor 'w': shape[0] = 9223372036854775808 is too large", Z)
    bad_header("shape_too_many_dims.safetensors", "{" + entry("w", shape="[1,1,1,1,1,1,1,1,2]") + "}",
               "tensor 'w': shape has more than 8 dimensions", Z)
    bad_header("numel_overflow.safetensors",
               "{" + entry("w", shape="[4294967296,4294967296]") + "}",
               "tensor 'w': shape [4294967296, 4294967296] has more elements than fit in 64 bits", Z)
    bad_header("nbytes_overflow.safetensors", "{" + entry("w", shape="[2305843009213693952]") + "}",
               "tensor 'w': shape [2305843009213693952] of F32: 2305843009213693952 elements x 4 bytes overflows 64 bits", Z)
    bad_header("offsets_not_array.safetensors", "{" + entry("w", offsets='"0-8"') + "}",
               "tensor 'w': \"data_offsets\" must be an array [begin, end], got a string", Z)
    bad_header("offsets_one_entry.safetensors", "{" + entry("w", offsets="[8]") + "}",
               "tensor 'w': data_offsets must be [begin, end] but has 1 entry", Z)
    bad_header("offsets_three_entries.safetensors", "{" + entry("w", offsets="[0,8,16]") + "}",
               "tensor 'w': data_offsets must be [begin, end] but has more than 2 entries", Z)
    bad_header("offsets_negative.safetensors", "{" + entry("w", offsets="[-8,0]") + "}",
               "tensor 'w': data_offsets[0] must be a non-negative integer, got -8", Z)
    bad_header("offsets_reversed.safetensors", "{" + entry("w", offsets="[8,0]") + "}",
               "tensor 'w': data_offsets [8, 0] are reversed (begin > end)", Z)
    bad_header("byte_count_mismatch.safetensors",
               "{" + entry("q_proj.weight", shape="[2,3]", offsets="[0,20]") + "}",
               "tensor 'q_proj.weight': shape [2, 3] of F32 needs 24 bytes but data_offsets [0, 20] span 20", Z)
    bad_header("offsets_outside_data.safetensors", "{" + entry("q_proj.weight", offsets="[64,72]") + "}",
               "tensor 'q_proj.weight': data_offsets [64, 72] outside the 8-byte data section",
               b"\0" * 8)
    bad_header("overlap.safetensors",
               "{" + entry("a.weight", shape="[4]", offsets="[0,16]") + ","
               + entry("b.weight", shape="[4]", offsets="[8,24]") + "}",
               "tensors 'a.weight' (data_offsets [0, 16]) and 'b.weight' (data_offsets [8, 24]) overlap",
               b"\0" * 24)
    bad_header("overlap_contained.safetensors",
               "{" + entry("small", shape="[1]", offsets="[8,12]") + ","
               + entry("big", shape="[8]", offsets="[0,32]") + "}",
               "tensors 'big' (data_offsets [0, 32]) and 'small' (data_offsets [8, 12]) overlap",
               b"\0" * 32)
    bad_header("duplicate_name.safetensors",
               "{" + entry("w") + "," + entry("w", offsets="[8,16]") + "}",
               "duplicate tensor name 'w'", b"\0" * 16)
    bad_header("metadata_not_object.safetensors", '{"__metadata__":["pt"]}',
               "\"__metadata__\" must be an object of strings, got an array")
    bad_header("metadata_value_number.safetensors", '{"__metadata__":{"epoch":3}}',
               "__metadata__ key 'epoch': value must be a string, got a number")
    bad_header("metadata_value_object.safetensors", '{"__metadata__":{"cfg":{"a":"b"}}}',
               "__metadata__ key 'cfg': value must be a string, got an object")
    bad_header("metadata_duplicate_key.safetensors",
               '{"__metadata__":{"format":"pt","format":"np"}}',
               "duplicate __metadata__ key 'format'")
    bad_header("metadata_twice.safetensors",
               '{"__metadata__":{"format":"pt"},"__metadata__":{"format":"pt"}}',
               "duplicate \"__metadata__\" entry")
    bad_header("metadata_nul_in_value.safetensors", '{"__metadata__":{"format":"p\\u0000t"}}',
               "__metadata__ key 'format': value contains a NUL character")

    # A well-formed file whose end is missing (an interrupted download).
    whole = st_bytes({"q_proj.weight": torch.randn(4, 4), "k_proj.weight": torch.randn(2, 4)})
    hdr_len = struct.unpack("<Q", whole[:8])[0]
    write("data_truncated.safetensors", whole[:-10], "parse", "FORMAT",
          "data section truncated: the header describes 96 bytes of tensor data but the file "
          "holds 86 (tensor 'q_proj.weight' ends at 96)")
    assert len(whole) - 8 - hdr_len == 96

    # ---- values al_st_read_f32 must refuse -------------------------------------------
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    x[1, 1] = float("nan")
    write("nan_f32.safetensors", st_bytes({"a_ok": torch.ones(3), "q_proj.weight": x}),
          "read", "NONFINITE", "tensor 'q_proj.weight': element 4 (index [1, 1]) is NaN")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    x[0, 2] = float("inf")
    write("inf_f32.safetensors", st_bytes({"q_proj.weight": x}),
          "read", "NONFINITE", "tensor 'q_proj.weight': element 2 (index [0, 2]) is +inf")
    x = torch.arange(6, dtype=torch.float32)
    x[5] = -float("inf")
    write("neg_inf_f32.safetensors", st_bytes({"bias": x}),
          "read", "NONFINITE", "tensor 'bias': element 5 is -inf")
    x = torch.randn(2, 2).half()
    x[1, 0] = float("nan")
    write("nan_f16.safetensors", st_bytes({"k_proj.weight": x}),
          "read", "NONFINITE", "tensor 'k_proj.weight': element 2 (index [1, 0]) is NaN")
    x = torch.tensor([1.0, 70000.0, 2.0]).half()  # 70000 rounds to +inf in float16
    write("inf_f16.safetensors", st_bytes({"v_proj.weight": x}),
          "read", "NONFINITE", "tensor 'v_proj.weight': element 1 is +inf")
    x = torch.randn(3, 2).bfloat16()
    x[2, 1] = float("nan")
    write("nan_bf16.safetensors", st_bytes({"o_proj.weight": x}),
          "read", "NONFINITE", "tensor 'o_proj.weight': element 5 (index [2, 1]) is NaN")
    write("i64_not_convertible.safetensors", st_bytes({"positions": torch.arange(4)}),
          "read", "DTYPE",
          "tensor 'positions' has dtype I64; only F32, F16 and BF16 convert to float32")

    with open(os.path.join(HERE, "EXPECTED.txt"), "w") as f:
        f.write("# Generated by make_malformed.py; regenerate rather than edit.\n"
                "# <file> <stage> <status> <fragment to end of line>\n"
                "#   stage parse: al_st_parse fails with <status> and a message containing <fragment>\n"
                "#   stage read:  al_st_parse succeeds; reading the tensors in header order with\n"
                "#                al_st_read_f32, the first failure has <status> and <fragment>\n"
                "#   stage ok:    everything succeeds; <fragment> names a float32 reference file\n"
                "#                whose tensors must equal this file's bit for bit, or is '-'\n")
        for r in rows:
            f.write("%s %s %s %s\n" % r)


if __name__ == "__main__":
    main()
