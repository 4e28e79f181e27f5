#!/usr/bin/env python3
"""keras_load.py XO FIXTURES WORKDIR [PART,...] - the files xo writes, loaded by Keras 3.

xo trains the seed, bn, cnn2d, cnn_bn, ln, ln2d, d3, d3_2d, td (and more) .keras fixtures for one epoch and saves it as .keras and
.weights.h5 (`xo train --save`); Keras loads them unchanged
(keras.saving.load_model, model.load_weights) and its predictions must match
xo's (`xo predict --device ref`) within 1e-5, the interchange target (the
bound of docs/model.md, 8 u K_path = 7.6e-5 for the seed, is looser).
A spec with BatchNormalization scale=False, center=False and both, trained
from xo's fresh init, loads with Keras's variables in Keras's order.

PART,... runs those parts alone (the fixtures by name, `compiled`,
`bn_fresh`, `multi` (a model of three inputs), `name_clash` (layers named
like Keras's InputLayers), `mha_mask` (MultiHeadAttention's attention_mask
input), `mha_bool` (a bool attention_mask Input), `mha_pad_mask` (that mask
beside Embedding(mask_zero=True) ids, the second input); ctest runs them in three
groups so no test takes minutes);
without it, every part. An unknown part name is an error (exit 2).

Runs under a Python with Keras: $XO_KERAS_PYTHON, else /tmp/kvenv/bin/python.
ci/test.sh and ci/nightly.sh make a venv for it at pinned versions (ci/lib.sh
xo_keras_python) and pass it in XO_KERAS_PYTHON. Without one it exits 77,
which ctest reports as skipped, and says why; CI allows no such skip
(ci/skips.tsv).
"""
import os
import subprocess
import sys


