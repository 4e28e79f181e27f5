#!/usr/bin/env python3
"""bench_layers.py XO SRC - `xo bench --layers [--model F] [--batch N] --json`
(issue 13's table of the GEMM-shaped layers at batch 512). Exit 0 pass, 1 fail.

- Every conv1d / conv2d / dense layer of the model is listed, in order, with
  its GEMM's shape at the batch asked (M = batch x output positions, K the
  kernel terms of an output, N the filters/units), FLOPs 2 M K N, and wall
  and CPU medians of the forward call, the backward without dx (dW) and,
  except for the first layer (no dx in training), with dx: null exactly
  where the training step does not run that product.
- A Keras file's shapes (the golden cnn2d: two conv2d and a dense; the
  seed's default run is the same code on conv1d, left out for time).
- Bad input: an unreadable model, --model without --layers: exit 2, one line.
"""
import json
import os
import subprocess
import sys


def run(xo, *args, code=0):
    p = subprocess.run([xo, "bench", *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == code, (args, p.returncode, p.stderr[-2000:])
    return p


def layers(xo, *args):
    out = json.loads(run(xo, "--layers", "--repeat", "1", "--threads", "1", "--json",
                         *args).stdout)
    assert out["peak_gflops_1"] > 0 and out["threads"] == 1, out
    return out


def check(out, batch, want):
    assert out["batch"] == batch, out
    got = [(l["layer"], l["op"], l["m"], l["k"], l["n"]) for l in out["layers"]]
    assert got == want, (got, want)
    for i, l in enumerate(out["layers"]):
        assert l["flops"] == 2 * l["m"] * l["k"] * l["n"], l
        for key in ("fwd_us", "fwd_cpu_us", "dw_us", "dw_cpu_us"):
            assert l[key] is not None and l[key] > 0, (key, l)
        # the first layer's backward computes no dx in training
        for key in ("bwd_us", "bwd_cpu_us", "dx_us"):
            assert (l[key] is None) == (i == 0), (key, i, l)


def main():
    xo, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    cnn = os.path.join(src, "suites", "golden", "keras", "cnn2d.keras")
    # 12x12x1 -> conv2d 8 3x3 -> 10x10x8 -> ... -> dense 120 -> 10
    check(layers(xo, "--model", cnn, "--batch", "64"), 64,
          [("conv2d", "conv2d", 64 * 100, 9, 8),
           ("conv2d_1", "conv2d", 64 * 15, 48, 8),
           ("dense", "dense", 64, 120, 10)])
    for args in (("--layers", "--model", os.path.join(src, "no-such.model")),
                 ("--model", cnn), ("--layers", "--batch", "0")):
        p = run(xo, *args, code=2)
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("xo bench: "), (args, p.stderr)
    print("bench_layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
