#!/usr/bin/env python3
"""Writes suites/golden/keras_config/: Keras's own config.json per case.

Each case is one xo spec (CASE.model) and the same model built in Keras 3
and saved by model.save("CASE.keras"); CASE.json is that archive's
config.json, byte for byte as Keras wrote it, and CASE.h5config.json the
model_config attribute of model.save("CASE.h5") (the legacy format). suites/test_keras_config.c
saves the spec from xo and compares its config.json with CASE.json key by
key. The cases set every argument xo writes to a value other than Keras's
default where the layer has one (strides, padding, dilation, use_bias,
activation, BatchNormalization's momentum/epsilon/center/scale, the
recurrent layers' return_sequences, go_backwards and reset_after), so a
writer that drops or inverts one is caught; the compile_* cases are
compiled, with each optimizer's hyperparameters off their defaults. Nothing here is crossover code;
run in a venv with Keras:
    python3 -m venv .kvenv && .kvenv/bin/pip install keras jax h5py numpy
    .kvenv/bin/python scripts/make_keras_configs.py suites/golden/keras_config
"""
import os
import sys
import zipfile

os.environ.setdefault("KERAS_BACKEND", "jax")
import h5py  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402

CASES = {
    "conv1d": ("input 29 2\n"
               "conv1d filters=4 kernel_size=3 strides=2 padding=same activation=relu "
               "use_bias=0\n"
               "max_pooling1d pool_size=2 strides=1 padding=same\n"
               "conv1d filters=3 kernel_size=2 dilation_rate=2 padding=causal\n"
               "average_pooling1d pool_size=3\n"
               "average_pooling1d pool_size=2 strides=1 padding=same\n"
               "max_pooling1d pool_size=2\n"
               "global_max_pooling1d\n"
               "dense units=3 activation=softmax\n",
               lambda: [keras.Input(shape=(29, 2)),
                        layers.Conv1D(4, 3, strides=2, padding="same", activation="relu",
                                      use_bias=False),
                        layers.MaxPooling1D(2, strides=1, padding="same"),
                        layers.Conv1D(3, 2, dilation_rate=2, padding="causal"),
                        layers.AveragePooling1D(3),
                        layers.AveragePooling1D(2, strides=1, padding="same"),
                        layers.MaxPooling1D(2),
                        layers.GlobalMaxPooling1D(),
                        layers.Dense(3, activation="softmax")]),
    "dense": ("input 7\n"
              "dense units=5 activation=tanh name=hidden\n"
              "activation activation=gelu\n"
              "dropout rate=0.3\n"
              "dense units=6 activation=elu use_bias=0\n"
              "dense units=4 activation=softplus\n"
              "activation activation=sigmoid\n"
              "dense units=2 activation=linear\n"
              "activation activation=relu\n"
              "dense units=3 activation=softmax\n",
              lambda: [keras.Input(shape=(7,)),
                       layers.Dense(5, activation="tanh", name="hidden"),
                       layers.Activation("gelu"),
                       layers.Dropout(0.3),
                       layers.Dense(6, activation="elu", use_bias=False),
                       layers.Dense(4, activation="softplus"),
                       layers.Activation("sigmoid"),
                       layers.Dense(2, activation="linear"),
                       layers.Activation("relu"),
                       layers.Dense(3, activation="softmax")]),
    "conv2d": ("input 11 10 2\n"
               "conv2d filters=3 kernel_size=3 kernel_w=2 strides=2 strides_w=1 padding=same "
               "activation=relu\n"
               "max_pooling2d pool_size=2 pool_w=3 strides=1 strides_w=2 padding=same\n"
               "conv2d filters=4 kernel_size=2 dilation_rate=2 dilation_w=1 use_bias=0\n"
               "average_pooling2d pool_size=2\n"
               "max_pooling2d pool_size=1\n"
               "average_pooling2d pool_size=2 strides=1 padding=same\n"
               "flatten\n"
               "dense units=2 activation=softmax\n",
               lambda: [keras.Input(shape=(11, 10, 2)),
                        layers.Conv2D(3, (3, 2), strides=(2, 1), padding="same",
                                      activation="relu"),
                        layers.MaxPooling2D((2, 3), strides=(1, 2), padding="same"),
                        layers.Conv2D(4, 2, dilation_rate=(2, 1), use_bias=False),
                        layers.AveragePooling2D(2),
                        layers.MaxPooling2D(1),
                        layers.AveragePooling2D(2, strides=1, padding="same"),
                        layers.Flatten(),
                        layers.Dense(2, activation="softmax")]),
    "global2d": ("input 6 5 3\n"
                 "conv2d filters=2 kernel_size=1\n"
                 "global_average_pooling2d\n"
                 "dense units=2 activation=softmax\n",
                 lambda: [keras.Input(shape=(6, 5, 3)),
                          layers.Conv2D(2, 1),
                          layers.GlobalAveragePooling2D(),
                          layers.Dense(2, activation="softmax")]),
    "gmax2d": ("input 6 5 3\n"
               "global_max_pooling2d\n"
               "dense units=2 activation=softmax\n",
               lambda: [keras.Input(shape=(6, 5, 3)),
                        layers.GlobalMaxPooling2D(),
                        layers.Dense(2, activation="softmax")]),
    "bn": ("input 10 3\n"
           "batch_normalization momentum=0.9 epsilon=0.01 center=0\n"
           "batch_normalization scale=0\n"
           "batch_normalization center=0 scale=0\n"
           "batch_normalization\n"
           "global_average_pooling1d\n"
           "dense units=2 activation=softmax\n",
           lambda: [keras.Input(shape=(10, 3)),
                    layers.BatchNormalization(momentum=0.9, epsilon=0.01, center=False),
                    layers.BatchNormalization(scale=False),
                    layers.BatchNormalization(center=False, scale=False),
                    layers.BatchNormalization(),
                    layers.GlobalAveragePooling1D(),
                    layers.Dense(2, activation="softmax")]),
    "rnn": ("input 6 3\n"
            "simple_rnn units=4 activation=relu use_bias=0 return_sequences=1 "
            "go_backwards=1\n"
            "lstm units=3 return_sequences=1 go_backwards=1\n"
            "gru units=3 reset_after=0 return_sequences=1 go_backwards=1\n"
            "lstm units=2 use_bias=0 return_sequences=1\n"
            "gru units=2 use_bias=0 return_sequences=1\n"
            "simple_rnn units=2 return_sequences=1\n"
            "gru units=2\n"
            "dense units=2 activation=softmax\n",
            lambda: [keras.Input(shape=(6, 3)),
                     layers.SimpleRNN(4, activation="relu", use_bias=False,
                                      return_sequences=True, go_backwards=True),
                     layers.LSTM(3, return_sequences=True, go_backwards=True),
                     layers.GRU(3, reset_after=False, return_sequences=True,
                                go_backwards=True),
                     layers.LSTM(2, use_bias=False, return_sequences=True),
                     layers.GRU(2, use_bias=False, return_sequences=True),
                     layers.SimpleRNN(2, return_sequences=True),
                     layers.GRU(2),
                     layers.Dense(2, activation="softmax")]),
    "embedding": ("input 5 dtype=int32\n"
                  "embedding input_dim=11 output_dim=4\n"
                  "global_average_pooling1d\n"
                  "dense units=2 activation=softmax\n",
                  lambda: [keras.Input(shape=(5,), dtype="int32"),
                           layers.Embedding(11, 4),
                           layers.GlobalAveragePooling1D(),
                           layers.Dense(2, activation="softmax")]),
    # TimeDistributed: the wrapped layer's config nested under "layer" (its
    # own name, module and build_config: one step's shape); the last Dense
    # is dense_1 in Keras, whose names count the wrapped Dense too
    "time_distributed": ("input 4 9 3\n"
                         "time_distributed layer=conv1d filters=4 kernel_size=3 strides=2 "
                         "padding=same activation=relu use_bias=0\n"
                         "reshape target_shape=4,20\n"
                         "time_distributed layer=dense units=5 activation=tanh\n"
                         "flatten\n"
                         "dense units=3 activation=softmax name=dense_1\n",
                         lambda: [keras.Input(shape=(4, 9, 3)),
                                  layers.TimeDistributed(layers.Conv1D(
                                      4, 3, strides=2, padding="same", activation="relu",
                                      use_bias=False)),
                                  layers.Reshape((4, 20)),
                                  layers.TimeDistributed(layers.Dense(5, activation="tanh")),
                                  layers.Flatten(),
                                  layers.Dense(3, activation="softmax")]),
    # Bidirectional: merge_mode, the forward RNN under "layer" and Keras's
    # mirror of it under "backward_layer" (go_backwards true), each with its
    # own name and build_config
    "bidirectional": ("input 6 3\n"
                      "bidirectional layer=gru units=4 return_sequences=True\n"
                      "bidirectional layer=lstm units=3 merge_mode=ave\n"
                      "dense units=2 activation=softmax\n",
                      lambda: [keras.Input(shape=(6, 3)),
                               layers.Bidirectional(layers.GRU(4, return_sequences=True)),
                               layers.Bidirectional(layers.LSTM(3), merge_mode="ave"),
                               layers.Dense(2, activation="softmax")]),
}

