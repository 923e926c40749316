#!/usr/bin/env python3
"""Extracts libvmaf's built-in float and bootstrap models from the oracle FFmpeg binary (scripts/oracle.sh:
the ffmpeg of the pinned imageio-ffmpeg 0.8.1 PyPI wheel, which links libvmaf with its built-in
models compiled in as NUL-terminated JSON strings) into src/model/builtin/, checking each against
the sha256 recorded in src/model/builtin/PROVENANCE.md. Usage: extract-builtin-models.py FFMPEG"""
import hashlib
import pathlib
import re
import sys

WANT = {
    "vmaf_float_v0.6.1.json": "26573aa33334",
    "vmaf_float_v0.6.1neg.json": "8ac8e9bd6153",
    "vmaf_float_4k_v0.6.1.json": "2af34f306817",
    "vmaf_b_v0.6.3.json": "34f620dbaff6",
    "vmaf_float_b_v0.6.3.json": "e32df7311938",
}

data = pathlib.Path(sys.argv[1]).read_bytes()
out = pathlib.Path(__file__).resolve().parent.parent / "src/model/builtin"
blobs = {}
for m in re.finditer(rb'"model_dict"', data):
    start = data.rfind(b"\0", 0, m.start()) + 1
    end = data.find(b"\0", m.start())
    blob = data[start:end]
    blobs[hashlib.sha256(blob).hexdigest()] = blob
for name, prefix in WANT.items():
    hits = [(h, b) for h, b in blobs.items() if h.startswith(prefix)]
    if len(hits) != 1:
        sys.exit(f"{name}: no unique embedded model with sha256 {prefix}…")
    h, b = hits[0]
    (out / name).write_bytes(b)
    print(f"{name}: {len(b)} bytes, sha256 {h}")
