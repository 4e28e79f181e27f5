#!/usr/bin/env python3
"""Writes the Keras fixtures of suites/golden/keras/.

Keras 3 with the JAX backend on the CPU writes every file the way a user's
Keras does; nothing here is crossover code. Run in a venv:
    python3 -m venv /tmp/kvenv && /tmp/kvenv/bin/pip install numpy keras jax h5py
    KERAS_BACKEND=jax /tmp/kvenv/bin/python scripts/make_keras_files.py suites/golden/keras

Per model NAME: NAME.keras (Keras 3 archive), and for the seed also
seed.h5 (legacy full model), seed.weights.h5 (Keras 3 save_weights) and
seed.legacy_weights.h5 (the legacy file's model_weights group at the root
of its own file, as Keras 3's legacy writer lays it out) and
seed.keras2_weights.h5 (Keras 2 ModelCheckpoint(save_weights_only=True):
fixed-length byte-string attributes, "layer/kernel:0" dataset names);
NAME.x.npy (float32 inputs) and NAME.y64.npy (Keras's predictions with the
same weights in float64: the model rebuilt with dtype float64).
Bad files: unsupported_layer.keras (a Conv3D; a Conv2D until Conv2D was
supported, rewritten by --only=conv2d), unsupported_option.keras (a
Dense with kernel_regularizer), not_chain.keras (a Functional with a branch).
"""
import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_ENABLE_X64", "1")  # the float64 reference runs in double
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402


def seed_model():
    return keras.Sequential([
        keras.Input(shape=(29, 1)),
        layers.Conv1D(16, kernel_size=3, activation="relu"),
        layers.MaxPooling1D(pool_size=3),
        layers.Conv1D(32, kernel_size=3, activation="relu"),
        layers.MaxPooling1D(pool_size=3),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(32, activation="sigmoid"),
        layers.Dense(12, activation="softmax"),
    ])


def mlp_model():
    return keras.Sequential([
        keras.Input(shape=(20,)),
        layers.Dense(24, activation="relu", name="hidden"),
        layers.Dense(16, activation="sigmoid", use_bias=False),
        layers.Dense(5, activation="softmax", name="out"),
    ])


def functional_model():
    inp = keras.Input(shape=(17, 2), name="signal")
    h = layers.Conv1D(8, kernel_size=2, strides=2, padding="same", activation="relu")(inp)
    h = layers.MaxPooling1D(pool_size=2, strides=1)(h)
    h = layers.Conv1D(6, kernel_size=3, dilation_rate=2, padding="causal")(h)
    h = layers.Flatten()(h)
    h = layers.Dense(10)(h)
    out = layers.Dense(4, activation="softmax")(h)
    return keras.Model(inp, out, name="chain")


def acts_model():
    """Every activation crossover runs, in Dense layers and as Activation
    layers (tanh, elu, gelu - exact, Keras's default - softplus)."""
    return keras.Sequential([
        keras.Input(shape=(12,)),
        layers.Dense(16, activation="tanh"),
        layers.Dense(16, activation="elu"),
        layers.Activation("gelu"),
        layers.Dense(12, activation="gelu"),
        layers.Dense(10, activation="softplus"),
        layers.Activation("tanh"),
        layers.Dense(4, activation="softmax"),
    ])


def pool_model():
    """The 1-D pooling family: average pooling same (edge windows average
    their valid steps) and valid, global average and global max pooling."""
    inp = keras.Input(shape=(21, 2))
    h = layers.Conv1D(4, 3, activation="relu")(inp)
    h = layers.AveragePooling1D(pool_size=4, strides=1, padding="same")(h)
    a = layers.Conv1D(5, 3, activation="tanh")(h)
    a = layers.AveragePooling1D(pool_size=2)(a)
    a = layers.GlobalMaxPooling1D()(a)
    return keras.Model(inp, layers.Dense(3, activation="softmax")(a), name="pools")


def pool_avg_model():
    return keras.Sequential([
        keras.Input(shape=(15, 3)),
        layers.Conv1D(4, 2, activation="gelu"),
        layers.GlobalAveragePooling1D(),
        layers.Dense(3, activation="softmax"),
    ])


def bn_model():
    """BatchNormalization after a Conv1D (statistics over batch and steps;
    no conv bias, as usual before BN) and after a Dense (center=False)."""
    return keras.Sequential([
        keras.Input(shape=(13, 3)),
        layers.Conv1D(6, 3, use_bias=False),
        layers.BatchNormalization(),
        layers.Activation("relu"),
        layers.GlobalAveragePooling1D(),
        layers.Dense(8),
        layers.BatchNormalization(center=False, momentum=0.9, epsilon=1e-2),
        layers.Dense(4, activation="softmax"),
    ])


def randomize_bn(model, rng):
    """randomize, then moving variances in [0.5, 1.5] (a variance is >= 0)."""
    randomize(model, rng)
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            layer.moving_variance.assign(
                rng.uniform(0.5, 1.5, layer.moving_variance.shape).astype(np.float32))


def bn_fixtures(out):
    """bn.keras, bn.weights.h5, bn.keras2_weights.h5 (the legacy layout: gamma,
    beta, moving_mean, moving_variance in Keras 2's weights order), bn.x.npy,
    bn.y64.npy; and the refused BatchNormalization
    options, each its own file: bn_axis (axis=1), bn_regularizer
    (gamma_regularizer), bn_initializer (gamma_initializer), and written into
    the config of a default layer: bn_synchronized (synchronized=True builds
    on TensorFlow only) and bn_renorm (Keras 2's renorm=True; Keras 3 has no
    such argument)."""
    import zipfile
    rng = np.random.default_rng(29)
    m = bn_model()
    randomize_bn(m, rng)
    m.save(os.path.join(out, "bn.keras"))
    m.save_weights(os.path.join(out, "bn.weights.h5"))
    keras2_weights(os.path.join(out, "bn.keras2_weights.h5"), m)  # legacy order
    write_inputs(out, "bn", m, rng)
    for name, kw in (("bn_axis", {"axis": 1}),
                     ("bn_regularizer", {"gamma_regularizer": "l2"}),
                     ("bn_initializer", {"gamma_initializer": "random_normal"})):
        bad = keras.Sequential([keras.Input(shape=(5, 4)), layers.BatchNormalization(**kw),
                                layers.Flatten(), layers.Dense(3)])
        bad.save(os.path.join(out, name + ".keras"))
    src = os.path.join(out, "bn_axis.keras")
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    # synchronized=True only builds on TensorFlow; renorm is Keras 2's:
    # both written into the config of a default layer
    for name, key in (("bn_renorm", "renorm"), ("bn_synchronized", "synchronized")):
        cfg = json.loads(members["config.json"])
        for layer in cfg["config"]["layers"]:
            if layer["class_name"] == "BatchNormalization":
                layer["config"]["axis"] = -1
                layer["config"][key] = True
        with zipfile.ZipFile(os.path.join(out, name + ".keras"), "w") as z:
            for n, data in members.items():
                z.writestr(n, json.dumps(cfg).encode() if n == "config.json" else data)


def keras2_weights(path, model):
    """The file Keras 2's save_weights / ModelCheckpoint(save_weights_only=True)
    wrote (tf.keras 2.x, hdf5_format.save_weights_to_hdf5_group), rebuilt
    with h5py because Keras 2 no longer installs beside Keras 3: root
    attributes layer_names, backend, keras_version as fixed-length byte
    strings; per layer a group with weight_names ("conv1d/kernel:0", ...)
    and the datasets at those paths inside it."""
    with h5py.File(path, "w") as f:
        names = [layer.name for layer in model.layers]
        f.attrs["layer_names"] = np.array([n.encode("utf8") for n in names])
        f.attrs["backend"] = b"tensorflow"
        f.attrs["keras_version"] = b"2.15.0"
        for layer in model.layers:
            g = f.create_group(layer.name)
            wnames = [("%s/%s:0" % (layer.name, v.name)).encode("utf8") for v in layer.weights]
            g.attrs["weight_names"] = np.array(wnames) if wnames else np.array([], dtype="S1")
            for n, v in zip(wnames, layer.get_weights()):
                g.create_dataset(n.decode(), data=v)


def pool2d_model():
    """The windowed 2-D poolings: max valid with the
    int pool size, average same with a (3, 2) window and (1, 2) strides
    (edge windows average their valid cells)."""
    return keras.Sequential([
        keras.Input(shape=(12, 12, 2)),
        layers.MaxPooling2D(2),
        layers.AveragePooling2D((3, 2), strides=(1, 2), padding="same"),
        layers.Flatten(),
        layers.Dense(5, activation="softmax"),
    ])


def gpool2d_avg_model():
    return keras.Sequential([
        keras.Input(shape=(7, 6, 3)),
        layers.AveragePooling2D((2, 3), strides=1),
        layers.GlobalAveragePooling2D(),
        layers.Dense(4, activation="softmax"),
    ])


def gpool2d_max_model():
    return keras.Sequential([
        keras.Input(shape=(7, 6, 3)),
        layers.MaxPooling2D(3, strides=(2, 1), padding="same"),
        layers.GlobalMaxPooling2D(),
        layers.Dense(4, activation="softmax"),
    ])


# the 2-D pooling fixtures, each with its own seed (--only=pool2d writes
# them alone, so adding them rewrote no other file)
POOL2D = (("pool2d", pool2d_model, 29), ("gavg2d", gpool2d_avg_model, 31),
          ("gmax2d", gpool2d_max_model, 37))


def pool2d_fixtures(out):
    for name, make_model, seed in POOL2D:
        m = make_model()
        r = np.random.default_rng(seed)
        randomize(m, r)
        m.save(os.path.join(out, name + ".keras"))
        write_inputs(out, name, m, r)


