#!/usr/bin/env python3
"""Compares xo's non-finite outputs with real Keras's, layer by layer.

Every layer kind and activation that compares or clips gets a tiny Keras
model; its inputs hold NaN, +Inf and -Inf at the first, a middle and the last
position of a window (or row), beside finite values. `xo predict` takes
finite inputs only, so the model makes the non-finite values itself, as a
user's network would: two bias-free Dense layers on [x, e_nan, e_pinf,
e_ninf] (x with 0 at the special spots, e_* 1e30 there and 0 elsewhere),
A = x + 1e10 (e_nan + e_pinf) and B = 1e10 (e_nan + e_ninf), overflow to
+Inf where they are not 0, and Subtract gives A - B: Inf - Inf = NaN, +Inf,
-Inf, or x exactly; a Reshape restores the layer's input shape. The model is saved as
.keras, run by Keras 3 (JAX backend, float32, the CPU) and by
`xo predict --device D` for each backend, and every element is compared by
kind: NaN where Keras has NaN, the same-signed Inf where Keras has an Inf,
and finite values within 1e-5 relative (the layers here are copies, clips
or one transcendental, far inside that). Each divergence is printed as one
line; the exit status is 1 if any was found, 0 if none.

A documentation tool (it needs Keras, a few seconds per model): run it in
the Keras venv after a change to the comparisons of pooling, merge or
activation kernels:
    KERAS_BACKEND=jax PY scripts/nonfinite_survey.py --xo build/cli/xo \
        [--devices ref,cpu,cl] [--only NAME]
PY the venv's python (`bash -c 'source ci/lib.sh; xo_keras_python' | tail -1`).
The losses are not here (`xo predict` computes no loss): suites/test_nonfinite.c
checks them against Keras's values.
"""
import argparse
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "jax")
import numpy as np  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402

NAN, INF = np.float32("nan"), np.float32("inf")
SPECIALS = (NAN, INF, -INF)


def windows_1d(n_win, size, ch):
    """[batch][n_win * size][ch]: sample s puts SPECIALS[s % 3] at window
    position (s // 3) % 3 (first, middle, last) of every window, channel 0;
    channel 1 stays finite."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-2, 2, size=(9, n_win * size, ch)).astype(np.float32)
    for s in range(9):
        at = [0, size // 2, size - 1][s // 3]
        for w in range(n_win):
            x[s, w * size + at, 0] = SPECIALS[s % 3]
    return x


def windows_2d(size):
    """[9][2 * size][2 * size][2]: as windows_1d on the flattened window,
    positions first, middle and last in row-major order."""
    rng = np.random.default_rng(8)
    x = rng.uniform(-2, 2, size=(9, 2 * size, 2 * size, 2)).astype(np.float32)
    for s in range(9):
        at = [0, (size * size) // 2, size * size - 1][s // 3]
        r, c = divmod(at, size)
        for wr in range(2):
            for wc in range(2):
                x[s, wr * size + r, wc * size + c, 0] = SPECIALS[s % 3]
    return x


def row_values():
    """[6][8]: rows of finite values with NaN, Inf, -Inf at chosen spots."""
    rng = np.random.default_rng(9)
    x = rng.uniform(-8, 8, size=(6, 8)).astype(np.float32)
    x[0, 0], x[1, 3], x[2, 7] = NAN, INF, -INF
    x[3, 1], x[3, 5] = INF, -INF
    x[4, :] = [NAN, INF, -INF, 0, 6, 7, -1, 1e-40]
    return x


def make_specials(inp, shape):
    """The generator above on a flat input of 4 n features: the tensor of
    the given shape with x's values and the chosen specials."""
    n = int(np.prod(shape))
    eye, zero = np.eye(n, dtype=np.float32), np.zeros((n, n), np.float32)
    big = np.float32(1e10) * eye
    a = layers.Dense(n, use_bias=False)
    b = layers.Dense(n, use_bias=False)
    ta, tb = a(inp), b(inp)
    a.set_weights([np.concatenate([eye, big, big, zero])])
    b.set_weights([np.concatenate([zero, big, zero, big])])
    return layers.Reshape(shape)(layers.Subtract()([ta, tb]))