def main():
    xo, fixtures, work = sys.argv[1:4]
    fixture_parts = (("seed", (29, 1), 12), ("bn", (13, 3), 4),
                     ("lstm", (12,), 5), ("gru", (12, 3), 5),
                     ("cnn2d", (12, 12, 1), 10), ("cnn_bn", (10, 9, 2), 4),
                     ("acts2", (29, 1), 6),
                     ("acts3", (6, 6, 2), 3),
                     ("pad1d", (11, 2), 4), ("resize1d", (9, 2), 5),
                     ("resize2d", (6, 5, 2), 4),
                     ("ln", (7, 5), 4), ("ln2d", (6, 5, 2), 3),
                     ("d3", (9, 4), 3), ("d3_2d", (5, 4, 2), 4),
                     ("permute", (7, 3), 4), ("permute2d", (5, 4, 2), 3),
                     ("repeat", (5,), 4), ("reshape", (4, 6), 3),
                     ("graph", (8, 3), 3),
                     ("dwconv", (6, 5, 3), 4), ("dwconv1d", (9, 4), 3),
                     ("sepconv", (6, 5, 3), 3), ("sepconv1d", (9, 4), 3),
                     ("td", (4, 9, 3), 3), ("bidir", (6, 3), 3),
                     ("convt", (3, 3, 2), 3), ("convt1d", (5, 3), 3), ("mha", (6, 4), 3),
                     ("mask", (8,), 3), ("mask_res", (8,), 3),
                     ("mask_rnn", (8,), 3), ("mask_bidir", (8,), 3),
                     ("msk_rnn", (8, 3), 3), ("msk_bidir", (8, 3), 3),
                     ("mha_pad", (8,), 3), ("mask_cat", (8,), 3), ("mask_cat1", (8,), 3),
                     ("mask_merge", (8,), 3),
                     ("rescale", (7, 6, 3), 3), ("norm_mlp", (6,), 3),
                     ("norm_conv", (10, 3), 3), ("norm_given", (5,), 3), ("leaky", (12, 3), 3),
                     ("elu", (12, 3), 3), ("elu_neg", (12, 3), 3), ("keepdims", (10, 3), 3),
                     ("keepdims2d", (7, 6, 3), 3), ("mask_kd", (8,), 3),
                     ("norm_inv", (6,), 1))
    names = [n for n, _, _ in fixture_parts] + ["compiled", "bn_fresh", "multi", "name_clash",
                                                 "mha_mask", "mha_bool", "mha_pad_mask",
                                                 "compiled_logits"]
    parts = sys.argv[4].split(",") if len(sys.argv) > 4 else names
    bad = [p for p in parts if p not in names]
    if bad or not parts:
        print("keras_load.py: unknown part %s (parts: %s)" % (",".join(bad), ", ".join(names)),
              file=sys.stderr)
        return 2
    if os.environ.get("XO_KERAS_INNER") != "1":
        py = os.environ.get("XO_KERAS_PYTHON") or "/tmp/kvenv/bin/python"
        if not os.access(py, os.X_OK):
            print("SKIP: no Python with Keras (set XO_KERAS_PYTHON; CI's venv: "
                  "export XO_KERAS_PYTHON=$(bash -c '. ci/lib.sh && xo_keras_python'))")
            return 77
        env = dict(os.environ, XO_KERAS_INNER="1", KERAS_BACKEND="jax")
        # JAX's persistent compilation cache, in the venv (whose folder name
        # carries the pinned versions): building a loaded model's variables
        # compiles an initializer per shape, 0.1-0.2 s each, two thirds of a
        # part's time; compiled once, they are read back on later runs. The
        # cache is keyed by the computation, the options and the JAX version,
        # so a hit is the executable a compile would make; an entry that
        # cannot be read (another test writing it) is compiled again, with a
        # warning.
        venv = os.path.dirname(os.path.dirname(os.path.abspath(py)))
        if "JAX_COMPILATION_CACHE_DIR" not in env and os.access(venv, os.W_OK):
            env["JAX_COMPILATION_CACHE_DIR"] = os.path.join(venv, "jax-cache")
            env.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
            env.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
        return subprocess.call([py, __file__] + sys.argv[1:], env=env)
    try:
        import keras
        import numpy as np
    except ImportError as e:
        print("SKIP: this Python has no Keras: %s" % e)
        return 77
    os.makedirs(work, exist_ok=True)
    ok = True
    # the seed, and bn.keras: BatchNormalization's gamma, beta and moving
    # statistics (trained: the moving statistics move too) in Keras's order
    # lstm.keras: int32 ids through an Embedding, an LSTM's
    # kernel, recurrent_kernel and bias in the cell's vars; gru.keras: two
    # GRUs (reset_after's [2, 3u] bias, go_backwards); cnn2d.keras and
    # cnn_bn.keras: Conv2D kernels [kh][kw][in][filters], (h, w) pairs;
    # acts2: relu6, hard_sigmoid, silu (Keras writes it so), log_softmax as
    # Dense activations and Activation layers; acts3: the ReLU (max_value
    # None and 6) and Softmax layer classes
    # pad1d.keras: ZeroPadding1D's padding [begin, end]; resize1d.keras:
    # ZeroPadding1D, UpSampling1D's size, Cropping1D's cropping; resize2d.keras:
    # their 2-D forms (((t, b), (l, r)) margins, (h, w) size, interpolation)
    # ln.keras, ln2d.keras: LayerNormalization's gamma and beta (each
    # alone where center or scale is off) in Keras's order
    # d3.keras, d3_2d.keras: Dense on [T][F] and [h][w][ch] inputs (the
    # kernel [F][units] whatever the rank)
    # td.keras: TimeDistributed's wrapped Conv1D / Dense (its config nested
    # under layer, its variables in layer/vars)
    # bidir.keras: Bidirectional's forward and backward RNNs (config under
    # layer and backward_layer, variables in forward_layer/cell/vars and
    # backward_layer/cell/vars)
    # mha.keras: MultiHeadAttention (its variables in query_dense/vars ...,
    # use_causal_mask in the node's kwargs, the shapes_dict build_config)
    # keepdims, keepdims2d, mask_kd: the global poolings' keepdims=True
    for name, shape, classes in fixture_parts:
        if name in parts:
            ok = one_model(xo, fixtures, os.path.join(work, name), name, shape, classes) and ok
    if "compiled" in parts:
        ok = compiled(xo, os.path.join(work, "compiled")) and ok
    if "compiled_logits" in parts:
        ok = compiled_logits(xo, os.path.join(work, "compiled_logits")) and ok
    if "bn_fresh" in parts:
        ok = bn_fresh(xo, os.path.join(work, "bn_fresh")) and ok
    if "multi" in parts:
        ok = multi(xo, fixtures, os.path.join(work, "multi")) and ok
    if "name_clash" in parts:
        ok = name_clash(xo, os.path.join(work, "name_clash")) and ok
    if "mha_mask" in parts:
        ok = mha_mask(xo, fixtures, os.path.join(work, "mha_mask")) and ok
    if "mha_bool" in parts:
        ok = mha_mask(xo, fixtures, os.path.join(work, "mha_bool"), "mha_bool",
                      ("q", "v", "keep")) and ok
    if "mha_pad_mask" in parts:
        ok = mha_mask(xo, fixtures, os.path.join(work, "mha_pad_mask"), "mha_pad_mask",
                      ("keep", "ids")) and ok
    return 0 if ok else 1


