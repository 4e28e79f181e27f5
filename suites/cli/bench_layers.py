#!/usr/bin/env python3
"""bench_layers.py XO SRC - `xo bench --layers [--model F] [--batch N] --json`
(the table of the GEMM-shaped layers at batch 512). Exit 0 pass, 1 fail.

- Every conv1d / conv2d / dense / simple_rnn / lstm / gru layer of the
  model is listed (a Bidirectional as its two directions, a separable
  convolution as its depthwise and pointwise steps), in order, with its GEMM's shape at the batch asked (M =
  batch x output positions, K the kernel terms of an output, N the
  filters/units; recurrent: M = batch x steps, K = ch + units, N = gates x
  units), FLOPs 2 M K N, the backward's dw_flops (2 M N K_dw, K_dw = K for
  a GEMM layer, ch + 2 units for a recurrent one: dh' goes back through
  time) and dx_flops (K_dx = K, recurrent ch), and wall and CPU medians of
  the forward call, the backward without dx (dW) and, except for the first
  layer with weights (no dx in training), with dx: null exactly where the
  training step does not run that product; a recurrent layer's forward
  also in its inference form (no ws, what predict runs): infer_us and
  infer_cpu_us, null for the other layers.
- Keras files' shapes (the golden cnn2d: two conv2d and a dense; lstm:
  an embedding first, so the lstm has a dx; gru: two grus, the first
  without dx; simple_rnn is the same code with one gate, and the seed's
  default run the same code on conv1d, left out for time: each run
  measures the FMA peaks, ~2 s).
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


RECURRENT = ("simple_rnn", "lstm", "gru")


def check(out, batch, want, no_dx=(0,)):
    """want: (layer, op, M, K, N, K_dw, K_dx) in order; no_dx: the indices
    of the layers whose backward computes no dx."""
    assert out["batch"] == batch, out
    got = [(l["layer"], l["op"], l["m"], l["k"], l["n"]) for l in out["layers"]]
    assert got == [w[:5] for w in want], (got, want)
    for i, (l, w) in enumerate(zip(out["layers"], want)):
        assert l["flops"] == 2 * l["m"] * l["k"] * l["n"], l
        assert l["dw_flops"] == 2 * l["m"] * w[5] * l["n"], (l, w)
        assert l["dx_flops"] == 2 * l["m"] * w[6] * l["n"], (l, w)
        for key in ("fwd_us", "fwd_cpu_us", "dw_us", "dw_cpu_us"):
            assert l[key] is not None and l[key] > 0, (key, l)
        for key in ("bwd_us", "bwd_cpu_us", "dx_us"):
            assert (l[key] is None) == (i in no_dx), (key, i, l)
        for key in ("infer_us", "infer_cpu_us"):
            if l["op"] in RECURRENT:
                assert l[key] is not None and l[key] > 0, (key, l)
            else:
                assert l[key] is None, (key, l)


def main():
    xo, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    cnn = os.path.join(src, "suites", "golden", "keras", "cnn2d.keras")
    # 12x12x1 -> conv2d 8 3x3 -> 10x10x8 -> ... -> dense 120 -> 10
    check(layers(xo, "--model", cnn, "--batch", "64"), 64,
          [("conv2d", "conv2d", 64 * 100, 9, 8, 9, 9),
           ("conv2d_1", "conv2d", 64 * 15, 48, 8, 48, 48),
           ("dense", "dense", 64, 120, 10, 120, 120)])
    keras = os.path.join(src, "suites", "golden", "keras")
    # embedding 12 ids -> [12][8] -> lstm 16 -> dense 5: the lstm has a dx
    check(layers(xo, "--model", os.path.join(keras, "lstm.keras"), "--batch", "8"), 8,
          [("lstm", "lstm", 8 * 12, 8 + 16, 4 * 16, 8 + 32, 8),
           ("dense", "dense", 8, 16, 5, 16, 16)], no_dx=())
    # [12][3] -> gru 12 (sequences) -> gru 8 -> dense 5
    check(layers(xo, "--model", os.path.join(keras, "gru.keras"), "--batch", "4"), 4,
          [("gru", "gru", 4 * 12, 3 + 12, 3 * 12, 3 + 24, 3),
           ("gru_1", "gru", 4 * 12, 12 + 8, 3 * 8, 12 + 16, 12),
           ("dense_1", "dense", 4, 8, 5, 8, 8)])
    # a Bidirectional's two directions, each its recurrent op's GEMM (the
    # backward one as the forward one): [6][3] -> Bidirectional(GRU 4,
    # concat) -> Bidirectional(LSTM 3, sum) -> Bidirectional(LSTM 5, ave)
    # -> dense 3; the first layer's directions have no dx
    bi = []
    for name, op, ch, u, g in (("bidirectional", "gru", 3, 4, 3),
                               ("bidirectional_1", "lstm", 8, 3, 4),
                               ("bidirectional_2", "lstm", 3, 5, 4)):
        for d in ("forward", "backward"):
            bi.append((f"{name}/{d}", op, 4 * 6, ch + u, g * u, ch + 2 * u, ch))
    check(layers(xo, "--model", os.path.join(keras, "bidir.keras"), "--batch", "4"), 4,
          bi + [("dense", "dense", 4, 5, 3, 5, 5)], no_dx=(0, 1))
    # a separable convolution's depthwise step (K = taps, N = ch x
    # depth_multiplier) and pointwise 1x1 conv2d (K = ch x dm, N = filters):
    # [11][2] -> SeparableConv1D(5, 3, dm 4) -> [9][5] -> SeparableConv1D(3,
    # 2, strides 2) -> [4][3] -> flatten -> dense 3
    check(layers(xo, "--model", os.path.join(keras, "sepconv1d.keras"), "--batch", "4"), 4,
          [("separable_conv1d/depthwise", "depthwise_conv2d", 4 * 9, 3, 8, 3, 3),
           ("separable_conv1d/pointwise", "conv2d", 4 * 9, 8, 5, 8, 8),
           ("separable_conv1d_1/depthwise", "depthwise_conv2d", 4 * 4, 2, 5, 2, 2),
           ("separable_conv1d_1/pointwise", "conv2d", 4 * 4, 5, 3, 5, 5),
           ("dense", "dense", 4, 12, 3, 12, 12)])
    for args in (("--layers", "--model", os.path.join(src, "no-such.model")),
                 ("--model", cnn), ("--layers", "--batch", "0")):
        p = run(xo, *args, code=2)
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("xo bench: "), (args, p.stderr)
    print("bench_layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