def encode(x):
    """x (specials and all) -> [batch][4 n] finite inputs for make_specials."""
    f = x.reshape(x.shape[0], -1)
    nan, pinf, ninf = np.isnan(f), np.isposinf(f), np.isneginf(f)
    e = np.float32(1e30)
    fin = np.where(nan | pinf | ninf, np.float32(0), f)
    return np.concatenate([fin, nan * e, pinf * e, ninf * e], axis=1).astype(np.float32)


def seq(shape, *layer_list):
    def build():
        inp = keras.Input(shape=(4 * int(np.prod(shape)),))
        h = make_specials(inp, shape)
        for layer in layer_list:
            h = layer(h)
        return keras.Model(inp, h)
    return build


def merge(cls):
    def build():
        a, b = keras.Input(shape=(24,)), keras.Input(shape=(24,))
        return keras.Model([a, b], cls()([make_specials(a, (6,)), make_specials(b, (6,))]))
    return build


def merge_inputs():
    """Every pairing of NaN, Inf, -Inf, 1, -3, 0 in a and b, both orders."""
    vals = [NAN, INF, -INF, np.float32(1), np.float32(-3), np.float32(0)]
    a = np.array([[u] * 6 for u in vals], np.float32)
    b = np.array([vals for _ in vals], np.float32)
    return [a, b]


CASES = {
    "max_pooling1d": lambda: (seq((9, 2), layers.MaxPooling1D(3)), [windows_1d(3, 3, 2)]),
    "max_pooling1d_same": lambda: (
        seq((9, 2), layers.MaxPooling1D(2, strides=1, padding="same")), [windows_1d(3, 3, 2)]),
    "global_max_pooling1d": lambda: (seq((3, 2), layers.GlobalMaxPooling1D()),
                                     [windows_1d(1, 3, 2)]),
    "max_pooling2d": lambda: (seq((6, 6, 2), layers.MaxPooling2D(3)), [windows_2d(3)]),
    "global_max_pooling2d": lambda: (seq((3, 3, 2), layers.GlobalMaxPooling2D()),
                                     [windows_2d(3)[:, :3, :3, :]]),
    "maximum": lambda: (merge(layers.Maximum), merge_inputs()),
    "minimum": lambda: (merge(layers.Minimum), merge_inputs()),
}
for act in ("relu", "relu6", "hard_sigmoid", "sigmoid", "tanh", "elu", "gelu", "softplus",
            "silu", "softmax", "log_softmax"):
    CASES["act_" + act] = (lambda a: lambda: (seq((8,), layers.Activation(a)),
                                              [row_values()]))(act)
for i, kw in enumerate(({"max_value": 6.0}, {"threshold": 1.0}, {"negative_slope": 0.1},
                        {"max_value": 6.0, "threshold": 1.0, "negative_slope": 0.1})):
    CASES["relu_layer_%d" % i] = (lambda k: lambda: (seq((8,), layers.ReLU(**k)),
                                                     [row_values()]))(kw)


def fused_conv_pool():
    """The generator as two kernel_size-1 Conv1D layers on channels [x,
    e_nan, e_pinf, e_ninf] (per step: a Sequential the fused paths run),
    then MaxPooling1D(3) and Flatten."""
    def build():
        c1 = layers.Conv1D(2, 1, use_bias=False)
        c2 = layers.Conv1D(1, 1, use_bias=False)
        m = keras.Sequential([keras.Input(shape=(9, 4)), c1, c2, layers.MaxPooling1D(3),
                              layers.Flatten()])
        big = np.float32(1e10)
        c1.set_weights([np.array([[[1, 0], [big, big], [big, 0], [0, big]]], np.float32)])
        c2.set_weights([np.array([[[1], [-1]]], np.float32)])
        return m
    x = windows_1d(3, 3, 1)[:, :, 0]
    nan, pinf, ninf = np.isnan(x), np.isposinf(x), np.isneginf(x)
    e = np.float32(1e30)
    fin = np.where(nan | pinf | ninf, np.float32(0), x)
    return build, [np.stack([fin, nan * e, pinf * e, ninf * e], axis=2).astype(np.float32)]