def name_clash(xo, work):
    """Specs whose layers take Keras's InputLayer names (input_layer,
    input_layer_1), Sequential and Functional: the .keras xo saves names its
    InputLayer with the next free name, so Keras loads it (two layers of one
    name it refuses) and predicts what xo predicts within 1e-5."""
    import keras
    import numpy as np
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(13)
    x = rng.uniform(-1, 1, (8, 4)).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[rng.integers(0, 2, 8)]
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    specs = {"seq": "input 4\ndense units=3 name=input_layer\n"
                    "dense units=2 name=input_layer_1 activation=softmax\n",
             "graph": "input 4 name=foo\ndense units=4 name=input_layer\n"
                      "add inputs=input_layer,foo\ndense units=2 activation=softmax\n"}
    ok = True
    for tag, text in specs.items():
        spec, out = (os.path.join(work, tag + ext) for ext in (".model", ".keras"))
        p = os.path.join(work, "p.npy")
        with open(spec, "w") as f:
            f.write(text)
        subprocess.check_call([xo, "train", "--model", spec, "--x", os.path.join(work, "x.npy"),
                               "--y", os.path.join(work, "y.npy"), "--save", out, "--epochs",
                               "1", "--batch-size", "8", "--device", "ref", "--seed", "3"],
                              stdout=subprocess.DEVNULL)
        subprocess.check_call([xo, "predict", "--model", out, "--input",
                               os.path.join(work, "x.npy"), "--output", p, "--device", "ref"],
                              stdout=subprocess.DEVNULL)
        m = keras.saving.load_model(out)
        err = float(np.abs(m.predict(x, verbose=0) - np.load(p)).max())
        print("name_clash %s: Keras's layers %s, max |Keras - xo| %.3g (tol 1e-5)"
              % (tag, [layer.name for layer in m.layers], err))
        ok = ok and err <= 1e-5
    return ok


def bn_fresh(xo, work):
    """BatchNormalization with scale=False, center=False and both, from a
    spec (xo's fresh init, then one epoch): Keras loads xo's .keras with the
    layer's variables in its own order and count (2 + scale + center) and
    predicts what xo predicts within 1e-5."""
    import keras
    import numpy as np
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, (24, 6, 3)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 24)]
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    ok = True
    for center, scale in ((1, 0), (0, 1), (0, 0)):
        tag = "center=%d scale=%d" % (center, scale)
        spec = os.path.join(work, "bn_c%d_s%d.model" % (center, scale))
        with open(spec, "w") as f:
            f.write("input 6 3\nconv1d filters=3 kernel_size=2 use_bias=0\n"
                    "batch_normalization center=%d scale=%d\nflatten\n"
                    "dense units=4 activation=softmax\n" % (center, scale))
        out = os.path.join(work, "bn_c%d_s%d.keras" % (center, scale))
        p = os.path.join(work, "p.npy")
        subprocess.check_call([xo, "train", "--model", spec, "--x", os.path.join(work, "x.npy"),
                               "--y", os.path.join(work, "y.npy"), "--save", out, "--epochs",
                               "1", "--batch-size", "8", "--device", "ref", "--seed", "3"],
                              stdout=subprocess.DEVNULL)
        subprocess.check_call([xo, "predict", "--model", out, "--input",
                               os.path.join(work, "x.npy"), "--output", p, "--device", "ref"],
                              stdout=subprocess.DEVNULL)
        m = keras.saving.load_model(out)
        bn = m.layers[1]
        names = [v.path.split("/")[-1] for v in bn.weights]
        want = (["gamma"] if scale else []) + (["beta"] if center else []) + \
            ["moving_mean", "moving_variance"]
        err = float(np.abs(m.predict(x, verbose=0) - np.load(p)).max())
        print("bn %s: Keras's variables %s (want %s), max |Keras - xo| %.3g (tol 1e-5)"
              % (tag, names, want, err))
        ok = ok and names == want and bool(bn.center) == bool(center) and \
            bool(bn.scale) == bool(scale) and err <= 1e-5
    return ok


