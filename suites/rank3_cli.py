#!/usr/bin/env python3
"""xo train and predict take x as (n, H, W, C) for an 'input H W C' model
(issue 13 item 2), and refuse a 4-D x whose sample size differs, exit 2."""
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
print("ok")