# Compiled cases: the model's compile_config compared too (optimizer
# hyperparameters off their defaults; a loss without metrics).
_MLP = "input 5\ndense units=4 activation=relu\ndense units=3 activation=%s\n"
COMPILED = {
    "compile_adam": (_MLP % "softmax" +
                     "compile loss=categorical_crossentropy optimizer=adam learning_rate=0.003 "
                     "beta_1=0.85 beta_2=0.99 epsilon=1e-6 metrics=accuracy\n",
                     "softmax", "categorical_crossentropy",
                     lambda: keras.optimizers.Adam(learning_rate=0.003, beta_1=0.85,
                                                   beta_2=0.99, epsilon=1e-6),
                     ["accuracy"]),
    "compile_sgd": (_MLP % "sigmoid" +
                    "compile loss=binary_crossentropy optimizer=sgd learning_rate=0.05 "
                    "momentum=0.9 nesterov=True metrics=accuracy\n",
                    "sigmoid", "binary_crossentropy",
                    lambda: keras.optimizers.SGD(learning_rate=0.05, momentum=0.9,
                                                 nesterov=True),
                    ["accuracy"]),
    "compile_rmsprop": (_MLP % "linear" +
                        "compile loss=mean_squared_error optimizer=rmsprop learning_rate=0.002 "
                        "rho=0.8 momentum=0.1 epsilon=1e-5 metrics=none\n",
                        "linear", "mean_squared_error",
                        lambda: keras.optimizers.RMSprop(learning_rate=0.002, rho=0.8,
                                                         momentum=0.1, epsilon=1e-5),
                        None),
}