def compiled(xo, work):
    """A spec with a compile line (binary_crossentropy + SGD momentum
    nesterov), trained by xo and saved as .keras: Keras's
    load_model(compile=True) compiles the same loss, optimizer and metric
    from its compile_config and trains on."""
    import keras
    import numpy as np
    os.makedirs(work, exist_ok=True)
    spec = os.path.join(work, "m.model")
    with open(spec, "w") as f:
        f.write("input 6\ndense units=5 activation=relu\ndense units=2 activation=sigmoid\n"
                "compile loss=binary_crossentropy optimizer=sgd learning_rate=0.05 "
                "momentum=0.5 nesterov=True metrics=accuracy\n")
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (16, 6)).astype(np.float32)
    y = rng.integers(0, 2, (16, 2)).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    out = os.path.join(work, "trained.keras")
    subprocess.check_call([xo, "train", "--model", spec, "--x", os.path.join(work, "x.npy"),
                           "--y", os.path.join(work, "y.npy"), "--save", out, "--epochs", "1",
                           "--batch-size", "16", "--device", "ref", "--seed", "3"],
                          stdout=subprocess.DEVNULL)
    m = keras.saving.load_model(out, compile=True)
    opt = m.optimizer
    got = (type(opt).__name__, round(float(opt.learning_rate), 6), round(float(opt.momentum), 6),
           bool(opt.nesterov), m.loss)
    want = ("SGD", 0.05, 0.5, True, "binary_crossentropy")
    print("compiled: Keras compiled %s (want %s)" % (got, want))
    ok = got == want
    h = m.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    print("compiled: Keras trains on: %s" % h.history)
    ok = ok and "accuracy" in h.history and np.isfinite(h.history["loss"][0])
    return ok


