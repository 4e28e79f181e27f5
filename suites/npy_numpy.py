#!/usr/bin/env python3
"""npy_numpy.py EMITTER DIR - the .npy files crossover writes, read by NumPy.

Runs EMITTER DIR (suites/npy_emit.c), then checks every file it wrote with
an independent reader, NumPy (python3-numpy), not the project's own: the
format 1.0 preamble, a header that is a Python dict literal with exactly
descr '<f4', fortran_order False and a shape tuple (a 1-D shape is "(n,)"),
padded with spaces to a 64-byte boundary and ending in a newline, no byte
after the data; numpy.load gives float32 of that shape, bit for bit the
values in the raw .f32 file beside it. The seed model's weights have Keras's
names and shapes, zero biases and Glorot-uniform kernels within their limit.
Without NumPy this FAILS (exit 1): it is a CI dependency (ci/lib.sh).
"""
import ast
import math
import os
import shutil
import struct
import subprocess
import sys

try:
    import numpy as np
except ImportError as e:
    sys.exit(f"npy_numpy: FAIL: NumPy is missing ({e}); install python3-numpy (ci/lib.sh)")

# Keras layouts of the seed model: conv1d [k][cin][cout], dense [in][out]
SEED_WEIGHTS = {
    "conv1d.kernel": (3, 1, 16), "conv1d.bias": (16,),
    "conv1d_1.kernel": (3, 16, 32), "conv1d_1.bias": (32,),
    "dense.kernel": (64, 32), "dense.bias": (32,),
    "dense_1.kernel": (32, 12), "dense_1.bias": (12,),
}

errors = []


def fail(path, why):
    errors.append(f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)}: {why}")


def check_bytes(path, shape):
    """The raw format, independent of any reader's leniency."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        return fail(path, "bad magic")
    if data[6:8] != b"\x01\x00":
        return fail(path, f"version {data[6]}.{data[7]}, expected 1.0")
    (hlen,) = struct.unpack("<H", data[8:10])
    header = data[10:10 + hlen]
    if (10 + hlen) % 64:
        fail(path, f"data starts at byte {10 + hlen}, not a multiple of 64")
    if not header.endswith(b"\n"):
        fail(path, "header does not end with a newline")
    try:
        text = header.decode("ascii")
        d = ast.literal_eval(text)
    except (UnicodeDecodeError, ValueError, SyntaxError) as e:
        return fail(path, f"header is not a dict literal: {e}")
    if not isinstance(d, dict) or set(d) != {"descr", "fortran_order", "shape"}:
        return fail(path, f"header keys {sorted(d) if isinstance(d, dict) else d!r}")
    if d["descr"] != "<f4" or d["fortran_order"] is not False:
        fail(path, f"descr {d['descr']!r} fortran_order {d['fortran_order']!r}")
    if not isinstance(d["shape"], tuple) or d["shape"] != shape:
        fail(path, f"shape {d['shape']!r} in the header, expected {shape!r}")
    if len(shape) == 1 and f"({shape[0]},)" not in text:
        fail(path, f"1-D shape not written as ({shape[0]},): {text.strip()!r}")
    count = math.prod(shape)
    if len(data) != 10 + hlen + 4 * count:
        fail(path, f"{len(data)} bytes, expected {10 + hlen + 4 * count}")


def check_numpy(path, shape):
    try:
        a = np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001 - any reader error is the finding
        fail(path, f"numpy.load: {type(e).__name__}: {e}")
        return None
    if a.dtype != np.dtype("<f4") or a.shape != shape or not a.flags.c_contiguous:
        fail(path, f"numpy reads dtype {a.dtype} shape {a.shape}, expected float32 {shape}")
        return None
    return a


def main():
    emitter, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    r = subprocess.run([emitter, out], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"npy_numpy: FAIL: {emitter} exited {r.returncode}: {r.stderr.strip()}")
    n = 0
    with open(os.path.join(out, "manifest.txt")) as f:
        for line in f:
            name, _, dims = line.strip().partition(" ")
            shape = tuple(int(v) for v in dims.split(",")) if dims else ()
            path = os.path.join(out, name + ".npy")
            check_bytes(path, shape)
            a = check_numpy(path, shape)
            raw = np.fromfile(os.path.join(out, name + ".f32"), dtype="<f4").reshape(shape)
            if a is not None and not np.array_equal(a.view("<u4"), raw.view("<u4")):
                fail(path, "values differ from the raw float32 written beside it")
            n += 1
    for name, shape in SEED_WEIGHTS.items():
        path = os.path.join(out, "weights", name + ".npy")
        if not os.path.exists(path):
            fail(path, "missing")
            continue
        check_bytes(path, shape)
        a = check_numpy(path, shape)
        n += 1
        if a is None:
            continue
        if name.endswith(".bias"):
            if np.any(a != 0):
                fail(path, "Keras initialises biases to zero")
            continue
        fan_in = math.prod(shape[:-1])
        fan_out = (shape[0] if len(shape) == 3 else 1) * shape[-1]
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        if not np.all(np.abs(a) <= limit) or np.unique(a).size < a.size // 2:
            fail(path, f"not Glorot-uniform within {limit:.4g}")
    if n < 15:
        fail(out, f"only {n} files checked")
    if errors:
        for e in errors:
            print(f"npy_numpy: FAIL: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"npy_numpy: {n} .npy files read by NumPy {np.__version__}: valid, values bit-exact")


if __name__ == "__main__":
    main()