def compiled_case(act, loss, opt, metrics):
    def build():
        return [keras.Input(shape=(5,)), layers.Dense(4, activation="relu"),
                layers.Dense(3, activation=act)]
    return build, lambda m: m.compile(loss=loss, optimizer=opt(), metrics=metrics)


def graph_case():
    """A Functional: every merge layer, a residual Add with the input, a
    branch of the input, a tensor feeding several layers."""
    inp = keras.Input(shape=(6, 3))
    c1 = layers.Conv1D(3, 2, padding="same", activation="tanh", name="c1")(inp)
    c2 = layers.Conv1D(3, 2, padding="same", name="c2")(c1)
    res = layers.Add(name="res")([c2, inp])
    s = layers.Subtract(name="s")([res, c1])
    m = layers.Multiply(name="m")([s, c1])
    v = layers.Average(name="v")([m, res])
    mx = layers.Maximum(name="mx")([v, c2])
    mn = layers.Minimum(name="mn")([mx, inp])
    cat = layers.Concatenate(name="cat")([mn, c1])
    g = layers.GlobalAveragePooling1D(name="gap")(cat)
    return keras.Model(inp, layers.Dense(2, activation="softmax", name="head")(g))


CASES["graph"] = ("input 6 3\n"
                  "conv1d name=c1 filters=3 kernel_size=2 padding=same activation=tanh\n"
                  "conv1d name=c2 filters=3 kernel_size=2 padding=same\n"
                  "add name=res inputs=c2,input\n"
                  "subtract name=s inputs=res,c1\n"
                  "multiply name=m inputs=s,c1\n"
                  "average name=v inputs=m,res\n"
                  "maximum name=mx inputs=v,c2\n"
                  "minimum name=mn inputs=mx,input\n"
                  "concatenate name=cat inputs=mn,c1\n"
                  "global_average_pooling1d name=gap\n"
                  "dense name=head units=2 activation=softmax\n",
                  graph_case)


