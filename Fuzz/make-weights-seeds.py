#!/usr/bin/env python3
"""Writes the weights target's seeds into Corpus/weights from the shipped files in ../Weights: each file as it is,
split (header JSON, NUL, data section: the third way FuzzWeights reads an input) and a few damaged copies."""
import json, pathlib, struct, zlib

here = pathlib.Path(__file__).resolve().parent
out = here / "Corpus" / "weights"
out.mkdir(parents=True, exist_ok=True)

def fix(b):
    """The file length and CRC-32 set to match the bytes."""
    b = bytearray(b)
    b[16:24] = struct.pack("<Q", len(b))
    b[-4:] = struct.pack("<I", zlib.crc32(bytes(b[:-4])))
    return bytes(b)

for path in sorted((here.parent / "Weights").glob("*.weights")):
    name, raw = path.stem, path.read_bytes()
    (length,) = struct.unpack_from("<I", raw, 12)
    header = raw[24:24 + length]
    start = (24 + length + 31) // 32 * 32
    data = raw[start:-4]
    (out / f"{name}.weights").write_bytes(raw)
    (out / f"{name}.split").write_bytes(header + b"\0" + data)
    if "int8" in name:
        (out / f"{name}.truncated").write_bytes(raw[: len(raw) // 2])
        (out / f"{name}.version9").write_bytes(fix(raw[:8] + struct.pack("<I", 9) + raw[12:]))
        flipped = bytearray(raw)
        flipped[start + 5] ^= 0x40
        (out / f"{name}.flipped").write_bytes(bytes(flipped))
        # The header re-encoded with a changed decision rule and the first layer's width halved: the split form.
        h = json.loads(header)
        h.setdefault("decision", {})["temperature"] = 1e30
        (out / f"{name}.hot.split").write_bytes(json.dumps(h, sort_keys=True, separators=(",", ":")).encode() + b"\0" + data)