def compiled_logits(xo, work):
    """The three cross-entropies compiled with from_logits=True (a linear
    last layer), trained one epoch by xo and saved as .keras: Keras's
    load_model(compile=True) compiles the same Loss (get_config equal to a
    fresh Loss(from_logits=True)'s but for the name) and trains on; xo
    reads its own file back with from_logits (xo import's compile line)."""
    import keras
    import numpy as np
    ok = True
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, (16, 6)).astype(np.float32)
    for loss, cls, y in (
            ("categorical_crossentropy", keras.losses.CategoricalCrossentropy,
             np.eye(3, dtype=np.float32)[rng.integers(0, 3, 16)]),
            ("sparse_categorical_crossentropy", keras.losses.SparseCategoricalCrossentropy,
             rng.integers(0, 3, 16).astype(np.float32)),
            ("binary_crossentropy", keras.losses.BinaryCrossentropy,
             rng.integers(0, 2, (16, 3)).astype(np.float32))):
        d = os.path.join(work, loss)
        os.makedirs(d, exist_ok=True)
        spec = os.path.join(d, "m.model")
        with open(spec, "w") as f:
            f.write("input 6\ndense units=5 activation=tanh\ndense units=3\n"
                    "compile loss=%s from_logits=True optimizer=adam\n" % loss)
        np.save(os.path.join(d, "x.npy"), x)
        np.save(os.path.join(d, "y.npy"), y)
        out = os.path.join(d, "trained.keras")
        subprocess.check_call([xo, "train", "--model", spec, "--x", os.path.join(d, "x.npy"),
                               "--y", os.path.join(d, "y.npy"), "--save", out, "--epochs", "1",
                               "--batch-size", "16", "--device", "ref", "--seed", "3"],
                              stdout=subprocess.DEVNULL)
        m = keras.saving.load_model(out, compile=True)
        got = m.loss.get_config() if hasattr(m.loss, "get_config") else m.loss
        want = cls(from_logits=True).get_config()
        print("compiled_logits: Keras compiled %s (want %s)" % (got, want))
        ok = ok and isinstance(m.loss, cls) and got == want
        h = m.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
        ok = ok and np.isfinite(h.history["loss"][0])
        imp = os.path.join(d, "imported")
        subprocess.check_call([xo, "import", out, "--out", imp], stdout=subprocess.DEVNULL)
        line = [ln for ln in open(os.path.join(imp, "model.spec")) if ln.startswith("compile")]
        print("compiled_logits: xo reads back %s" % line)
        ok = ok and len(line) == 1 and ("loss=%s from_logits=True " % loss) in line[0]
    return ok


def multi(xo, fixtures, work):
    """multi.keras (three inputs, Concatenate on the time axis): xo trains
    it one epoch from --x files, one per input in Keras's order, and saves
    .keras and .weights.h5; Keras loads both and predicts what xo predicts
    from the three --input files within 1e-5."""
    import keras
    import numpy as np
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    shapes = ((6, 3), (4, 3), (5,))
    xs = [rng.uniform(0, 1, (64,) + s).astype(np.float32) for s in shapes]
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 64)]
    paths = [os.path.join(work, "x%d.npy" % k) for k in range(3)]
    for p, x in zip(paths, xs):
        np.save(p, x)
    np.save(os.path.join(work, "y.npy"), y)
    seed = os.path.join(fixtures, "multi.keras")
    p_xo = train_inputs(xo, seed, paths, work, 16)
    m = keras.saving.load_model(os.path.join(work, "trained.keras"))
    m2 = keras.saving.load_model(seed, compile=False)
    before = [np.array(v.numpy()) for v in m2.weights]
    m2.load_weights(os.path.join(work, "trained.weights.h5"))
    ok = [i.name for i in m.inputs] == ["seq", "tail", "flat"]
    print("multi Keras's inputs %s (want seq, tail, flat)" % [i.name for i in m.inputs])
    for what, model in (("load_model(.keras)", m), ("load_weights(.weights.h5)", m2)):
        err = float(np.abs(model.predict(xs, verbose=0) - p_xo).max())
        print("multi %-28s max |Keras - xo| %.3g (tol 1e-5)" % (what, err))
        ok = ok and err <= 1e-5
    moved = min(float(np.abs(np.asarray(a) - b).max()) for a, b in zip(m.weights, before))
    print("multi every variable moved by training: at least %.3g" % moved)
    return ok and moved > 0


def train_inputs(xo, seed, paths, work, batch):
    """xo trains the model file seed one epoch on ref from the input files
    paths (one per model input) and work/y.npy, saves work/trained.keras and
    work/trained.weights.h5, and returns its predictions of the trained
    .keras on the same inputs."""
    import numpy as np
    for out in ("trained.keras", "trained.weights.h5"):
        subprocess.check_call([xo, "train", "--model", seed,
                               *[a for p in paths for a in ("--x", p)], "--y",
                               os.path.join(work, "y.npy"), "--save", os.path.join(work, out),
                               "--epochs", "1", "--batch-size", str(batch), "--device", "ref",
                               "--seed", "3"], stdout=subprocess.DEVNULL)
    subprocess.check_call([xo, "predict", "--model", os.path.join(work, "trained.keras"),
                           *[a for p in paths for a in ("--input", p)], "--output",
                           os.path.join(work, "p.npy"), "--device", "ref"],
                          stdout=subprocess.DEVNULL)
    return np.load(os.path.join(work, "p.npy"))