def cnn2d_model():
    """Conv2D: a fused relu, valid, then same padding with
    strides (2, 1) and a (3, 2) kernel after a 2-D max pooling."""
    return keras.Sequential([
        keras.Input(shape=(12, 12, 1)),
        layers.Conv2D(8, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Conv2D(8, (3, 2), strides=(2, 1), padding="same"),
        layers.Flatten(),
        layers.Dense(10, activation="softmax"),
    ])


def cnn_bn_model():
    """Conv2D -> BatchNormalization -> relu -> GlobalAveragePooling2D, with a
    dilated (2, 1) Conv2D without bias and tanh (an activation xo runs as
    its own op) in front."""
    return keras.Sequential([
        keras.Input(shape=(10, 9, 2)),
        layers.Conv2D(4, (2, 3), dilation_rate=(2, 1), padding="same", use_bias=False,
                      activation="tanh"),
        layers.Conv2D(6, 3, use_bias=False),
        layers.BatchNormalization(),
        layers.Activation("relu"),
        layers.GlobalAveragePooling2D(),
        layers.Dense(4, activation="softmax"),
    ])


# the Conv2D fixtures, each with its own seed (--only=conv2d writes them
# alone, so adding them rewrote no other file)
CONV2D = (("cnn2d", cnn2d_model, 41), ("cnn_bn", cnn_bn_model, 43))


def conv2d_fixtures(out):
    """cnn2d.keras, cnn_bn.keras (BN's moving variance in [0.5, 1.5]), their
    inputs and float64 predictions; cnn2d.h5 (legacy full model) and
    cnn2d.keras2_weights.h5 (Keras 2's weights layout, 4-D kernels); and
    unsupported_layer.keras again, now a Conv3D (the layer it held, Conv2D,
    is supported)."""
    for name, make_model, seed in CONV2D:
        m = make_model()
        r = np.random.default_rng(seed)
        randomize_bn(m, r)
        m.save(os.path.join(out, name + ".keras"))
        if name == "cnn2d":
            m.save(os.path.join(out, name + ".h5"))
            keras2_weights(os.path.join(out, name + ".keras2_weights.h5"), m)
        write_inputs(out, name, m, r)
    bad = keras.Sequential([keras.Input(shape=(6, 6, 6, 1)), layers.Conv3D(2, 3),
                            layers.Flatten(), layers.Dense(3)])
    bad.save(os.path.join(out, "unsupported_layer.keras"))


def pad1d_model():
    """ZeroPadding1D with asymmetric margins and with Keras's default
    (padding=1) between Conv1D layers."""
    return keras.Sequential([
        keras.Input(shape=(11, 2)),
        layers.Conv1D(4, 3, activation="relu"),
        layers.ZeroPadding1D((1, 2)),
        layers.Conv1D(3, 3, activation="tanh"),
        layers.ZeroPadding1D(),
        layers.Flatten(),
        layers.Dense(4, activation="softmax"),
    ])


def resize1d_model():
    """ZeroPadding1D, UpSampling1D and Cropping1D between Conv1D layers."""
    return keras.Sequential([
        keras.Input(shape=(9, 2)),
        layers.Conv1D(3, 3, activation="relu"),
        layers.ZeroPadding1D(2),
        layers.UpSampling1D(3),
        layers.Conv1D(4, 5, strides=2, activation="tanh"),
        layers.Cropping1D((3, 1)),
        layers.Flatten(),
        layers.Dense(5, activation="softmax"),
    ])


# the zero padding, cropping and upsampling fixtures, each with its own seed
# (--only=resize writes them alone, so adding them rewrote no other file;
# a fixture added to RESIZE leaves the earlier ones' bytes as they were)
def resize2d_model():
    """ZeroPadding2D, UpSampling2D and Cropping2D between Conv2D layers."""
    return keras.Sequential([
        keras.Input(shape=(6, 5, 2)),
        layers.Conv2D(3, 3, activation="relu"),
        layers.ZeroPadding2D(((1, 0), (2, 1))),
        layers.UpSampling2D((2, 3)),
        layers.Conv2D(4, 3, strides=2, activation="tanh"),
        layers.Cropping2D((1, 2)),
        layers.Flatten(),
        layers.Dense(4, activation="softmax"),
    ])


RESIZE = (("pad1d", pad1d_model, 53), ("resize1d", resize1d_model, 59),
          ("resize2d", resize2d_model, 61))


def resize_fixtures(out):
    """NAME.keras, NAME.h5 (legacy full model), NAME.weights.h5 (Keras 3
    save_weights), their inputs and float64 predictions."""
    for name, make_model, seed in RESIZE:
        m = make_model()
        r = np.random.default_rng(seed)
        randomize(m, r)
        m.save(os.path.join(out, name + ".keras"))
        m.save(os.path.join(out, name + ".h5"))
        m.save_weights(os.path.join(out, name + ".weights.h5"))
        write_inputs(out, name, m, r)


# the Permute fixtures, each with its own seed (--only=shape2 writes them alone)
def permute_model():
    """Permute on a [T][ch] sample ((2, 1): the steps become channels) and on
    an [h][w][ch] one ((3, 1, 2)), between Conv1D / Conv2D layers."""
    return keras.Sequential([
        keras.Input(shape=(7, 3)),
        layers.Conv1D(4, 2, activation="tanh"),
        layers.Permute((2, 1)),
        layers.Conv1D(3, 2),
        layers.Flatten(),
        layers.Dense(4, activation="softmax"),
    ])


def permute2d_model():
    return keras.Sequential([
        keras.Input(shape=(5, 4, 2)),
        layers.Conv2D(3, 2, activation="relu"),
        layers.Permute((3, 1, 2)),
        layers.Conv2D(2, 2, activation="tanh"),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def repeat_model():
    """RepeatVector between a Dense and a Conv1D (its copies' gradients summed)."""
    return keras.Sequential([
        keras.Input(shape=(5,)),
        layers.Dense(4, activation="tanh"),
        layers.RepeatVector(3),
        layers.Conv1D(3, 2, activation="relu"),
        layers.Flatten(),
        layers.Dense(4, activation="softmax"),
    ])


def reshape_model():
    """Reshape from [T][ch] to [h][w][ch] and, with -1 inferred, to a flat vector."""
    return keras.Sequential([
        keras.Input(shape=(4, 6)),
        layers.Conv1D(4, 2, activation="tanh"),
        layers.Reshape((2, 3, 2)),
        layers.Conv2D(2, 2, activation="relu"),
        layers.Reshape((-1,)),
        layers.Dense(3, activation="softmax"),
    ])


SHAPE2 = (("permute", permute_model, 67), ("permute2d", permute2d_model, 71),
          ("repeat", repeat_model, 73), ("reshape", reshape_model, 79))


# the functional graph fixture (--only=graph writes it alone)
def graph_model():
    """A residual Conv1D block (Conv1D -> Conv1D -> Add with the input ->
    relu), every other merge layer on it, and Concatenate with a 1x1 Conv1D
    branch of the input, then GlobalAveragePooling1D -> Dense."""
    inp = keras.Input(shape=(8, 3))
    c1 = layers.Conv1D(4, 3, padding="same", activation="relu")(inp)
    c2 = layers.Conv1D(3, 3, padding="same")(c1)
    r = layers.Add()([c2, inp])
    a = layers.Activation("relu")(r)
    s = layers.Subtract()([a, r])
    mx = layers.Maximum()([s, c2])
    mn = layers.Minimum()([mx, r])
    mu = layers.Multiply()([mn, a])
    av = layers.Average()([mu, s])
    b = layers.Conv1D(2, 1, activation="tanh")(inp)
    cat = layers.Concatenate()([av, b])
    g = layers.GlobalAveragePooling1D()(cat)
    return keras.Model(inp, layers.Dense(3, activation="softmax")(g))


def graph_fixtures(out):
    """As table_fixtures, for the graph fixture (seed 83)."""
    m = graph_model()
    r = np.random.default_rng(83)
    randomize(m, r)
    m.save(os.path.join(out, "graph.keras"))
    m.save(os.path.join(out, "graph.h5"))
    m.save_weights(os.path.join(out, "graph.weights.h5"))
    write_inputs(out, "graph", m, r)


# the multi-input fixture (--only=multi writes it alone)
def multi_model():
    """Three inputs in Keras's order: a (6, 3) sequence through Conv1D
    joined with a (4, 3) sequence along the time axis (Concatenate(axis=1)),
    Conv1D, GlobalAveragePooling1D; a flat (5,) input through Dense; the two
    branches joined on the last axis (axis=-1), then Dense."""
    a = keras.Input(shape=(6, 3), name="seq")
    b = keras.Input(shape=(4, 3), name="tail")
    c = keras.Input(shape=(5,), name="flat")
    ca = layers.Conv1D(3, 3, padding="same", activation="relu")(a)
    t = layers.Concatenate(axis=1)([ca, b])
    t = layers.Conv1D(4, 3, activation="tanh")(t)
    g = layers.GlobalAveragePooling1D()(t)
    d = layers.Dense(4, activation="relu")(c)
    j = layers.Concatenate(axis=-1)([g, d])
    return keras.Model([a, b, c], layers.Dense(3, activation="softmax")(j))


def multi_fixtures(out):
    """As table_fixtures, for the multi-input fixture (seed 107): each
    input's samples as multi.x<k>.npy, and multi.x.npy their rows joined
    per sample (each sample the inputs' samples one after the other, as
    xo's model API takes them)."""
    m = multi_model()
    r = np.random.default_rng(107)
    randomize(m, r)
    m.save(os.path.join(out, "multi.keras"))
    m.save(os.path.join(out, "multi.h5"))
    m.save_weights(os.path.join(out, "multi.weights.h5"))
    xs = [r.uniform(0.0, 1.0, (16,) + tuple(t.shape[1:])).astype(np.float32)
          for t in m.inputs]
    for k, x in enumerate(xs):
        np.save(os.path.join(out, "multi.x%d.npy" % k), x)
    np.save(os.path.join(out, "multi.x.npy"),
            np.concatenate([x.reshape(len(x), -1) for x in xs], axis=1))
    y = to_float64(m).predict([x.astype(np.float64) for x in xs], verbose=0)
    assert y.dtype == np.float64
    np.save(os.path.join(out, "multi.y64.npy"), y)


def table_fixtures(out, table, only=None):
    """For each (name, make_model, seed) of table (or those named in only):
    name.keras, name.h5 (legacy full model), name.weights.h5, their inputs
    and float64 predictions, the model's weights drawn from its own seed."""
    for name, make_model, seed in table:
        if only and name not in only:
            continue
        m = make_model()
        r = np.random.default_rng(seed)
        randomize(m, r)
        m.save(os.path.join(out, name + ".keras"))
        m.save(os.path.join(out, name + ".h5"))
        m.save_weights(os.path.join(out, name + ".weights.h5"))
        write_inputs(out, name, m, r)


def rescale_model():
    """Rescaling in front of an image CNN: the fixture's [0, 1) inputs as
    pixel values (scale 255), then Keras's usual [-1, 1) form (scale
    1/127.5, offset -1), a Conv2D with relu, Flatten, Dense softmax."""
    return keras.Sequential([
        keras.Input(shape=(7, 6, 3)),
        layers.Rescaling(255.0),
        layers.Rescaling(1.0 / 127.5, offset=-1.0),
        layers.Conv2D(4, 3, activation="relu"),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


PRELAYERS = (("rescale", rescale_model, 113),)


def keepdims_model():
    """GlobalAveragePooling1D(keepdims=True) -> Conv1D and Dense on the
    rank-3 [1][ch] result, GlobalMaxPooling1D(keepdims=True) of it, Flatten
    -> Dense softmax."""
    return keras.Sequential([
        keras.Input(shape=(10, 3)),
        layers.Conv1D(6, 3, activation="tanh"),
        layers.GlobalAveragePooling1D(keepdims=True),
        layers.Conv1D(5, 1),
        layers.Dense(4, activation="relu"),
        layers.GlobalMaxPooling1D(keepdims=True),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def keepdims2d_model():
    """GlobalAveragePooling2D(keepdims=True) -> Conv2D 1x1 and Dense on the
    rank-4 [1][1][ch] result, GlobalMaxPooling2D(keepdims=True), Flatten ->
    Dense softmax."""
    return keras.Sequential([
        keras.Input(shape=(7, 6, 3)),
        layers.Conv2D(5, 3, activation="tanh"),
        layers.GlobalAveragePooling2D(keepdims=True),
        layers.Conv2D(4, 1),
        layers.Dense(4, activation="relu"),
        layers.GlobalMaxPooling2D(keepdims=True),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


KEEPDIMS = (("keepdims", keepdims_model, 157), ("keepdims2d", keepdims2d_model, 163))


def mask_kd_model():
    """The masked mean of mask_model with keepdims=True: [1][8] per sample,
    then Dense and Flatten -> Dense softmax."""
    return keras.Sequential([
        keras.Input(shape=(8,), dtype="int32"), layers.Embedding(20, 8, mask_zero=True),
        layers.Dense(8, activation="relu"), layers.GlobalAveragePooling1D(keepdims=True),
        layers.Dense(5, activation="tanh"), layers.Flatten(),
        layers.Dense(3, activation="softmax")])


def norm_bad_fixtures(out):
    """norm_negvar.weights.h5: norm_mlp.weights.h5 with its Normalization's
    variance negative at index 2 (Keras would output NaN there; xo refuses
    the file)."""
    import shutil
    dst = os.path.join(out, "norm_negvar.weights.h5")
    shutil.copy(os.path.join(out, "norm_mlp.weights.h5"), dst)
    with h5py.File(dst, "r+") as f:
        v = f["layers/normalization/vars/1"]
        a = v[...]
        a[2] = -0.5
        v[...] = a


def norm_inv_fixtures(out):
    """norm_inv: a regression MLP as Keras users write one, Normalization
    adapted on x -> Dense relu -> Dense(1) -> Normalization(invert=True)
    adapted on the targets y, mapping the normalized prediction back to y's
    units. x: 6 features, each its own centre in [0, 1) and spread in
    [0.1, 0.6); y: centre 1.5, spread 0.8 (den below 1, so the output's
    magnitude stays within the fixture tolerance's units). The Dense
    weights drawn from the fixture's seed."""
    r = np.random.default_rng(151)
    norm_x = layers.Normalization()
    norm_y = layers.Normalization(invert=True)
    m = keras.Sequential([keras.Input(shape=(6,)), norm_x, layers.Dense(8, activation="relu"),
                          layers.Dense(1), norm_y])
    loc = r.uniform(0.0, 1.0, (6,))
    scale = r.uniform(0.1, 0.6, (6,))
    norm_x.adapt((loc + scale * r.standard_normal((256, 6))).astype(np.float32))
    norm_y.adapt((1.5 + 0.8 * r.standard_normal((256, 1))).astype(np.float32))
    for layer in m.layers[1:]:
        if not isinstance(layer, layers.Normalization):
            layer.set_weights([r.uniform(-0.5, 0.5, w.shape).astype(np.float32)
                               for w in layer.get_weights()])
    m.compile(optimizer="adam", loss="mean_squared_error")  # a regression's, as saved
    m.save(os.path.join(out, "norm_inv.keras"))
    m.save(os.path.join(out, "norm_inv.h5"))
    m.save_weights(os.path.join(out, "norm_inv.weights.h5"))
    write_inputs(out, "norm_inv", m, r)


def norm_fixtures(out):
    """Normalization in front of a net, adapted on data (its mean and
    variance the layer's variables; its count Keras's unused int32):
    norm_mlp (Normalization -> Dense relu -> Dense softmax on 6 features),
    norm_conv (Normalization over a [10][3] sequence -> Conv1D relu ->
    Flatten -> Dense softmax); and norm_given (mean and variance given in the
    config: Keras holds no variables) -> Dense softmax. The adapt data: each feature
    its own centre in [0, 1) and spread in [0.1, 0.6), so the [0, 1) inputs
    come out of the layer of both signs and a few units wide. The Dense and
    Conv1D weights drawn from the fixture's seed (randomize would draw the
    normalization's variables too)."""
    def make(name, seed, shape, tail, **kw):
        r = np.random.default_rng(seed)
        norm = layers.Normalization(**kw)
        m = keras.Sequential([keras.Input(shape=shape), norm] + tail)
        if "mean" not in kw:
            loc = r.uniform(0.0, 1.0, shape[-1:])
            scale = r.uniform(0.1, 0.6, shape[-1:])
            norm.adapt((loc + scale * r.standard_normal((256,) + shape)).astype(np.float32))
        for layer in m.layers[1:]:
            layer.set_weights([r.uniform(-0.5, 0.5, w.shape).astype(np.float32)
                               for w in layer.get_weights()])
        m.save(os.path.join(out, name + ".keras"))
        m.save(os.path.join(out, name + ".h5"))
        m.save_weights(os.path.join(out, name + ".weights.h5"))
        write_inputs(out, name, m, r)

    make("norm_mlp", 131, (6,), [layers.Dense(8, activation="relu"),
                                 layers.Dense(3, activation="softmax")])
    make("norm_conv", 137, (10, 3), [layers.Conv1D(4, 3, activation="relu"), layers.Flatten(),
                                     layers.Dense(3, activation="softmax")])
    norm_bad_fixtures(out)
    make("norm_given", 139, (5,), [layers.Dense(3, activation="softmax")], mean=0.5,
         variance=0.09)


def leaky_model():
    """LeakyReLU on a small 1-D CNN: the layer with a slope of its own and
    with Keras's default 0.3, and the "leaky_relu" activation string (its
    slope 0.2) on a Conv1D and a Dense."""
    return keras.Sequential([
        keras.Input(shape=(12, 3)),
        layers.Conv1D(6, 3),
        layers.LeakyReLU(negative_slope=0.1),
        layers.Conv1D(5, 3, activation="leaky_relu"),
        layers.LeakyReLU(),
        layers.Flatten(),
        layers.Dense(8, activation="leaky_relu"),
        layers.Dense(3, activation="softmax"),
    ])


def elu_model():
    """ELU with an alpha of its own after the "elu" activation string
    (alpha 1) on a small 1-D CNN, and the ELU layer's default."""
    return keras.Sequential([
        keras.Input(shape=(12, 3)),
        layers.Conv1D(6, 3),
        layers.LeakyReLU(),
        layers.Conv1D(5, 3, activation="elu"),
        layers.ELU(alpha=0.7),
        layers.Flatten(),
        layers.Dense(8),
        layers.ELU(),
        layers.Dense(3, activation="softmax"),
    ])


def elu_neg_model():
    """ELU with negative alphas (Keras takes them: y > 0 on both sides of
    0) on a small 1-D CNN."""
    return keras.Sequential([
        keras.Input(shape=(12, 3)),
        layers.Conv1D(6, 3),
        layers.ELU(alpha=-0.5),
        layers.Flatten(),
        layers.Dense(8),
        layers.ELU(alpha=-1.5),
        layers.Dense(3, activation="softmax"),
    ])


ACTLAYERS = (("leaky", leaky_model, 131), ("elu", elu_model, 137),
             ("elu_neg", elu_neg_model, 173))


def ln_model():
    """LayerNormalization on a [T][F] sequence after a Conv1D and on a
    Dense's flat output (center=False, epsilon=1e-2)."""
    return keras.Sequential([
        keras.Input(shape=(7, 5)),
        layers.Conv1D(6, 2, activation="tanh"),
        layers.LayerNormalization(),
        layers.Flatten(),
        layers.Dense(8),
        layers.LayerNormalization(center=False, epsilon=1e-2),
        layers.Dense(4, activation="softmax"),
    ])


def ln2d_model():
    """LayerNormalization on a [h][w][ch] image after a Conv2D (scale=False:
    beta alone)."""
    return keras.Sequential([
        keras.Input(shape=(6, 5, 2)),
        layers.Conv2D(4, 2),
        layers.LayerNormalization(scale=False),
        layers.GlobalAveragePooling2D(),
        layers.Dense(3, activation="softmax"),
    ])


def ln_pos_model():
    """LayerNormalization with the last axis named by its positive index, as
    Keras accepts it (axis=2 on a [T][F] sequence, axis=1 on a Dense's
    flat output), and an epsilon above 1 (any positive float is valid)."""
    return keras.Sequential([
        keras.Input(shape=(7, 5)),
        layers.Conv1D(6, 2, activation="tanh"),
        layers.LayerNormalization(axis=2),
        layers.Flatten(),
        layers.Dense(8),
        layers.LayerNormalization(axis=1, epsilon=2.0),
        layers.Dense(4, activation="softmax"),
    ])


def ln_pos_fixtures(out):
    """ln_pos.keras, ln_pos.h5 (legacy), ln_pos.weights.h5, its input and
    float64 predictions (ln_pos_model)."""
    m = ln_pos_model()
    randomize(m, np.random.default_rng(59))
    m.save(os.path.join(out, "ln_pos.keras"))
    m.save(os.path.join(out, "ln_pos.h5"))
    m.save_weights(os.path.join(out, "ln_pos.weights.h5"))
    write_inputs(out, "ln_pos", m, np.random.default_rng(61))


def ln_fixtures(out):
    """ln.keras, ln.h5 (legacy full model), ln.weights.h5,
    ln.keras2_weights.h5, ln2d.keras, their inputs and float64 predictions;
    and the refused LayerNormalization options, each its own file: ln_axis
    (axis=1 of a [T][F] sample), ln_axes (axis=[1, 2]), ln_rms
    (rms_scaling=True), ln_regularizer (gamma_regularizer)."""
    for name, make_model, seed in (("ln", ln_model, 47), ("ln2d", ln2d_model, 53)):
        m = make_model()
        r = np.random.default_rng(seed)
        randomize(m, r)
        m.save(os.path.join(out, name + ".keras"))
        if name == "ln":
            m.save(os.path.join(out, name + ".h5"))
            m.save_weights(os.path.join(out, name + ".weights.h5"))
            keras2_weights(os.path.join(out, name + ".keras2_weights.h5"), m)
        write_inputs(out, name, m, r)
    for name, kw in (("ln_axis", {"axis": 1}), ("ln_axes", {"axis": [1, 2]}),
                     ("ln_rms", {"rms_scaling": True}),
                     ("ln_regularizer", {"gamma_regularizer": "l2"})):
        bad = keras.Sequential([keras.Input(shape=(5, 4)), layers.LayerNormalization(**kw),
                                layers.Flatten(), layers.Dense(3)])
        bad.save(os.path.join(out, name + ".keras"))


def d3_model():
    """Dense on a [T][F] sequence (the last axis, the steps kept) between a
    Conv1D and a LayerNormalization, then pooled over the steps."""
    return keras.Sequential([
        keras.Input(shape=(9, 4)),
        layers.Conv1D(6, 3, activation="relu"),
        layers.Dense(8),
        layers.LayerNormalization(),
        layers.GlobalAveragePooling1D(),
        layers.Dense(3, activation="softmax"),
    ])


def d3_2d_model():
    """Dense on a [h][w][ch] image after a Conv2D (an activation Keras
    applies after the product, no bias), then flattened."""
    return keras.Sequential([
        keras.Input(shape=(5, 4, 2)),
        layers.Conv2D(3, 2),
        layers.Dense(5, activation="gelu", use_bias=False),
        layers.Flatten(),
        layers.Dense(4, activation="softmax"),
    ])


def d3_fixtures(out):
    """d3.keras, d3.h5 (legacy full model), d3.weights.h5, d3_2d.keras,
    their inputs and float64 predictions."""
    for name, make_model, seed in (("d3", d3_model, 61), ("d3_2d", d3_2d_model, 67)):
        m = make_model()
        r = np.random.default_rng(seed)
        randomize(m, r)
        m.save(os.path.join(out, name + ".keras"))
        if name == "d3":
            m.save(os.path.join(out, name + ".h5"))
            m.save_weights(os.path.join(out, name + ".weights.h5"))
        write_inputs(out, name, m, r)


# the depthwise fixtures, each with its own seed (--only=dwconv writes them
# alone; --name=N only those named)
def dwconv_model():
    """DepthwiseConv2D with depth_multiplier 2, same padding and a fused relu,
    then one with a (2, 3) kernel, strides (2, 1) and tanh (not fused: its
    own op after the product), before a Flatten and a Dense."""
    return keras.Sequential([
        keras.Input(shape=(6, 5, 3)),
        layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", activation="relu"),
        layers.DepthwiseConv2D((2, 3), strides=(2, 1), activation="tanh"),
        layers.Flatten(),
        layers.Dense(4, activation="softmax"),
    ])


def dwconv1d_model():
    """DepthwiseConv1D with depth_multiplier 2, same padding and a fused
    sigmoid, then one with strides 2 and no bias, before a Dense."""
    return keras.Sequential([
        keras.Input(shape=(9, 4)),
        layers.DepthwiseConv1D(3, depth_multiplier=2, padding="same", activation="sigmoid"),
        layers.DepthwiseConv1D(2, strides=2, use_bias=False),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def td_model():
    """TimeDistributed over Conv1D on a [T][len][ch] sample (strides 2, then
    padding same with dilation 2 and no bias) and over Dense on [T][F]."""
    return keras.Sequential([
        keras.Input(shape=(4, 9, 3)),
        layers.TimeDistributed(layers.Conv1D(4, 3, strides=2, activation="relu")),
        layers.TimeDistributed(layers.Conv1D(3, 2, padding="same", dilation_rate=2,
                                             use_bias=False)),
        layers.Reshape((4, 12)),
        layers.TimeDistributed(layers.Dense(5, activation="tanh")),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def bidir_model():
    """Bidirectional over GRU (return_sequences, merge_mode concat: the
    backward direction flipped back in time), over LSTM (sum) and over LSTM
    (last states, ave), then Dense. (SimpleRNN is not here: Keras 3.15 on
    JAX keeps its state float32 under a float64 config, rnn_fixtures.)"""
    return keras.Sequential([
        keras.Input(shape=(6, 3)),
        layers.Bidirectional(layers.GRU(4, return_sequences=True)),
        layers.Bidirectional(layers.LSTM(3, return_sequences=True), merge_mode="sum"),
        layers.Bidirectional(layers.LSTM(5), merge_mode="ave"),
        layers.Dense(3, activation="softmax"),
    ])


def sepconv_model():
    """SeparableConv2D with depth_multiplier 2, same padding and a fused relu,
    then one with a (2, 3) kernel, strides (2, 1), no activation."""
    return keras.Sequential([
        keras.Input(shape=(6, 5, 3)),
        layers.SeparableConv2D(4, 3, depth_multiplier=2, padding="same", activation="relu"),
        layers.SeparableConv2D(3, (2, 3), strides=(2, 1)),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def sepconv1d_model():
    """SeparableConv1D with depth_multiplier 2, same padding and a fused
    sigmoid, then one with strides 2 and no bias."""
    return keras.Sequential([
        keras.Input(shape=(9, 4)),
        layers.SeparableConv1D(5, 3, depth_multiplier=2, padding="same", activation="sigmoid"),
        layers.SeparableConv1D(3, 2, strides=2, use_bias=False),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def mha_model():
    """A transformer encoder step on [T][F] (Dense input projection,
    MultiHeadAttention self-attention with the causal mask, Add,
    LayerNormalization) and cross attention from it to a Dense branch of
    the input (output_shape, no bias), then GlobalAveragePooling1D ->
    Dense. value_dim is left at key_dim: Keras on JAX (its
    dot_product_attention path) refuses value_dim != key_dim."""
    inp = keras.Input(shape=(6, 4))
    e = layers.Dense(8)(inp)
    a = layers.MultiHeadAttention(2, 4)(e, e, use_causal_mask=True)
    n = layers.LayerNormalization()(layers.Add()([e, a]))
    c = layers.Dense(3, activation="tanh")(inp)
    b = layers.MultiHeadAttention(3, 2, output_shape=5, use_bias=False)(n, c)
    g = layers.GlobalAveragePooling1D()(b)
    return keras.Model(inp, layers.Dense(3, activation="softmax")(g))


DWCONV = (("dwconv", dwconv_model, 83), ("dwconv1d", dwconv1d_model, 89),
          ("sepconv", sepconv_model, 97), ("sepconv1d", sepconv1d_model, 101))


# the Conv2DTranspose fixture, its own seed (--only=convt writes it alone)
def convt_model():
    """Conv2DTranspose with strides 2, same padding (output_padding None) and
    a fused relu, then one with a (2, 3) kernel, strides (2, 1), valid
    padding, output_padding (1, 0), no bias and tanh (not fused: its own op
    after the product), before a Flatten and a Dense."""
    return keras.Sequential([
        keras.Input(shape=(3, 3, 2)),
        layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu"),
        layers.Conv2DTranspose(3, (2, 3), strides=(2, 1), output_padding=(1, 0),
                               use_bias=False, activation="tanh"),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


def convt1d_model():
    """Conv1DTranspose with strides 2, same padding and a fused sigmoid, then
    one with kernel 3, strides 3, valid padding, output_padding 2 and no
    bias, before a Flatten and a Dense."""
    return keras.Sequential([
        keras.Input(shape=(5, 3)),
        layers.Conv1DTranspose(4, 3, strides=2, padding="same", activation="sigmoid"),
        layers.Conv1DTranspose(2, 3, strides=3, output_padding=2, use_bias=False),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])


CONVT = (("convt", convt_model, 107), ("convt1d", convt1d_model, 109))


# Keras's mask of Embedding(mask_zero=True), its own seeds (--only=mask)
def mask_model():
    """ids (8 int32 tokens, vocab 20) -> Embedding(20, 8, mask_zero=True) ->
    Dense(8, relu) -> LayerNormalization -> GlobalAveragePooling1D (the
    masked mean: the mask passed on by Dense and LayerNormalization) ->
    Dense(3, softmax)."""
    return keras.Sequential([
        keras.Input(shape=(8,), dtype="int32"), layers.Embedding(20, 8, mask_zero=True),
        layers.Dense(8, activation="relu"), layers.LayerNormalization(),
        layers.GlobalAveragePooling1D(), layers.Dense(3, activation="softmax")])


def mask_res_model():
    """As mask_model with a residual Add of two masked tensors (the
    embedding and the Dense after it: the OR of one mask) before the
    LayerNormalization."""
    ids = keras.Input(shape=(8,), dtype="int32")
    e = layers.Embedding(20, 8, mask_zero=True)(ids)
    r = layers.Add()([e, layers.Dense(8, activation="relu")(e)])
    g = layers.GlobalAveragePooling1D()(layers.LayerNormalization()(r))
    return keras.Model(ids, layers.Dense(3, activation="softmax")(g))


def mask_td_model():
    """TimeDistributed(Dense) passes the mask (Dense's call takes none) to
    the masked GlobalAveragePooling1D."""
    ids = keras.Input(shape=(8,), dtype="int32")
    e = layers.Embedding(20, 8, mask_zero=True)(ids)
    t = layers.TimeDistributed(layers.Dense(5, activation="tanh"))(e)
    g = layers.GlobalAveragePooling1D()(t)
    return keras.Model(ids, layers.Dense(3, activation="softmax")(g))


def mask_fixtures(out):
    """NAME.keras, NAME.h5, NAME.weights.h5, NAME.x.npy (int32 ids in
    [1, 20), each row's tail padded with 0 after 1 to 8 kept steps; no row
    all 0, whose masked mean Keras makes 0 / 0 = NaN) and NAME.y64.npy."""
    mask_table_fixtures(out, (("mask", mask_model, 139), ("mask_res", mask_res_model, 149),
                              ("mask_td", mask_td_model, 151)))
    # refused: the mask into a Concatenate (whose mask Keras computes with
    # op layers of its own)
    ids = keras.Input(shape=(8,), dtype="int32")
    e = layers.Embedding(20, 8, mask_zero=True)(ids)
    c = layers.Concatenate()([e, layers.Dense(8)(e)])
    keras.Model(ids, layers.Dense(3)(layers.GlobalAveragePooling1D()(c))).save(
        os.path.join(out, "mask_concat.keras"))


def mask_table_fixtures(out, table):
    """mask_fixtures' files for each (name, make_model, seed) of table."""
    for name, make_model, seed in table:
        m = make_model()
        r = np.random.default_rng(seed)
        randomize(m, r)
        m.save(os.path.join(out, name + ".keras"))
        if name != "mask_td":  # the .keras form alone
            m.save(os.path.join(out, name + ".h5"))
            m.save_weights(os.path.join(out, name + ".weights.h5"))
        x = r.integers(1, 20, (16, 8))
        keep = r.integers(1, 9, 16)
        x[np.arange(8)[None, :] >= keep[:, None]] = 0
        x = x.astype(np.int32)
        np.save(os.path.join(out, name + ".x.npy"), x)
        y = to_float64(m).predict(x, verbose=0)
        assert y.dtype == np.float64 and np.isfinite(y).all()
        np.save(os.path.join(out, name + ".y64.npy"), y)


# Keras's mask of Embedding(mask_zero=True) into the recurrent layers, their
# own seeds (--only=mask_rnn writes them alone)
def mask_rnn_model():
    """ids (8 int32 tokens, vocab 20) -> Embedding(20, 6, mask_zero=True) ->
    LSTM(5, return_sequences=True) (masked steps keep the state and output
    it: zero_output_for_mask False; its output keeps the mask) -> GRU(4)
    (the last kept step's state) -> Dense(3, softmax)."""
    return keras.Sequential([
        keras.Input(shape=(8,), dtype="int32"), layers.Embedding(20, 6, mask_zero=True),
        layers.LSTM(5, return_sequences=True), layers.GRU(4),
        layers.Dense(3, activation="softmax")])


def mask_bidir_model():
    """ids -> Embedding(20, 6, mask_zero=True) -> Bidirectional(SimpleRNN(4,
    return_sequences=True)) (concat; Keras forces zero_output_for_mask:
    masked steps 0 in both directions, the mask passed on) ->
    GlobalAveragePooling1D (the masked mean) -> Dense(3, softmax)."""
    return keras.Sequential([
        keras.Input(shape=(8,), dtype="int32"), layers.Embedding(20, 6, mask_zero=True),
        layers.Bidirectional(layers.SimpleRNN(4, return_sequences=True)),
        layers.GlobalAveragePooling1D(), layers.Dense(3, activation="softmax")])


def mask_rnn_fixtures(out):
    """NAME.keras, NAME.h5, NAME.weights.h5, NAME.x.npy and NAME.y64.npy (as
    mask_fixtures) of mask_rnn and mask_bidir: 16 rows of int32 ids in [1,
    20), each padded with 0 at its end after 1 to 8 kept steps, every third
    row at its start instead; mask_rnn's row 5 all padding (its output the
    head's softmax of the zero state: finite; the masked mean of
    mask_bidir would be 0 / 0 there)."""
    for name, make_model, seed in (("mask_rnn", mask_rnn_model, 167),
                                   ("mask_bidir", mask_bidir_model, 173)):
        m = make_model()
        r = np.random.default_rng(seed)
        randomize(m, r)
        for path in (name + ".keras", name + ".h5"):
            m.save(os.path.join(out, path))
        m.save_weights(os.path.join(out, name + ".weights.h5"))
        x = r.integers(1, 20, (16, 8))
        keep = r.integers(1, 9, 16)
        x[np.arange(8)[None, :] >= keep[:, None]] = 0
        for i in range(1, 16, 3):
            x[i] = np.roll(x[i], 8 - keep[i])
        if name == "mask_rnn":
            x[5] = 0
        x = x.astype(np.int32)
        np.save(os.path.join(out, name + ".x.npy"), x)
        y = to_float64(m).predict(x, verbose=0)
        assert y.dtype == np.float64 and np.isfinite(y).all()
        np.save(os.path.join(out, name + ".y64.npy"), y)


# Keras's Masking on a float sequence into the recurrent layers
# (--only=masking writes them alone)
def masking_rnn_model(masked=True):
    """x [8][3] float -> Masking(0.0) -> LSTM(5, return_sequences=True) ->
    GRU(4) -> Dense(3, softmax); masked=False leaves the Masking out (the
    same weights: it has none)."""
    m = [layers.Masking(mask_value=0.0)] if masked else []
    return keras.Sequential([keras.Input(shape=(8, 3))] + m + [
        layers.LSTM(5, return_sequences=True), layers.GRU(4),
        layers.Dense(3, activation="softmax")])


def masking_bidir_model(masked=True):
    """x [8][3] float -> Masking(0.0) -> Bidirectional(GRU(4,
    return_sequences=True)) -> GlobalAveragePooling1D (the masked mean) ->
    Dense(3, softmax), a Functional (Keras writes the mask's NotEqual and
    Any op layers)."""
    x = keras.Input(shape=(8, 3))
    h = layers.Masking(mask_value=0.0)(x) if masked else x
    h = layers.Bidirectional(layers.GRU(4, return_sequences=True))(h)
    h = layers.GlobalAveragePooling1D()(h)
    return keras.Model(x, layers.Dense(3, activation="softmax")(h))


def masking_fixtures(out):
    """NAME.keras, NAME.h5, NAME.weights.h5, NAME.x.npy and NAME.y64.npy of
    msk_rnn and msk_bidir: 16 rows of float x in [-1, 1), each padded with
    whole zero steps at its end after 1 to 8 kept steps, every third row at
    its start instead; in every row a kept step with feature 0 at 0 (and
    one at -0.0 in feature 1), which must stay kept; msk_rnn's row 5 all
    padding. The same weights without the Masking predict at least 1e-3
    away: the fixture sees the mask."""
    for name, make_model, seed in (("msk_rnn", masking_rnn_model, 181),
                                   ("msk_bidir", masking_bidir_model, 191)):
        m = make_model()
        r = np.random.default_rng(seed)
        randomize(m, r)
        for path in (name + ".keras", name + ".h5"):
            m.save(os.path.join(out, path))
        m.save_weights(os.path.join(out, name + ".weights.h5"))
        x = r.uniform(-1, 1, (16, 8, 3))
        keep = r.integers(1, 9, 16)
        x[np.arange(8)[None, :] >= keep[:, None]] = 0.0
        for i in range(1, 16, 3):
            x[i] = np.roll(x[i], 8 - keep[i], axis=0)
        for i in range(16):
            t = int(np.flatnonzero(np.any(x[i] != 0, axis=-1))[0]) if keep[i] else 0
            x[i, t, 0] = 0.0
            x[i, t, 1] = -0.0 if keep[i] > 1 else x[i, t, 1]
        if name == "msk_rnn":
            x[5] = 0.0
        x = x.astype(np.float32)
        np.save(os.path.join(out, name + ".x.npy"), x)
        y = to_float64(m).predict(x, verbose=0)
        assert y.dtype == np.float64 and np.isfinite(y).all()
        bare = make_model(masked=False)
        bare.set_weights(m.get_weights())
        assert np.abs(bare.predict(x, verbose=0) - y).max() > 1e-3, name
        np.save(os.path.join(out, name + ".y64.npy"), y)


def to_float64(model):
    """The same model in float64: its config with every dtype float64, the
    weights widened, so the predictions are Keras's own in double."""
    def widen(o):
        if isinstance(o, dict):
            return {k: ("float64" if k == "dtype" else widen(v)) for k, v in o.items()}
        if isinstance(o, list):
            return [widen(v) for v in o]
        return o
    cfg = widen(model.get_config())
    m64 = model.__class__.from_config(cfg)
    # float variables widened (Normalization's int32 count kept)
    m64.set_weights([w.astype(np.float64) if w.dtype.kind == "f" else w
                     for w in model.get_weights()])
    for layer in m64.layers:  # set_weights leaves an adapted Normalization's
        if isinstance(layer, layers.Normalization):  # constants as built
            layer.finalize_state()
    return m64


def randomize(model, rng):
    """Non-zero biases too, so a dropped bias is visible."""
    model.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32)
                       for w in model.get_weights()])


def write_inputs(out, name, model, rng, n=16):
    shape = (n,) + tuple(model.input_shape[1:])
    x = rng.uniform(0.0, 1.0, shape).astype(np.float32)
    np.save(os.path.join(out, name + ".x.npy"), x)
    y = to_float64(model).predict(x.astype(np.float64), verbose=0)
    assert y.dtype == np.float64
    np.save(os.path.join(out, name + ".y64.npy"), y)


def rnn_fixtures(out):
    """The recurrent and embedding fixtures, each from its
    own seed: lstm (Embedding(50, 8) -> LSTM(16) -> Dense softmax, T = 12,
    int32 ids), gru (GRU(12, return_sequences) -> GRU(8, go_backwards) ->
    Dense), gru_ra0 (GRU(7, reset_after=False)), simple_rnn (SimpleRNN(6,
    return_sequences, go_backwards) -> SimpleRNN(5, relu) -> Dense).
    Weights uniform in [-0.5, 0.5) (biases too); x uniform in [0, 1), or ids
    uniform in [0, 50) saved as int32."""
    T = 12
    models = (
        ("lstm", 31, lambda: keras.Sequential([
            keras.Input(shape=(T,), dtype="int32"), layers.Embedding(50, 8),
            layers.LSTM(16), layers.Dense(5, activation="softmax")])),
        ("gru", 37, lambda: keras.Sequential([
            keras.Input(shape=(T, 3)), layers.GRU(12, return_sequences=True),
            layers.GRU(8, go_backwards=True), layers.Dense(5, activation="softmax")])),
        ("gru_ra0", 41, lambda: keras.Sequential([
            keras.Input(shape=(T, 3)), layers.GRU(7, reset_after=False),
            layers.Dense(4, activation="softmax")])),
        ("simple_rnn", 43, lambda: keras.Sequential([
            keras.Input(shape=(T, 3)),
            layers.SimpleRNN(6, return_sequences=True, go_backwards=True),
            layers.SimpleRNN(5, activation="relu"), layers.Dense(5, activation="softmax")])),
    )
    for name, seed, make in models:
        keras.utils.set_random_seed(seed)
        r = np.random.default_rng(seed)
        m = make()
        randomize(m, r)
        m.save(os.path.join(out, name + ".keras"))
        if name == "lstm":
            x = r.integers(0, 50, (16, T)).astype(np.int32)
        else:
            x = r.uniform(0.0, 1.0, (16, T, 3)).astype(np.float32)
        np.save(os.path.join(out, name + ".x.npy"), x)
        if name != "simple_rnn":
            y = to_float64(m).predict(x.astype(np.float64), verbose=0)
        else:
            # SimpleRNN in float64: Keras 3.15 on JAX keeps the cell's state
            # float32 under a widened config (scan refuses the mixed carry),
            # so the same recurrence in NumPy float64 with Keras's weights,
            # checked against Keras's own float32 predictions
            w = [v.astype(np.float64) for v in m.get_weights()]
            h_in = x.astype(np.float64)[:, ::-1, :]  # go_backwards
            h = np.zeros((x.shape[0], 6))
            seq = []
            for t in range(T):
                h = np.tanh(h_in[:, t] @ w[0] + h @ w[1] + w[2])
                seq.append(h)
            h = np.zeros((x.shape[0], 5))
            for t in range(T):
                h = np.maximum(seq[t] @ w[3] + h @ w[4] + w[5], 0.0)
            z = h @ w[6] + w[7]
            y = np.exp(z - z.max(axis=1, keepdims=True))
            y /= y.sum(axis=1, keepdims=True)
            assert np.abs(y - m.predict(x, verbose=0)).max() < 1e-5
        assert y.dtype == np.float64
        np.save(os.path.join(out, name + ".y64.npy"), y)


# the masked-attention fixture, its own seed (--only=mha_mask writes it alone)
def mha_mask_model():
    """MultiHeadAttention called with attention_mask= a model Input (6, 6)
    of float32 (Keras casts it to bool: nonzero keeps), self-attention on a
    Dense projection of x, then GlobalAveragePooling1D -> Dense softmax."""
    x = keras.Input(shape=(6, 4), name="x")
    m = keras.Input(shape=(6, 6), name="mask")
    e = layers.Dense(8)(x)
    a = layers.MultiHeadAttention(2, 4)(e, e, attention_mask=m)
    g = layers.GlobalAveragePooling1D()(a)
    return keras.Model([x, m], layers.Dense(3, activation="softmax")(g))


def mha_mask_fixtures(out, n=16):
    """mha_mask.keras, .h5, .weights.h5; its inputs as mha_mask.x0.npy (x)
    and mha_mask.x1.npy (the mask), mha_mask.x.npy both per sample (as
    multi_fixtures), and Keras's float64 predictions. The mask pads the
    keys: sample s keeps keys j < 2 + s % 5 (Keras's padding mask), ANDed
    with a lower-triangle band in odd samples; query row 5 of every third
    sample keeps no key (Keras's uniform average of every value) and one
    sample keeps with 0.5 and 3 (any nonzero keeps)."""
    m = mha_mask_model()
    r = np.random.default_rng(113)
    randomize(m, r)
    m.save(os.path.join(out, "mha_mask.keras"))
    m.save(os.path.join(out, "mha_mask.h5"))
    m.save_weights(os.path.join(out, "mha_mask.weights.h5"))
    x = r.uniform(0.0, 1.0, (n, 6, 4)).astype(np.float32)
    mask = np.zeros((n, 6, 6), np.float32)
    for s in range(n):
        mask[s, :, :2 + s % 5] = 1.0
        if s % 2:
            mask[s] *= np.tril(np.ones((6, 6), np.float32), 1)
        if s % 3 == 0:
            mask[s, 5, :] = 0.0
    mask[4] *= np.where(np.arange(6) % 2, 0.5, 3.0).astype(np.float32)
    assert (mask.reshape(n * 6, 6).max(axis=1) == 0).any()
    for k, v in enumerate((x, mask)):
        np.save(os.path.join(out, "mha_mask.x%d.npy" % k), v)
    np.save(os.path.join(out, "mha_mask.x.npy"),
            np.concatenate([x.reshape(n, -1), mask.reshape(n, -1)], axis=1))
    y = to_float64(m).predict([x.astype(np.float64), mask.astype(np.float64)], verbose=0)
    assert y.dtype == np.float64
    np.save(os.path.join(out, "mha_mask.y64.npy"), y)
    # the same weights with dropout=0.2: Keras's predict takes its Softmax-
    # layer path then, which zeroes a row that keeps no key (mha_mask_drop)
    cfg = m.get_config()
    for lc in cfg["layers"]:
        if lc["class_name"] == "MultiHeadAttention":
            lc["config"]["dropout"] = 0.2
    d = keras.Model.from_config(cfg)
    d.set_weights(m.get_weights())
    y = to_float64(d).predict([x.astype(np.float64), mask.astype(np.float64)], verbose=0)
    assert np.abs(y - np.load(os.path.join(out, "mha_mask.y64.npy"))).max() > 1e-3
    np.save(os.path.join(out, "mha_mask_drop.y64.npy"), y)


# MultiHeadAttention fed Keras's implicit masks, and a bool attention_mask
# Input (--only=mha_imp writes them alone, their own seeds)
def mha_pad_model(mask_zero=True):
    """The tiny transformer with padding: ids (8 int32 tokens, vocab 20) ->
    Embedding(20, 8, mask_zero) -> MultiHeadAttention(2 heads, key_dim 4)
    self-attention (the query's and the value's mask ANDed into its
    attention mask; its output masked by the query's) -> residual Add ->
    LayerNormalization -> GlobalAveragePooling1D (the masked mean) ->
    Dense(3, softmax). No positional embedding: xo reads one Embedding, the
    first layer."""
    ids = keras.Input(shape=(8,), dtype="int32", name="ids")
    e = layers.Embedding(20, 8, mask_zero=mask_zero)(ids)
    a = layers.MultiHeadAttention(2, 4)(e, e)
    n = layers.LayerNormalization()(layers.Add()([e, a]))
    g = layers.GlobalAveragePooling1D()(n)
    return keras.Model(ids, layers.Dense(3, activation="softmax")(g))


def mha_bool_model(dtype="bool"):
    """Cross attention called with attention_mask= a bool (or, dtype, int)
    model Input (4, 6): a Dense projection of q attends to v, then
    GlobalAveragePooling1D -> Dense softmax."""
    q = keras.Input(shape=(4, 3), name="q")
    v = keras.Input(shape=(6, 5), name="v")
    m = keras.Input(shape=(4, 6), dtype=dtype, name="keep")
    a = layers.MultiHeadAttention(2, 4)(layers.Dense(8)(q), v, attention_mask=m)
    g = layers.GlobalAveragePooling1D()(a)
    return keras.Model([q, v, m], layers.Dense(3, activation="softmax")(g))


def mha_imp_fixtures(out, n=16):
    """mha_pad.{keras,h5,weights.h5}, mha_pad.x.npy (int32 ids in [1, 20),
    each row's tail padded with 0 after 1 to 8 kept steps: a padded query
    row keeps no key, Keras's uniform average of every value there, which
    the masked mean then skips) and mha_pad.y64.npy; the same weights
    without the mask predict otherwise (the fixture sees the mask).
    mha_bool.{keras,h5,weights.h5}, its inputs mha_bool.x0.npy (q),
    x1 (v), x2 (the bool mask: a random third of the keys dropped, query
    row 3 of every fourth sample none), mha_bool.x.npy all three per sample
    as float32 (the model API's form) and mha_bool.y64.npy."""
    m = mha_pad_model()
    r = np.random.default_rng(157)
    randomize(m, r)
    for form in ("keras", "h5"):
        m.save(os.path.join(out, "mha_pad." + form))
    m.save_weights(os.path.join(out, "mha_pad.weights.h5"))
    x = r.integers(1, 20, (n, 8))
    keep = r.integers(1, 9, n)
    keep[:3] = (1, 3, 8)
    x[np.arange(8)[None, :] >= keep[:, None]] = 0
    x = x.astype(np.int32)
    np.save(os.path.join(out, "mha_pad.x.npy"), x)
    y = to_float64(m).predict(x, verbose=0)
    assert y.dtype == np.float64 and np.isfinite(y).all()
    np.save(os.path.join(out, "mha_pad.y64.npy"), y)
    u = mha_pad_model(mask_zero=False)
    u.set_weights(m.get_weights())
    assert np.abs(to_float64(u).predict(x, verbose=0) - y).max() > 1e-3
    b = mha_bool_model()
    r = np.random.default_rng(163)
    randomize(b, r)
    for form in ("keras", "h5"):
        b.save(os.path.join(out, "mha_bool." + form))
    b.save_weights(os.path.join(out, "mha_bool.weights.h5"))
    q = r.uniform(-1.0, 1.0, (n, 4, 3)).astype(np.float32)
    v = r.uniform(-1.0, 1.0, (n, 6, 5)).astype(np.float32)
    mask = r.uniform(0.0, 1.0, (n, 4, 6)) >= 0.33
    mask[::4, 3, :] = False
    for k, a in enumerate((q, v, mask)):
        np.save(os.path.join(out, "mha_bool.x%d.npy" % k), a)
    np.save(os.path.join(out, "mha_bool.x.npy"),
            np.concatenate([a.reshape(n, -1).astype(np.float32) for a in (q, v, mask)], axis=1))
    y = to_float64(b).predict([q.astype(np.float64), v.astype(np.float64), mask], verbose=0)
    assert y.dtype == np.float64 and np.isfinite(y).all()
    np.save(os.path.join(out, "mha_bool.y64.npy"), y)
    ones = np.ones_like(mask)
    y1 = to_float64(b).predict([q.astype(np.float64), v.astype(np.float64), ones], verbose=0)
    assert np.abs(y1 - y).max() > 1e-3
    # the same model and weights with an int32 mask Input (Keras casts it
    # to bool): mha_int.keras predicts mha_bool.y64.npy
    t = mha_bool_model("int32")
    t.set_weights(b.get_weights())
    t.save(os.path.join(out, "mha_int.keras"))
    yi = to_float64(t).predict([q.astype(np.float64), v.astype(np.float64),
                                mask.astype(np.int32)], verbose=0)
    assert np.abs(yi - y).max() < 1e-12
    mask_cat_fixtures(out, n)


# MultiHeadAttention fed both the implicit mask of Embedding(mask_zero) ids
# and an explicit attention_mask Input (--only=mha_pad_mask writes them
# alone, their own seed)
def mha_pad_mask_model(mask_zero=True):
    """mha_pad_model's tiny transformer called with attention_mask= a bool
    Input (8, 8) too, which Keras ANDs with the ids' masks. The mask is the
    model's first input and the ids its second: the ids input need not be
    the first."""
    keep = keras.Input(shape=(8, 8), dtype="bool", name="keep")
    ids = keras.Input(shape=(8,), dtype="int32", name="ids")
    e = layers.Embedding(20, 8, mask_zero=mask_zero)(ids)
    a = layers.MultiHeadAttention(2, 4)(e, e, attention_mask=keep)
    n = layers.LayerNormalization()(layers.Add()([e, a]))
    g = layers.GlobalAveragePooling1D()(n)
    return keras.Model([keep, ids], layers.Dense(3, activation="softmax")(g))


def mha_pad_mask_fixtures(out, n=16):
    """mha_pad_mask.{keras,h5,weights.h5}; its inputs mha_pad_mask.x0.npy
    (the bool mask: a random third of the keys dropped, every key of query
    row 2 of every fourth sample) and x1 (int32 ids in [1, 20), each row's
    tail padded with 0 after 1 to 8 kept steps), mha_pad_mask.x.npy both per
    sample as float32 (the model API's form) and mha_pad_mask.y64.npy. The
    same weights without the ids' mask, and with an all-true mask, each
    predict otherwise (the fixture sees both masks)."""
    m = mha_pad_mask_model()
    r = np.random.default_rng(167)
    randomize(m, r)
    for form in ("keras", "h5"):
        m.save(os.path.join(out, "mha_pad_mask." + form))
    m.save_weights(os.path.join(out, "mha_pad_mask.weights.h5"))
    mask = r.uniform(0.0, 1.0, (n, 8, 8)) >= 0.33
    mask[::4, 2, :] = False
    x = r.integers(1, 20, (n, 8))
    keep = r.integers(1, 9, n)
    keep[:3] = (1, 3, 8)
    x[np.arange(8)[None, :] >= keep[:, None]] = 0
    x = x.astype(np.int32)
    np.save(os.path.join(out, "mha_pad_mask.x0.npy"), mask)
    np.save(os.path.join(out, "mha_pad_mask.x1.npy"), x)
    np.save(os.path.join(out, "mha_pad_mask.x.npy"),
            np.concatenate([mask.reshape(n, -1).astype(np.float32),
                            x.astype(np.float32)], axis=1))
    y = to_float64(m).predict([mask, x], verbose=0)
    assert y.dtype == np.float64 and np.isfinite(y).all()
    np.save(os.path.join(out, "mha_pad_mask.y64.npy"), y)
    u = mha_pad_mask_model(mask_zero=False)
    u.set_weights(m.get_weights())
    assert np.abs(to_float64(u).predict([mask, x], verbose=0) - y).max() > 1e-3
    y1 = to_float64(m).predict([np.ones_like(mask), x], verbose=0)
    assert np.abs(y1 - y).max() > 1e-3


def mha_ids_first_fixtures(out, n=16):
    """mha_ids_first.{keras,h5,weights.h5}: ids (int32) -> Embedding(20, 8)
    -> MultiHeadAttention(2, 4) called with attention_mask= a mask Input of
    Keras's default dtype, float32 (Keras casts it to bool), the ids the
    model's first input and the mask its second (Keras's natural order: the
    ids' dtype must land on the ids' line, not on the last input's); then
    GlobalAveragePooling1D -> Dense(3, softmax). Inputs x0 (int32 ids in
    [0, 20)), x1 (the mask, 0 and 1 with a third of the keys dropped, every
    key of query row 3 of every fourth sample), x.npy both per sample as
    float32 (the model API's form) and the float64 predictions y64."""
    ids = keras.Input(shape=(8,), dtype="int32", name="ids")
    keep = keras.Input(shape=(8, 8), name="keep")
    e = layers.Embedding(20, 8)(ids)
    a = layers.MultiHeadAttention(2, 4)(e, e, attention_mask=keep)
    g = layers.GlobalAveragePooling1D()(a)
    m = keras.Model([ids, keep], layers.Dense(3, activation="softmax")(g))
    r = np.random.default_rng(241)
    randomize(m, r)
    for form in ("keras", "h5"):
        m.save(os.path.join(out, "mha_ids_first." + form))
    m.save_weights(os.path.join(out, "mha_ids_first.weights.h5"))
    x = r.integers(0, 20, (n, 8)).astype(np.int32)
    mask = (r.uniform(0.0, 1.0, (n, 8, 8)) >= 0.33).astype(np.float32)
    mask[::4, 3, :] = 0.0
    np.save(os.path.join(out, "mha_ids_first.x0.npy"), x)
    np.save(os.path.join(out, "mha_ids_first.x1.npy"), mask)
    np.save(os.path.join(out, "mha_ids_first.x.npy"),
            np.concatenate([x.astype(np.float32), mask.reshape(n, -1)], axis=1))
    y = to_float64(m).predict([x, mask.astype(np.float64)], verbose=0)
    assert y.dtype == np.float64 and np.isfinite(y).all()
    np.save(os.path.join(out, "mha_ids_first.y64.npy"), y)
    y1 = to_float64(m).predict([x, np.ones_like(mask, np.float64)], verbose=0)
    assert np.abs(y1 - y).max() > 1e-3  # the mask matters


def mask_cat_model(unmasked=False, axis=-1, mask_zero=True):
    """Concatenate of masked tensors: ids -> Embedding(20, 8, mask_zero) e,
    Dense(4, relu)(e) (masked) or, unmasked=True, Conv1D(4, 3, same)(e)
    (Conv1D drops the mask: Keras's all-true mask for it), joined on axis
    -> GlobalAveragePooling1D (the masked mean, or with all true the plain
    one) -> Dense(3, softmax)."""
    ids = keras.Input(shape=(8,), dtype="int32", name="ids")
    e = layers.Embedding(20, 8, mask_zero=mask_zero)(ids)
    f = (layers.Conv1D(4, 3, padding="same")(e) if unmasked
         else layers.Dense(4, activation="relu")(e))
    c = layers.Concatenate(axis=axis)([e, f if axis == -1 else layers.Dense(8)(f)])
    g = layers.GlobalAveragePooling1D()(c)
    return keras.Model(ids, layers.Dense(3, activation="softmax")(g))


def mask_cat_fixtures(out, n):
    """mask_cat (both inputs masked: the ids' mask) and mask_cat1 (one
    unmasked: all true) .keras, .h5, .weights.h5, .x.npy (ids padded as
    mask_fixtures') and .y64.npy; mask_cat's prediction differs without the
    mask. mask_cat_t.keras: the same joined on the steps (axis 1), whose
    mask of the joined steps xo refuses."""
    for name, unmasked, seed in (("mask_cat", False, 167), ("mask_cat1", True, 173)):
        m = mask_cat_model(unmasked)
        r = np.random.default_rng(seed)
        randomize(m, r)
        for form in ("keras", "h5"):
            m.save(os.path.join(out, name + "." + form))
        m.save_weights(os.path.join(out, name + ".weights.h5"))
        x = r.integers(1, 20, (n, 8))
        keep = r.integers(1, 9, n)
        x[np.arange(8)[None, :] >= keep[:, None]] = 0
        x = x.astype(np.int32)
        np.save(os.path.join(out, name + ".x.npy"), x)
        y = to_float64(m).predict(x, verbose=0)
        assert y.dtype == np.float64 and np.isfinite(y).all()
        np.save(os.path.join(out, name + ".y64.npy"), y)
        u = mask_cat_model(unmasked, mask_zero=False)
        u.set_weights(m.get_weights())
        diff = np.abs(to_float64(u).predict(x, verbose=0) - y).max()
        # all true: the plain mean, up to the masked mean's order of sums
        assert (diff > 1e-3) if not unmasked else (diff < 1e-6), diff
    mask_cat_model(axis=1).save(os.path.join(out, "mask_cat_t.keras"))


def mask_merge_model(see=True):
    """Keras's masked Multiply, Maximum and Minimum: ids -> Embedding(20, 8,
    mask_zero) e; a = Dense(8, tanh)(e), b = Dense(8, sigmoid)(e) (both
    masked), c = Conv1D(8, 3, same)(e) (unmasked: Conv1D drops the mask);
    Maximum(Multiply(a, b), a) (both inputs masked: a masked step reads as 1
    in the product, 0 where both are; the first input's value in the
    maximum) -> the masked mean; Minimum(c, b) (one input masked: b's
    masked steps take c's value; the output unmasked) -> the plain mean;
    the two joined -> Dense(3, softmax). see=False: the same weights with
    the merges' inputs stripped of the mask (Flatten drops it; a Reshape
    gives the shape back) and the first mean given the ids' mask itself,
    so only the merges lose it."""
    ids = keras.Input(shape=(8,), dtype="int32", name="ids")
    e = layers.Embedding(20, 8, mask_zero=True)(ids)
    a = layers.Dense(8, activation="tanh")(e)
    b = layers.Dense(8, activation="sigmoid")(e)
    c = layers.Conv1D(8, 3, padding="same")(e)
    if not see:
        a, b = (layers.Reshape((8, 8))(layers.Flatten()(t)) for t in (a, b))
    x = layers.Maximum()([layers.Multiply()([a, b]), a])
    g1 = (layers.GlobalAveragePooling1D()(x) if see
          else layers.GlobalAveragePooling1D()(x, mask=keras.ops.not_equal(ids, 0)))
    g2 = layers.GlobalAveragePooling1D()(layers.Minimum()([c, b]))
    return keras.Model(ids, layers.Dense(3, activation="softmax")(
        layers.Concatenate()([g1, g2])))


def mask_merge_fixtures(out, n=16):
    """mask_merge.{keras,h5,weights.h5}, mask_merge.x.npy (int32 ids in
    [1, 20), tails padded with 0 after 1 to 8 kept steps; no row all
    padding, whose masked mean Keras makes 0 / 0 = NaN) and
    mask_merge.y64.npy; the same weights with the merges blind to the mask
    predict at least 1e-3 away (the fixture sees the merges' mask)."""
    m = mask_merge_model()
    r = np.random.default_rng(181)
    randomize(m, r)
    for form in ("keras", "h5"):
        m.save(os.path.join(out, "mask_merge." + form))
    m.save_weights(os.path.join(out, "mask_merge.weights.h5"))
    x = r.integers(1, 20, (n, 8))
    keep = r.integers(1, 9, n)
    keep[:3] = (1, 2, 8)
    x[np.arange(8)[None, :] >= keep[:, None]] = 0
    x = x.astype(np.int32)
    np.save(os.path.join(out, "mask_merge.x.npy"), x)
    y = to_float64(m).predict(x, verbose=0)
    assert y.dtype == np.float64 and np.isfinite(y).all()
    np.save(os.path.join(out, "mask_merge.y64.npy"), y)
    u = mask_merge_model(see=False)
    u.set_weights(m.get_weights())
    diff = np.abs(to_float64(u).predict(x, verbose=0) - y).max()
    print("mask_merge: max |merges without the mask - Keras| %.3g" % diff)
    assert diff > 1e-3, diff


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--only") and not a.startswith("--name=")]
    out = args[0] if args else "suites/golden/keras"
    os.makedirs(out, exist_ok=True)
    # --only=bn: the BatchNormalization fixtures alone (their own generator),
    # so adding them rewrote no other file
    if "--only=bn" in sys.argv[1:]:
        bn_fixtures(out)
        print("keras", keras.__version__, "wrote the bn fixtures to", out)
        return
    if "--only=rnn" in sys.argv[1:]:
        rnn_fixtures(out)
        print("keras", keras.__version__, "wrote the rnn fixtures to", out)
        return
    if "--only=conv2d" in sys.argv[1:]:
        conv2d_fixtures(out)
        print("keras", keras.__version__, "wrote the conv2d fixtures to", out)
        return
    if "--only=resize" in sys.argv[1:]:
        resize_fixtures(out)
        print("keras", keras.__version__, "wrote the resize fixtures to", out)
        return
    if "--only=graph" in sys.argv[1:]:
        graph_fixtures(out)
        print("keras", keras.__version__, "wrote the graph fixture to", out)
        return
    if "--only=multi" in sys.argv[1:]:
        multi_fixtures(out)
        print("keras", keras.__version__, "wrote the multi fixture to", out)
        return
    if "--only=shape2" in sys.argv[1:]:
        names = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--name=")]
        table_fixtures(out, SHAPE2, names)
        print("keras", keras.__version__, "wrote the shape2 fixtures to", out)
        return
    if "--only=dwconv" in sys.argv[1:]:
        names = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--name=")]
        table_fixtures(out, DWCONV, names)
        print("keras", keras.__version__, "wrote the dwconv fixtures to", out)
        return
    if "--only=convt" in sys.argv[1:]:
        table_fixtures(out, CONVT)
        print("keras", keras.__version__, "wrote the convt fixture to", out)
        return
    # --only=ln_pos: written alone, so adding it rewrote no other file
    if "--only=ln_pos" in sys.argv[1:]:
        ln_pos_fixtures(out)
        print("keras", keras.__version__, "wrote the ln_pos fixtures to", out)
        return
    if "--only=ln" in sys.argv[1:]:
        ln_fixtures(out)
        print("keras", keras.__version__, "wrote the ln fixtures to", out)
        return
    if "--only=d3" in sys.argv[1:]:
        d3_fixtures(out)
        print("keras", keras.__version__, "wrote the d3 fixtures to", out)
        return
    if "--only=mha" in sys.argv[1:]:
        table_fixtures(out, (("mha", mha_model, 107),))
        print("keras", keras.__version__, "wrote the mha fixtures to", out)
        return
    if "--only=mha_imp" in sys.argv[1:]:
        mha_imp_fixtures(out)
        print("keras", keras.__version__, "wrote the mha_imp fixtures to", out)
        return
    if "--only=mha_ids_first" in sys.argv[1:]:
        mha_ids_first_fixtures(out)
        print("keras", keras.__version__, "wrote the mha_ids_first fixtures to", out)
        return
    if "--only=mha_pad_mask" in sys.argv[1:]:
        mha_pad_mask_fixtures(out)
        print("keras", keras.__version__, "wrote the mha_pad_mask fixtures to", out)
        return
    if "--only=mha_mask" in sys.argv[1:]:
        mha_mask_fixtures(out)
        print("keras", keras.__version__, "wrote the mha_mask fixtures to", out)
        return
    if "--only=td" in sys.argv[1:]:
        table_fixtures(out, (("td", td_model, 83),))
        print("keras", keras.__version__, "wrote the td fixtures to", out)
        return
    if "--only=norm_bad" in sys.argv[1:]:
        norm_bad_fixtures(out)
        print("keras", keras.__version__, "wrote the norm_bad fixture to", out)
        return
    if "--only=norm_inv" in sys.argv[1:]:
        norm_inv_fixtures(out)
        print("keras", keras.__version__, "wrote the norm_inv fixtures to", out)
        return
    if "--only=norm" in sys.argv[1:]:
        norm_fixtures(out)
        print("keras", keras.__version__, "wrote the norm fixtures to", out)
        return
    if "--only=elu_neg" in sys.argv[1:]:  # alone: adding it rewrote no other file
        table_fixtures(out, ACTLAYERS, only=("elu_neg",))
        print("keras", keras.__version__, "wrote the elu_neg fixtures to", out)
        return
    if "--only=actlayers" in sys.argv[1:]:
        table_fixtures(out, ACTLAYERS)
        print("keras", keras.__version__, "wrote the actlayers fixtures to", out)
        return
    if "--only=keepdims" in sys.argv[1:]:
        table_fixtures(out, KEEPDIMS)
        mask_table_fixtures(out, (("mask_kd", mask_kd_model, 167),))
        print("keras", keras.__version__, "wrote the keepdims fixtures to", out)
        return
    if "--only=prelayers" in sys.argv[1:]:
        table_fixtures(out, PRELAYERS)
        print("keras", keras.__version__, "wrote the prelayers fixtures to", out)
        return
    if "--only=bidir" in sys.argv[1:]:
        table_fixtures(out, (("bidir", bidir_model, 89),))
        print("keras", keras.__version__, "wrote the bidir fixtures to", out)
        return
    if "--only=masking" in sys.argv[1:]:
        masking_fixtures(out)
        print("keras", keras.__version__, "wrote the masking fixtures to", out)
        return
    if "--only=mask_rnn" in sys.argv[1:]:
        mask_rnn_fixtures(out)
        print("keras", keras.__version__, "wrote the mask_rnn fixtures to", out)
        return
    if "--only=mask" in sys.argv[1:]:
        mask_fixtures(out)
        print("keras", keras.__version__, "wrote the mask fixtures to", out)
        return
    if "--only=mask_merge" in sys.argv[1:]:
        mask_merge_fixtures(out)
        print("keras", keras.__version__, "wrote the mask_merge fixtures to", out)
        return
    if "--only=pool2d" in sys.argv[1:]:
        pool2d_fixtures(out)
        print("keras", keras.__version__, "wrote the pool2d fixtures to", out)
        return
    keras.utils.set_random_seed(13)
    rng = np.random.default_rng(13)

    seed = seed_model()
    randomize(seed, rng)
    seed.save(os.path.join(out, "seed.keras"))
    seed.save(os.path.join(out, "seed.h5"))  # legacy HDF5 full model
    seed.save_weights(os.path.join(out, "seed.weights.h5"))
    with h5py.File(os.path.join(out, "seed.h5"), "r") as src, \
            h5py.File(os.path.join(out, "seed.legacy_weights.h5"), "w") as dst:
        g = src["model_weights"]
        for k, v in g.attrs.items():
            dst.attrs[k] = v
        for k in g:
            g.copy(g[k], dst, name=k)
    keras2_weights(os.path.join(out, "seed.keras2_weights.h5"), seed)
    write_inputs(out, "seed", seed, rng)

    mlp = mlp_model()
    randomize(mlp, rng)
    mlp.save(os.path.join(out, "mlp.keras"))
    write_inputs(out, "mlp", mlp, rng)

    fn = functional_model()
    randomize(fn, rng)
    fn.save(os.path.join(out, "functional.keras"))
    write_inputs(out, "functional", fn, rng)

    bad = keras.Sequential([keras.Input(shape=(4,)),
                            layers.Dense(3, kernel_regularizer="l2")])
    bad.save(os.path.join(out, "unsupported_option.keras"))
    inp = keras.Input(shape=(4,))
    a = layers.Dense(3)(inp)
    b = layers.Dense(3)(inp)
    bad = keras.Model(inp, layers.Add()([a, b]))
    bad.save(os.path.join(out, "not_chain.keras"))
    # its own generator, so the fixtures above do not change when it is added
    acts = acts_model()
    rng_acts = np.random.default_rng(17)
    randomize(acts, rng_acts)
    acts.save(os.path.join(out, "acts.keras"))
    write_inputs(out, "acts", acts, rng_acts)
    for name, make_model, seed in (("pool", pool_model, 19), ("gavg", pool_avg_model, 23)):
        m = make_model()
        r = np.random.default_rng(seed)
        randomize(m, r)
        m.save(os.path.join(out, name + ".keras"))
        write_inputs(out, name, m, r)
    bn_fixtures(out)
    pool2d_fixtures(out)
    rnn_fixtures(out)
    conv2d_fixtures(out)
    resize_fixtures(out)
    print("keras", keras.__version__, "wrote", out)


if __name__ == "__main__":
    main()