CASES["fused_conv_pool"] = fused_conv_pool


def dense_softmax_large():
    """Dense(softmax) with logits from large and overflowing (past float32)
    to small: x [a, b] by [[1e10, 1, -1e10], [1, 1, 1]]."""
    def build():
        d = layers.Dense(3, activation="softmax", use_bias=False)
        m = keras.Sequential([keras.Input(shape=(2,)), d])
        d.set_weights([np.array([[1e10, 1, -1e10], [1, 1, 1]], np.float32)])
        return m
    return build, [np.array([[1e30, 1], [1e20, 2], [1, 1], [-1e30, 0], [1e28, 3]], np.float32)]


CASES["dense_softmax_large"] = dense_softmax_large
CASES["layer_normalization"] = lambda: (seq((8,), layers.LayerNormalization()), [row_values()])
CASES["batch_normalization"] = lambda: (seq((8,), layers.BatchNormalization()), [row_values()])
CASES["dense_softmax"] = lambda: (seq((8,), layers.Dense(3, activation="softmax")),
                                  [row_values()])


def kind_diff(want, got):
    """Indices where got differs from want in kind or beyond 1e-5 relative."""
    bad = []
    for i, (w, g) in enumerate(zip(want.ravel(), got.ravel())):
        if np.isnan(w) or np.isnan(g):
            ok = np.isnan(w) and np.isnan(g)
        elif np.isinf(w) or np.isinf(g):
            ok = w == g
        else:
            ok = abs(w - g) <= 1e-5 * max(1.0, abs(w))
        if not ok:
            bad.append(i)
    return bad


def run_case(name, xo, devices, tmp):
    build, xs = CASES[name]()
    model = build()
    if name not in ("fused_conv_pool", "dense_softmax_large"):
        xs = [encode(x) for x in xs]
    want = np.asarray(model.predict(xs if len(xs) > 1 else xs[0], verbose=0))
    path = os.path.join(tmp, name + ".keras")
    model.save(path)
    cmd_in = []
    for i, x in enumerate(xs):
        p = os.path.join(tmp, "%s.x%d.npy" % (name, i))
        np.save(p, x)
        cmd_in += ["--input", p]
    found = 0
    for dev in devices:
        out = os.path.join(tmp, "%s.%s.npy" % (name, dev))
        env = dict(os.environ)
        env["XO_FUSE"] = "0" if name != "fused_conv_pool" else "1" if dev == "ref" else "require"
        r = subprocess.run([xo, "predict", "--model", path, "--output", out, "--device", dev]
                           + cmd_in, capture_output=True, text=True, env=env)
        if r.returncode and "is not supported" in r.stderr:
            print("%-22s %-4s refused (as documented): %s" % (name, dev,
                                                             r.stderr.strip().split(": ")[-1]))
            continue
        if r.returncode:
            print("%-22s %-4s xo failed: %s" % (name, dev, r.stderr.strip()[:200]))
            found += 1
            continue
        got = np.load(out)
        bad = kind_diff(want, got)
        if bad:
            found += 1
            i = bad[0]
            print("%-22s %-4s %d of %d differ; first at %s: keras %s, xo %s" % (
                name, dev, len(bad), want.size,
                tuple(int(k) for k in np.unravel_index(i, want.shape)),
                want.ravel()[i], got.ravel()[i]))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xo", default="build/cli/xo")
    ap.add_argument("--devices", default="ref,cpu,cl")
    ap.add_argument("--only")
    a = ap.parse_args()
    names = [a.only] if a.only else list(CASES)
    for n in names:
        if n not in CASES:
            print("nonfinite_survey: unknown case %s" % n, file=sys.stderr)
            return 2
    found = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            found += run_case(n, a.xo, a.devices.split(","), tmp)
    print("%d divergence(s) in %d case(s)" % (found, len(names)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