def mha_mask(xo, fixtures, work, name="mha_mask", inputs=("x", "mask")):
    """mha_mask.keras (MultiHeadAttention called with attention_mask= its
    second Input): xo trains it one epoch from the fixture's x and mask
    (padded keys, rows that keep no key) and saves .keras and .weights.h5;
    Keras loads both (the mask a tensor kwarg of the node) and predicts what
    xo predicts within 1e-5. mha_bool.keras the same with a bool mask Input
    (cross attention; inputs q, v, keep): xo takes the bool .npy and writes
    the Input's dtype bool back."""
    import keras
    import numpy as np
    os.makedirs(work, exist_ok=True)
    paths = [os.path.join(fixtures, "%s.x%d.npy" % (name, k)) for k in range(len(inputs))]
    xs = [np.load(p) for p in paths]
    y = np.eye(3, dtype=np.float32)[np.random.default_rng(5).integers(0, 3, len(xs[0]))]
    np.save(os.path.join(work, "y.npy"), y)
    seed = os.path.join(fixtures, name + ".keras")
    p_xo = train_inputs(xo, seed, paths, work, 4)
    m = keras.saving.load_model(os.path.join(work, "trained.keras"))
    m2 = keras.saving.load_model(seed, compile=False)
    m2.load_weights(os.path.join(work, "trained.weights.h5"))
    got = [i.name for i in m.inputs]
    ok = got == list(inputs)
    print("%s Keras's inputs %s (want %s)" % (name, got, ", ".join(inputs)))
    if name == "mha_bool":
        dt = [str(i.dtype) for i in m.inputs]
        print("mha_bool Keras's input dtypes %s (want the mask's bool)" % dt)
        ok = ok and dt[-1] == "bool"
        # the mask as int64 keep values (nonzero keeps): the same predictions
        ints = os.path.join(work, "keep_i8.npy")
        np.save(ints, xs[-1].astype(np.int64) * 3)
        subprocess.check_call([xo, "predict", "--model", os.path.join(work, "trained.keras"),
                               *[a for p in paths[:-1] + [ints] for a in ("--input", p)],
                               "--output", os.path.join(work, "p_i8.npy"), "--device", "ref"],
                              stdout=subprocess.DEVNULL)
        same = bool((np.load(os.path.join(work, "p_i8.npy")) == p_xo).all())
        print("mha_bool int64 mask file predicts as the bool one: %s" % same)
        ok = ok and same
    if name == "mha_pad_mask":
        dt = [str(i.dtype) for i in m.inputs]
        print("mha_pad_mask Keras's input dtypes %s (want bool, int32)" % dt)
        ok = ok and dt == ["bool", "int32"]
    for what, model in (("load_model(.keras)", m), ("load_weights(.weights.h5)", m2)):
        err = float(np.abs(model.predict(xs, verbose=0) - p_xo).max())
        print("%s %-28s max |Keras - xo| %.3g (tol 1e-5)" % (name, what, err))
        ok = ok and err <= 1e-5
    return ok


