#!/usr/bin/env python3
"""npy_head.py IN.npy OUT.npy N - the first N rows of a C-order .npy file.

The races label (suites/races.cmake) trains and predicts on a few samples of
the golden fixtures under Oclgrind, which simulates every work-item and is
some 10^4 times slower than PoCL. Standard library only (reads the .npy
format's version 1/2/3 header; writes version 1).
"""
import ast
import struct
import sys


def main():
    src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(src, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"npy_head: {src}: not a .npy file")
    major = data[6]
    if major == 1:
        (hlen,), start = struct.unpack("<H", data[8:10]), 10
    else:
        (hlen,), start = struct.unpack("<I", data[8:12]), 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    if header["fortran_order"] or not header["shape"]:
        sys.exit(f"npy_head: {src}: need a C-order array of at least one axis")
    shape = header["shape"]
    row = int(header["descr"][2:])
    for d in shape[1:]:
        row *= d
    n = min(n, shape[0])
    body = data[start + hlen:start + hlen + n * row]
    shape = (n,) + tuple(shape[1:])
    text = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (header["descr"], shape)
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + " " * (pad % 64) + "\n"
    with open(dst, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1"))
        f.write(body)


if __name__ == "__main__":
    main()