def bidir_graph_case():
    """A Functional with Bidirectional layers: their nodes' call arguments
    (Keras records mask: None), the input feeding a Bidirectional and a
    Conv1D whose sum feeds the next."""
    inp = keras.Input(shape=(6, 3))
    b = layers.Bidirectional(layers.LSTM(3, return_sequences=True), name="bi")(inp)
    c = layers.Conv1D(6, 1, name="c")(inp)
    s = layers.Add(name="s")([b, c])
    g = layers.Bidirectional(layers.GRU(2), merge_mode="mul", name="bg")(s)
    return keras.Model(inp, layers.Dense(2, activation="softmax", name="head")(g))


CASES["bidir_graph"] = ("input 6 3\n"
                        "bidirectional name=bi layer=lstm units=3 return_sequences=True\n"
                        "conv1d name=c filters=6 kernel_size=1 inputs=input\n"
                        "add name=s inputs=bi,c\n"
                        "bidirectional name=bg layer=gru units=2 merge_mode=mul\n"
                        "dense name=head units=2 activation=softmax\n",
                        bidir_graph_case)


def multi_case():
    """A Functional of two inputs joined on the time axis (both InputLayers
    at one depth: Keras lists them first, in input_layers' order)."""
    a = keras.Input(shape=(4, 3), name="a")
    b = keras.Input(shape=(2, 3), name="b")
    cat = layers.Concatenate(axis=1, name="cat")([a, b])
    c = layers.Conv1D(2, 3, activation="tanh", name="c")(cat)
    g = layers.GlobalAveragePooling1D(name="gap")(c)
    return keras.Model([a, b], layers.Dense(2, activation="softmax", name="head")(g))


CASES["multi"] = ("input name=a 4 3\n"
                  "input name=b 2 3\n"
                  "concatenate name=cat inputs=a,b axis=1\n"
                  "conv1d name=c filters=2 kernel_size=3 activation=tanh\n"
                  "global_average_pooling1d name=gap\n"
                  "dense name=head units=2 activation=softmax\n",
                  multi_case)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "suites/golden/keras_config"
    os.makedirs(out, exist_ok=True)
    cases = {name: (spec, build, None) for name, (spec, build) in CASES.items()}
    for name, (spec, act, loss, opt, metrics) in COMPILED.items():
        cases[name] = (spec,) + compiled_case(act, loss, opt, metrics)
    # further arguments: only these cases (the others' files stay as they are)
    if len(sys.argv) > 2:
        cases = {name: cases[name] for name in sys.argv[2:]}
    for name, (spec, build, compile_fn) in cases.items():
        keras.backend.clear_session()  # Keras's default names count from 0 again
        built = build()
        # a list of layers is a Sequential; a graph case builds its Model
        model = built if isinstance(built, keras.Model) else keras.Sequential(built)
        if compile_fn:
            compile_fn(model)
        path = os.path.join(out, name + ".keras")
        model.save(path)
        with zipfile.ZipFile(path) as z:
            cfg = z.read("config.json")
        os.unlink(path)
        with open(os.path.join(out, name + ".json"), "wb") as f:
            f.write(cfg)
        # the legacy full-model .h5 of the same model: its model_config
        # attribute (the config text xo's legacy reader maps)
        if not compile_fn:
            path = os.path.join(out, name + ".h5")
            model.save(path)
            with h5py.File(path, "r") as h:
                legacy = h.attrs["model_config"]
            os.unlink(path)
            if isinstance(legacy, bytes):
                legacy = legacy.decode("utf-8")
            with open(os.path.join(out, name + ".h5config.json"), "w") as f:
                f.write(legacy)
        with open(os.path.join(out, name + ".model"), "w") as f:
            f.write("# Keras %s: scripts/make_keras_configs.py\n" % keras.__version__)
            f.write(spec)
    print("wrote %d cases to %s (Keras %s)" % (len(cases), out, keras.__version__))


if __name__ == "__main__":
    main()
