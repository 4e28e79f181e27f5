#!/usr/bin/env python3
"""xo train and predict take x as (n, H, W, C) for an 'input H W C' model as
Keras's channels-last Conv2D does, and refuse a 4-D x whose sample size
differs, exit 2; xo summary prints a Conv2D's shapes and parameter counts as
Keras does."""
import os
import subprocess
import sys

import numpy as np

xo, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
spec = os.path.join(work, "r3.model")
with open(spec, "w") as f:
    f.write("input 6 5 2\ndropout rate=0.25\nactivation activation=relu\nflatten\n"
            "dense units=3 activation=softmax\n")
rng = np.random.default_rng(3)
x = rng.standard_normal((20, 6, 5, 2)).astype(np.float32)
y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 20)]
np.save(os.path.join(work, "x.npy"), x)
np.save(os.path.join(work, "y.npy"), y)
np.save(os.path.join(work, "bad.npy"), x.reshape(20, 5, 6, 2)[:, :, :5, :])


def run(*args):
    r = subprocess.run([xo, *args], capture_output=True, text=True, cwd=work)
    print("$ xo", " ".join(args), "->", r.returncode, r.stderr.strip())
    return r


w = os.path.join(work, "w.keras")
assert run("train", "--model", spec, "--x", "x.npy", "--y", "y.npy", "--save", w,
           "--epochs", "1", "--device", "cpu").returncode == 0
assert run("predict", "--model", spec, "--weights", w, "--input", "x.npy", "--output",
           "p.npy", "--device", "cpu").returncode == 0
p = np.load(os.path.join(work, "p.npy"))
assert p.shape == (20, 3) and np.all(np.abs(p.sum(axis=1) - 1) < 1e-5)
r = run("predict", "--model", spec, "--weights", w, "--input", "bad.npy", "--output",
        "q.npy", "--device", "cpu")
assert r.returncode == 2 and "does not match the model input (60 values" in r.stderr
# xo summary of a Conv2D prints Keras's shapes and counts:
# Conv2D(8, 3) on 28x28x1 is (None, 26, 26, 8) with 3*3*1*8 + 8 = 80 params
with open(os.path.join(work, "c2d.model"), "w") as f:
    f.write("input 28 28 1\nconv2d filters=8 kernel_size=3 activation=relu\n"
            "conv2d filters=4 kernel_size=3 kernel_w=2 strides=2 strides_w=1 padding=same\n"
            "flatten\ndense units=3 activation=softmax\n")
r = subprocess.run([xo, "summary", "--model", "c2d.model"], capture_output=True, text=True,
                   cwd=work)
print(r.stdout)
rows = [l.split() for l in r.stdout.splitlines() if "(Conv2D)" in l]
assert r.returncode == 0 and len(rows) == 2, r.stderr
assert " ".join(rows[0][2:]) == "(None, 26, 26, 8) 80", rows[0]
# same, strides (2, 1): ceil(26 / 2) = 13 rows, 26 columns; 3*2*8*4 + 4 = 196
assert " ".join(rows[1][2:]) == "(None, 13, 26, 4) 196", rows[1]
# Dense on a [T][F] sample acts on the last axis, as Keras's: xo summary
# prints (None, 6, 3) with 4*3 + 3 = 15 params, and xo predict writes
# (n, 6, 3), each row x[t] W + b (4 products and a bias: 5 roundings of at
# most 2^-24 relative each)
with open(os.path.join(work, "d3.model"), "w") as f:
    f.write("input 6 4\ndense units=3 name=d\n")
r = subprocess.run([xo, "summary", "--model", "d3.model"], capture_output=True, text=True,
                   cwd=work)
rows = [l.split() for l in r.stdout.splitlines() if "(Dense)" in l]
assert r.returncode == 0 and len(rows) == 1, r.stderr
assert " ".join(rows[0][2:]) == "(None, 6, 3) 15", rows[0]
os.makedirs(os.path.join(work, "d3w"), exist_ok=True)
k = (np.arange(12, dtype=np.float32) / 8 - 0.75).reshape(4, 3)
b = np.array([0.5, -1.0, 2.0], dtype=np.float32)
np.save(os.path.join(work, "d3w", "d.kernel.npy"), k)
np.save(os.path.join(work, "d3w", "d.bias.npy"), b)
x3 = np.random.default_rng(3).uniform(-1, 1, (5, 6, 4)).astype(np.float32)
np.save(os.path.join(work, "x3.npy"), x3)
for dev in ("ref", "cpu"):
    r = run("predict", "--model", "d3.model", "--weights", "d3w", "--input", "x3.npy",
            "--output", "p3.npy", "--device", dev)
    assert r.returncode == 0, r.stderr
    p3 = np.load(os.path.join(work, "p3.npy"))
    assert p3.shape == (5, 6, 3), p3.shape
    want = x3.astype(np.float64) @ k.astype(np.float64) + b
    mag = np.abs(x3.astype(np.float64)) @ np.abs(k.astype(np.float64)) + np.abs(b)
    assert (np.abs(p3 - want) <= 5 * 2.0 ** -24 * mag).all(), (dev, np.abs(p3 - want).max())
print("ok")