def one_model(xo, fixtures, work, name, shape, classes):
    import keras
    import numpy as np
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, (64,) + shape).astype(np.float32)
    if name == "lstm":  # ids of its Embedding(50, 8)
        x = rng.integers(0, 50, (64,) + shape).astype(np.int32)
    # Embedding(20, ., mask_zero): 0-padded tails (the recurrent ones: every
    # third row padded at its start instead; mha_pad: into a
    # MultiHeadAttention as its query's and value's masks; mask_cat, mask_cat1:
    # into a Concatenate of two masked tensors, or of a masked and an unmasked;
    # mask_merge: into masked Multiply, Maximum and Minimum)
    if name in ("mask", "mask_res", "mask_rnn", "mask_bidir", "mha_pad", "mask_cat",
                "mask_cat1", "mask_merge", "mask_kd"):
        x = rng.integers(1, 20, (64,) + shape)
        keep = rng.integers(1, shape[0] + 1, 64)
        x[np.arange(shape[0])[None, :] >= keep[:, None]] = 0
        if name in ("mask_rnn", "mask_bidir"):
            for i in range(1, 64, 3):
                x[i] = np.roll(x[i], shape[0] - keep[i])
        x = x.astype(np.int32)
    # Masking(0.0): whole zero steps at the end (every third row at the
    # start), and a step zero in feature 0 only (kept)
    if name in ("msk_rnn", "msk_bidir"):
        x = rng.uniform(-1, 1, (64,) + shape).astype(np.float32)
        keep = rng.integers(1, shape[0] + 1, 64)
        x[np.arange(shape[0])[None, :] >= keep[:, None]] = 0.0
        for i in range(1, 64, 3):
            x[i] = np.roll(x[i], shape[0] - keep[i], axis=0)
        x[::2, :, 0] = np.where(np.any(x[::2] != 0, axis=-1), 0.0, x[::2, :, 0])
    y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, 64)]
    if name == "norm_inv":  # a regression (compiled with mean_squared_error): targets
        y = rng.uniform(0, 3, (64, 1)).astype(np.float32)  # in the output's units
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    seed = os.path.join(fixtures, name + ".keras")
    if name in ("acts2", "acts3"):  # Keras's own save beside its golden fixture
        seed = os.path.join(fixtures, "..", name, "model.keras")
    for out in ("trained.keras", "trained.weights.h5"):
        subprocess.check_call([xo, "train", "--model", seed, "--x", os.path.join(work, "x.npy"),
                               "--y", os.path.join(work, "y.npy"), "--save",
                               os.path.join(work, out), "--epochs", "1", "--batch-size", "16",
                               "--device", "ref", "--seed", "3"], stdout=subprocess.DEVNULL)
    subprocess.check_call([xo, "predict", "--model", os.path.join(work, "trained.keras"),
                           "--input", os.path.join(work, "x.npy"), "--output",
                           os.path.join(work, "p.npy"), "--device", "ref",
                           "--weights", os.path.join(work, "trained.weights.h5")],
                          stdout=subprocess.DEVNULL)
    p_xo = np.load(os.path.join(work, "p.npy"))
    # xo's .keras as a user loads it (compiled from its compile_config);
    # Keras's own fixture uncompiled (compiling builds the optimizer's
    # variables, 2-3 s a model, and the fixture's compile_config is not
    # what is checked), its untrained weights kept before xo's are loaded
    m = keras.saving.load_model(os.path.join(work, "trained.keras"))
    m2 = keras.saving.load_model(seed, compile=False)
    before = [np.array(v.numpy()) for v in m2.weights]
    m2.load_weights(os.path.join(work, "trained.weights.h5"))
    ok = True
    for what, model in (("load_model(.keras)", m), ("load_weights(.weights.h5)", m2)):
        err = float(np.abs(model.predict(x, verbose=0) - p_xo).max())
        print("%-5s %-28s max |Keras - xo| %.3g (tol 1e-5)" % (name, what, err))
        ok = ok and err <= 1e-5
    # the weights differ from the fixture's: training happened and was saved
    # (every variable, the non-trainable moving statistics included)
    # (but MultiHeadAttention's key bias: it shifts every score of a query
    # row by the same q . b, which the softmax cancels, so its gradient is
    # 0 in Keras too)
    # Normalization's mean, variance and count are not trained: they come
    # back bit for bit
    fixed = [isinstance(a.path, str) and a.path.split("/")[0].startswith("normalization")
             for a in m.weights]
    moved = min(float(np.abs(np.asarray(a) - b).max())
                for a, b, f in zip(m.weights, before, fixed)
                if not a.path.endswith("key/bias") and not f)
    print("%-5s every variable moved by training: at least %.3g" % (name, moved))
    kept = all(np.array_equal(np.asarray(a), b) for a, b, f in zip(m.weights, before, fixed) if f)
    if any(fixed):
        print("%-5s the normalization's variables unchanged: %s" % (name, kept))
    return ok and moved > 0 and kept


if __name__ == "__main__":
    sys.exit(main())
