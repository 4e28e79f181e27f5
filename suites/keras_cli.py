#!/usr/bin/env python3
"""keras_cli.py XO FIXTURES WORKDIR - `xo train` on a Keras model file starts
from the file's weights (Keras's load_model then fit), not from a fresh
initialisation: training seed.keras without --weights must give the same
weights, bit for bit, as training it with --weights seed.keras, and other
weights than training the equivalent spec from --seed. Standard library only.
"""
import os
import shutil
import struct
import subprocess
import sys


def npy_f32(path, shape, values):
    shape_s = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape_s
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def weights(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))
            if n.endswith(".npy")}


def main():
    xo, fixtures, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    n = 32
    npy_f32(f"{work}/x.npy", (n, 29, 1), [((i * 7919) % 1000) / 1000.0 for i in range(n * 29)])
    npy_f32(f"{work}/y.npy", (n, 12), [1.0 if j == i % 12 else 0.0 for i in range(n) for j in range(12)])
    seed = os.path.join(fixtures, "seed.keras")
    spec = os.path.join(work, "imported")
    subprocess.check_call([xo, "import", seed, "--out", spec], stdout=subprocess.DEVNULL)

    def train(model, out, *extra):
        subprocess.check_call([xo, "train", "--model", model, "--x", f"{work}/x.npy", "--y",
                               f"{work}/y.npy", "--save", f"{work}/{out}", "--epochs", "1",
                               "--batch-size", "8", "--device", "ref", "--seed", "4", *extra],
                              stdout=subprocess.DEVNULL)
        return weights(f"{work}/{out}")

    own = train(seed, "own")
    given = train(seed, "given", "--weights", seed)
    fresh = train(os.path.join(spec, "model.spec"), "fresh")
    if own != given:
        print("FAIL: training seed.keras without --weights did not start from its weights")
        return 1
    if own == fresh:
        print("FAIL: the file's weights and a fresh init trained to the same weights")
        return 1
    print("train on a .keras starts from its weights: %d files identical to --weights" % len(own))
    return 0


if __name__ == "__main__":
    sys.exit(main())
