#!/usr/bin/env python3
"""make_golden.py - golden fixtures for the model runtime from an independent
framework: Keras 3 on the JAX CPU backend, computed in float64.

For each model below it writes suites/golden/<model>/:

  model.model             the spec (crossover's format, DESIGN section 7)
  train.model             the same model with dropout rate 0 (only when the
                          model has dropout: training fixtures must not
                          depend on a dropout mask)
  weights/                initial weights, <layer>.kernel.npy / .bias.npy
                          (Keras layouts; float32 values, biases non-zero so a
                          dropped bias is caught)
  x.npy, pred.npy         inputs and Keras's predict() on them
  x_train.npy, y_train.npy  training data (one-hot labels)
  trained/                weights after fit(batch_size=BATCH, epochs=EPOCHS,
                          shuffle=False) with Adam (Keras defaults)
  loss.npy, accuracy.npy  the per-epoch loss and accuracy fit reported
  meta.txt                batch_size, epochs, steps (key=value lines)
  model.keras, model.h5   (keras_file models) the compiled model with its initial
                          weights, saved by Keras (.h5: the legacy format): its
                          compile_config / training_config is the spec's

Everything on the framework side runs in float64 (jax_enable_x64, floatx
float64) and is rounded to float32 only when written, so the fixtures are
the float64 answer to within half a float32 ulp; crossover computes in
float32 and the suite compares within the tolerance derived in
docs/model.md.

Usage (CI does not need this; the fixtures are committed):
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy keras jax
    /tmp/venv/bin/python scripts/make_golden.py [--out suites/golden]
"""
import argparse
import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import keras  # noqa: E402
import numpy as np  # noqa: E402

keras.config.set_floatx("float64")

SEED_SPEC = pathlib.Path(__file__).resolve().parent.parent / "models" / "seed.model"

# Models: the seed model, and two small ones that between them use every
# padding (valid, same, causal), strides > 1, dilation > 1, use_bias=False,
# max pooling with padding=same and strides != pool_size, explicit names and
# a linear activation.
MODELS = {
    "seed": {
        "spec": SEED_SPEC.read_text(),
        "n_pred": 16, "n_train": 96, "batch": 32, "epochs": 2, "x_range": (0.0, 1.0),
    },
    "mixed_a": {
        "spec": (
            "# golden: same/causal padding, strides 2, dilation 2, no bias,\n"
            "# max pooling with padding=same\n"
            "input 17 2\n"
            "conv1d filters=4 kernel_size=3 strides=2 padding=same activation=relu\n"
            "max_pooling1d pool_size=2 padding=same\n"
            "conv1d filters=3 kernel_size=2 padding=causal dilation_rate=2 "
            "use_bias=False activation=sigmoid\n"
            "flatten\n"
            "dense units=5 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 3, "x_range": (-1.0, 1.0),
    },
    "mixed_b": {
        "spec": (
            "# golden: dilated same padding, linear activation, strides 3,\n"
            "# pooling strides != pool_size, dense without bias, names\n"
            "input 24 3\n"
            "conv1d filters=6 kernel_size=5 dilation_rate=2 padding=same name=front\n"
            "max_pooling1d pool_size=3 strides=2\n"
            "conv1d filters=4 kernel_size=3 strides=3 use_bias=False activation=relu\n"
            "max_pooling1d pool_size=2 strides=1 padding=same name=pool_same\n"
            "flatten\n"
            "dropout rate=0.25\n"
            "dense units=8 activation=sigmoid use_bias=False\n"
            "dense units=4 activation=softmax name=head\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 3, "x_range": (-1.0, 1.0),
    },
    "acts": {
        "spec": (
            "# golden: the activations tanh, elu, gelu (exact), softplus as dense\n"
            "# activations (run as their own ops) and as Activation layers (one\n"
            "# whose derivative comes from y, one from x)\n"
            "input 29 1\n"
            "flatten\n"
            "dense units=16 activation=tanh\n"
            "dense units=12 activation=elu\n"
            "dense units=12 activation=gelu\n"
            "activation activation=tanh\n"
            "dense units=10 activation=softplus\n"
            "activation activation=gelu\n"
            "dense units=6 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-2.0, 2.0),
        "seed_offset": 3,
    },
    "acts2": {
        "spec": (
            "# golden: Keras 3's relu6, hard_sigmoid (relu6(x + 3) / 6), silu\n"
            "# (written swish here, Keras's alias) and log_softmax, as dense\n"
            "# activations and as Activation layers (derivatives from x, and\n"
            "# log_softmax's from y); log_softmax's outputs (<= 0) feed\n"
            "# activations that pass gradient there (silu, hard_sigmoid on\n"
            "# (-3, 0)), so every layer trains\n"
            "input 29 1\n"
            "flatten\n"
            "dense units=16 activation=swish\n"
            "activation activation=relu6\n"
            "dense units=12 activation=relu6\n"
            "activation activation=log_softmax\n"
            "dense units=12 activation=hard_sigmoid\n"
            "activation activation=silu\n"
            "dense units=10 activation=log_softmax\n"
            "activation activation=hard_sigmoid\n"
            "dense units=6 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-2.0, 2.0),
        "seed_offset": 47, "keras_file": True,
    },
    "pool_avg": {
        "spec": (
            "# golden: average pooling with padding=same (Keras averages the\n"
            "# valid steps only: windows clipped on both edges) and strides 1,\n"
            "# average pooling valid with the default strides, global average\n"
            "input 21 2\n"
            "conv1d filters=4 kernel_size=3 activation=relu\n"
            "average_pooling1d pool_size=4 strides=1 padding=same\n"
            "conv1d filters=5 kernel_size=3 activation=sigmoid\n"
            "average_pooling1d pool_size=2\n"
            "global_average_pooling1d\n"
            "dense units=4 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 3, "x_range": (-1.0, 1.0),
        "seed_offset": 3,
    },
    "pool_gmax": {
        "spec": (
            "# golden: global max pooling; average pooling same with strides 2;\n"
            "# max pooling same with strides != pool_size (odd clipping)\n"
            "input 19 3\n"
            "conv1d filters=6 kernel_size=3 activation=relu\n"
            "max_pooling1d pool_size=3 strides=2 padding=same\n"
            "conv1d filters=5 kernel_size=2 activation=relu\n"
            "average_pooling1d pool_size=3 strides=2 padding=same\n"
            "global_max_pooling1d\n"
            "dense units=5 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 3, "x_range": (-1.0, 1.0),
        "seed_offset": 4,
    },
    # BatchNormalization: statistics over batch and steps after a
    # conv, over the batch after a dense; training uses the batch statistics
    # and updates the moving ones, predict uses the moving ones. The layer
    # before BN has no bias: BN removes it, so its gradient is rounding noise
    # that Adam would amplify to steps of about lr (in float64 as in float32,
    # in different directions): a Keras model would be trained the same way.
    "bn_conv": {
        "spec": (
            "# golden: Conv1D -> BatchNormalization -> relu -> global average\n"
            "input 15 3\n"
            "conv1d filters=5 kernel_size=3 use_bias=False\n"
            "batch_normalization\n"
            "activation activation=relu\n"
            "global_average_pooling1d\n"
            "dense units=4 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 5,
    },
    "bn_mlp": {
        "spec": (
            "# golden: Dense -> BatchNormalization (center off, momentum 0.9,\n"
            "# epsilon 0.01) -> tanh -> Dense softmax\n"
            "input 10\n"
            "dense units=12 use_bias=False\n"
            "batch_normalization center=False momentum=0.9 epsilon=0.01\n"
            "activation activation=tanh\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 6,
    },
    # compile(loss, optimizer, metrics) other than the seed's:
    # the spec's compile line is what Keras compiles; labels follow the loss
    "cmp_bce_sgd": {
        "spec": (
            "# golden: binary_crossentropy + SGD(momentum 0.9, nesterov), a\n"
            "# sigmoid output of 2 units (binary accuracy per element)\n"
            "input 6\n"
            "dense units=8 activation=relu\n"
            "dense units=2 activation=sigmoid\n"
            "compile loss=binary_crossentropy optimizer=sgd learning_rate=0.05 "
            "momentum=0.9 nesterov=True metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 7, "keras_file": True,
    },
    "cmp_mse_rmsprop": {
        "spec": (
            "# golden: mean_squared_error + RMSprop (Keras defaults), a linear\n"
            "# output, no metric (Keras compiles none unless asked)\n"
            "input 7\n"
            "dense units=9 activation=tanh\n"
            "dense units=3\n"
            "compile loss=mean_squared_error optimizer=rmsprop\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 8,
    },
    "cmp_sparse_adam": {
        "spec": (
            "# golden: sparse_categorical_crossentropy + Adam, class ids as\n"
            "# labels (sparse categorical accuracy)\n"
            "input 5 2\n"
            "conv1d filters=4 kernel_size=2 activation=relu\n"
            "flatten\n"
            "dense units=4 activation=softmax\n"
            "compile loss=sparse_categorical_crossentropy optimizer=adam metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 9,
    },
    # categorical_crossentropy where Keras's clip decides: inputs in
    # [-30, 30) make logits of tens, so about half the samples' true class
    # has a softmax probability below 1e-7 (and some above 1 - 1e-7): those
    # add no gradient in Keras (jax.grad through the clip), and a trainer
    # that forms (p - t) / n for them drifts (docs/design.md)
    "cce_clip": {
        "spec": (
            "# golden: categorical_crossentropy + Adam on saturated softmax\n"
            "# outputs (true-class probabilities below 1e-7 and above 1 - 1e-7)\n"
            "input 6\n"
            "dense units=4 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 32, "batch": 16, "epochs": 2, "x_range": (-30.0, 30.0),
        "seed_offset": 60,
    },
    # the recurrent and embedding layers, trained two epochs
    # (their own seeds; T = 12)
    "lstm": {
        "spec": (
            "# golden: Embedding(50, 8) -> LSTM(16) -> Dense softmax, T = 12\n"
            "input 12 dtype=int32\n"
            "embedding input_dim=50 output_dim=8\n"
            "lstm units=16\n"
            "dense units=5 activation=softmax\n"
        ),
        "n_pred": 16, "n_train": 48, "batch": 16, "epochs": 2, "x_range": (0.0, 1.0),
        "seed_offset": 31,
    },
    "gru": {
        "spec": (
            "# golden: GRU(12, return_sequences) -> GRU(8, go_backwards) -> Dense\n"
            "input 12 3\n"
            "gru units=12 return_sequences=1\n"
            "gru units=8 go_backwards=1\n"
            "dense units=5 activation=softmax\n"
        ),
        "n_pred": 16, "n_train": 48, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 37,
    },
    # no simple_rnn here: Keras 3.15 on JAX cannot run SimpleRNN in float64
    # (its cell keeps a float32 state and jax.lax.scan refuses the mixed
    # carry); make_keras_files.py --only=rnn checks SimpleRNN's predictions
    # against the same recurrence in NumPy float64 instead
    # Conv2D: a fused relu, valid and same padding,
    # strides (2, 1) and a (3, 2) kernel, between 2-D max pooling and a
    # dense head (--only cnn2d); and Conv2D -> BatchNormalization (statistics
    # over batch, height and width) -> relu -> global average (--only cnn_bn).
    # Their own seed_offsets, so no other fixture changes.
    "cnn2d": {
        "spec": (
            "# golden: Conv2D relu -> MaxPooling2D -> Conv2D (3, 2) kernel,\n"
            "# strides (2, 1), same padding -> Flatten -> Dense softmax\n"
            "input 12 12 1\n"
            "conv2d filters=8 kernel_size=3 activation=relu\n"
            "max_pooling2d pool_size=2\n"
            "conv2d filters=8 kernel_size=3 kernel_w=2 strides=2 strides_w=1 padding=same\n"
            "flatten\n"
            "dense units=10 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (0.0, 1.0),
        "seed_offset": 41,
    },
    "cnn_bn": {
        "spec": (
            "# golden: Conv2D (no bias) -> BatchNormalization -> relu ->\n"
            "# GlobalAveragePooling2D -> Dense softmax\n"
            "input 10 9 2\n"
            "conv2d filters=6 kernel_size=3 use_bias=False\n"
            "batch_normalization\n"
            "activation activation=relu\n"
            "global_average_pooling2d\n"
            "dense units=4 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 43,
    },
    # ZeroPadding1D: asymmetric margins between two Conv1D layers (its
    # backward crops the gradient the first conv's kernel sees), Keras's
    # default padding=1 before the head (--only pad1d)
    "pad1d": {
        "spec": (
            "# golden: Conv1D -> ZeroPadding1D (1, 2) -> Conv1D -> ZeroPadding1D\n"
            "# (default 1) -> Flatten -> Dense softmax\n"
            "input 11 2\n"
            "conv1d filters=4 kernel_size=3 activation=relu\n"
            "zero_padding1d padding=1,2\n"
            "conv1d filters=3 kernel_size=3 activation=tanh\n"
            "zero_padding1d\n"
            "flatten\n"
            "dense units=4 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 47,
    },
    # ZeroPadding1D, UpSampling1D and Cropping1D in one Conv1D model: the
    # upsampling's backward sums the repeated gradients, the cropping's pads
    # them with zeros (--only resize1d)
    "resize1d": {
        "spec": (
            "# golden: Conv1D -> ZeroPadding1D 2 -> UpSampling1D 3 -> Conv1D ->\n"
            "# Cropping1D (3, 1) -> Flatten -> Dense softmax\n"
            "input 9 2\n"
            "conv1d filters=3 kernel_size=3 activation=relu\n"
            "zero_padding1d padding=2\n"
            "up_sampling1d size=3\n"
            "conv1d filters=4 kernel_size=5 strides=2 activation=tanh\n"
            "cropping1d cropping=3,1\n"
            "flatten\n"
            "dense units=5 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 53,
    },
    # ZeroPadding2D ((1, 0), (2, 1)), UpSampling2D (2, 3) and Cropping2D
    # (symmetric (1, 2)) in one Conv2D model (--only resize2d)
    "resize2d": {
        "spec": (
            "# golden: Conv2D -> ZeroPadding2D ((1, 0), (2, 1)) -> UpSampling2D\n"
            "# (2, 3) -> Conv2D strides 2 -> Cropping2D (1, 2) -> Flatten -> Dense\n"
            "input 6 5 2\n"
            "conv2d filters=3 kernel_size=3 activation=relu\n"
            "zero_padding2d padding=1,0,2,1\n"
            "up_sampling2d size=2 size_w=3\n"
            "conv2d filters=4 kernel_size=3 strides=2 activation=tanh\n"
            "cropping2d cropping=1,2\n"
            "flatten\n"
            "dense units=4 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 59,
    },
    # LayerNormalization (--only ln_seq --only ln_cnn): on a [T][F] sequence
    # and on a Dense's flat output; on a [h][w][ch] image with beta alone
    "ln_seq": {
        "spec": (
            "# golden: Conv1D tanh -> LayerNormalization -> Flatten -> Dense ->\n"
            "# LayerNormalization (center off, epsilon 0.01) -> Dense softmax\n"
            "input 9 3\n"
            "conv1d filters=5 kernel_size=2 activation=tanh\n"
            "layer_normalization\n"
            "flatten\n"
            "dense units=8\n"
            "layer_normalization center=False epsilon=0.01\n"
            "dense units=4 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 47,
    },
    "ln_cnn": {
        "spec": (
            "# golden: Conv2D -> LayerNormalization (scale off) -> relu ->\n"
            "# GlobalAveragePooling2D -> Dense softmax\n"
            "input 6 5 2\n"
            "conv2d filters=4 kernel_size=2\n"
            "layer_normalization scale=False\n"
            "activation activation=relu\n"
            "global_average_pooling2d\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 53,
    },
    # Dense on inputs of rank 3 and more (--only d3_seq --only d3_cnn): on
    # the last axis of a [T][F] sequence and of a [h][w][ch] image
    "d3_seq": {
        "spec": (
            "# golden: Conv1D -> Dense on [T][F] -> LayerNormalization ->\n"
            "# GlobalAveragePooling1D -> Dense softmax\n"
            "input 9 3\n"
            "conv1d filters=5 kernel_size=2 activation=relu\n"
            "dense units=8\n"
            "layer_normalization\n"
            "global_average_pooling1d\n"
            "dense units=4 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 71,
    },
    "d3_cnn": {
        "spec": (
            "# golden: Conv2D -> Dense on [h][w][ch] (gelu, no bias) ->\n"
            "# Flatten -> Dense softmax\n"
            "input 6 5 2\n"
            "conv2d filters=4 kernel_size=2\n"
            "dense units=5 activation=gelu use_bias=False\n"
            "flatten\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 73,
    },
    # the layers that move data without arithmetic, trained through
    # (--only shape_seq): RepeatVector, Permute and Reshape between
    # layers with weights, so their backward carries every gradient
    "shape_seq": {
        "spec": (
            "# golden: Dense -> RepeatVector -> Conv1D -> Permute -> Reshape ->\n"
            "# Conv1D -> Flatten -> Dense softmax\n"
            "input 6\n"
            "dense units=4 activation=tanh\n"
            "repeat_vector n=3\n"
            "conv1d filters=5 kernel_size=2 activation=tanh\n"
            "permute dims=2,1\n"
            "reshape target_shape=2,5\n"
            "conv1d filters=3 kernel_size=2\n"
            "flatten\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 79,
    },
    # DepthwiseConv2D and DepthwiseConv1D (--only dw_cnn --only dw_seq): a
    # depth multiplier, same padding, strides, a fused and a separate
    # activation
    "dw_cnn": {
        "spec": (
            "# golden: DepthwiseConv2D (x2, same, relu) -> DepthwiseConv2D\n"
            "# (2, 3) strides (2, 1) tanh -> Flatten -> Dense softmax\n"
            "input 6 5 3\n"
            "depthwise_conv2d kernel_size=3 depth_multiplier=2 padding=same activation=relu\n"
            "depthwise_conv2d kernel_size=2 kernel_w=3 strides=2 strides_w=1 activation=tanh\n"
            "flatten\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 79, "keras_file": True,
    },
    # TimeDistributed (--only td_seq): over Conv1D on a [T][len][ch]
    # sample (stride 2) and over Dense on [T][F], trained through
    "td_seq": {
        "spec": (
            "# golden: TimeDistributed(Conv1D) -> Reshape -> TimeDistributed(Dense) ->\n"
            "# Flatten -> Dense softmax\n"
            "input 4 7 2\n"
            "time_distributed layer=conv1d filters=3 kernel_size=3 strides=2 activation=tanh\n"
            "reshape target_shape=4,9\n"
            "time_distributed layer=dense units=5 activation=relu\n"
            "flatten\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 83, "keras_file": True,
    },
    # Bidirectional (--only bi_seq): over GRU with return_sequences (concat:
    # the backward direction flipped back in time), then over LSTM (last
    # states, sum), trained through both directions
    "bi_seq": {
        "spec": (
            "# golden: Bidirectional(GRU, return_sequences) -> Bidirectional(LSTM, sum) ->\n"
            "# Dense softmax\n"
            "input 6 3\n"
            "bidirectional layer=gru units=4 return_sequences=True\n"
            "bidirectional layer=lstm units=3 merge_mode=sum\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 89, "keras_file": True,
    },
    # Bidirectional with return_sequences and merge_mode mul (--only bi_mul):
    # the merge's backward reads both directions' outputs at the same step
    # (the backward one flipped back in time), so a gradient that pairs a
    # step with another step's output trains to other weights
    "bi_mul": {
        "spec": (
            "# golden: Bidirectional(GRU, return_sequences, mul) -> Bidirectional(LSTM, ave)\n"
            "# -> Dense softmax\n"
            "input 6 3\n"
            "bidirectional layer=gru units=4 return_sequences=True merge_mode=mul\n"
            "bidirectional layer=lstm units=3 merge_mode=ave\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 239,
    },
    # a functional graph (--only res_cnn): a residual Conv1D block (Conv1D ->
    # Conv1D -> Add with the block's input -> relu) concatenated with a 1x1
    # Conv1D branch of the input, then GlobalAveragePooling1D -> Dense; the
    # input and c1 each feed two layers (their gradients are sums)
    "res_cnn": {
        "spec": (
            "# golden: residual Conv1D block, Add, Concatenate with a branch\n"
            "input 8 4\n"
            "conv1d name=c1 filters=4 kernel_size=3 padding=same activation=relu\n"
            "conv1d name=c2 filters=4 kernel_size=3 padding=same\n"
            "add name=res inputs=c2,input\n"
            "activation name=act activation=relu\n"
            "conv1d name=branch inputs=input filters=3 kernel_size=1 activation=tanh\n"
            "multiply name=gate inputs=branch,branch\n"
            "concatenate name=cat inputs=act,gate\n"
            "global_average_pooling1d name=gap\n"
            "dense name=head units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 79, "keras_file": True,
    },
    "dw_seq": {
        "spec": (
            "# golden: DepthwiseConv1D (x2, same, sigmoid) -> DepthwiseConv1D\n"
            "# strides 2 without bias -> GlobalAveragePooling1D -> Dense softmax\n"
            "input 9 4\n"
            "depthwise_conv1d kernel_size=3 depth_multiplier=2 padding=same activation=sigmoid\n"
            "depthwise_conv1d kernel_size=2 strides=2 use_bias=False\n"
            "global_average_pooling1d\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 83,
    },
    # MultiHeadAttention (--only mha_enc, --only mha_dec): a transformer
    # encoder block (Dense input projection -> self-attention -> Add ->
    # LayerNormalization -> Dense ff -> Dense -> Add -> LayerNormalization ->
    # GlobalAveragePooling1D -> Dense softmax), and the same block as a causal
    # decoder block (use_causal_mask=True); value_dim stays key_dim (Keras on
    # JAX refuses another in its dot_product_attention path). SGD, not Adam:
    # the key bias's gradient is identically 0 (the softmax cancels it), and
    # Keras's is rounding noise of its attention path (~1e-11 here), which
    # Adam's division by sqrt(v) + 1e-7 turns into steps of ~1e-7 each
    # (xo's is exactly 0): a difference of noise, not of the math
    "mha_enc": {
        "spec": (
            "# golden: transformer encoder block (2 heads, key_dim 8, d 16, T 8)\n"
            "input 8 4\n"
            "dense name=proj units=16\n"
            "multi_head_attention name=mha inputs=proj,proj num_heads=2 key_dim=8\n"
            "add name=res1 inputs=proj,mha\n"
            "layer_normalization name=ln1\n"
            "dense name=ff1 units=32 activation=relu\n"
            "dense name=ff2 units=16\n"
            "add name=res2 inputs=ln1,ff2\n"
            "layer_normalization name=ln2\n"
            "global_average_pooling1d name=gap\n"
            "dense name=head units=3 activation=softmax\n"
            "compile loss=categorical_crossentropy optimizer=sgd learning_rate=0.05 "
            "momentum=0.9 metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 97, "keras_file": True,
    },
    "mha_dec": {
        "spec": (
            "# golden: causal decoder block (2 heads, key_dim 8, d 16, T 8)\n"
            "input 8 4\n"
            "dense name=proj units=16\n"
            "multi_head_attention name=mha inputs=proj,proj num_heads=2 key_dim=8 "
            "use_causal_mask=True\n"
            "add name=res1 inputs=proj,mha\n"
            "layer_normalization name=ln1\n"
            "dense name=ff1 units=32 activation=relu\n"
            "dense name=ff2 units=16\n"
            "add name=res2 inputs=ln1,ff2\n"
            "layer_normalization name=ln2\n"
            "global_average_pooling1d name=gap\n"
            "dense name=head units=3 activation=softmax\n"
            "compile loss=categorical_crossentropy optimizer=sgd learning_rate=0.05 "
            "momentum=0.9 metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 101, "keras_file": True,
    },
    # Keras's mask of Embedding(mask_zero=True): ids padded with 0 (cfg pad),
    # passed on by Dense and LayerNormalization (and, in emb_mask_res, by an
    # Add of two masked tensors) to a masked GlobalAveragePooling1D
    "emb_mask": {
        "spec": (
            "# golden: Embedding(20, 8, mask_zero) -> Dense relu -> LayerNormalization\n"
            "# -> masked GlobalAveragePooling1D -> Dense softmax, T = 8\n"
            "input 8 dtype=int32\n"
            "embedding input_dim=20 output_dim=8 mask_zero=True\n"
            "dense units=8 activation=relu\n"
            "layer_normalization\n"
            "global_average_pooling1d\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (0.0, 1.0),
        "seed_offset": 131, "pad": True,
    },
    "emb_mask_res": {
        "spec": (
            "# golden: a residual Add of two masked tensors before the masked mean\n"
            "input 8 dtype=int32\n"
            "embedding name=emb input_dim=20 output_dim=8 mask_zero=True\n"
            "dense name=ff units=8 activation=relu\n"
            "add name=res inputs=emb,ff\n"
            "layer_normalization name=ln\n"
            "global_average_pooling1d name=gap\n"
            "dense name=head units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (0.0, 1.0),
        "seed_offset": 137, "pad": True,
    },
    # Keras's masked Multiply, Maximum and Minimum (--only emb_mask_merge):
    # both inputs masked (a masked step read as 1, or as the other input's
    # value), into the masked mean; and a Minimum of an unmasked Conv1D
    # (which drops the mask) and a masked tensor, unmasked after it, into
    # the plain mean
    "emb_mask_merge": {
        "spec": (
            "# golden: masked Multiply, Maximum and Minimum before the means\n"
            "input 8 dtype=int32\n"
            "embedding name=emb input_dim=20 output_dim=8 mask_zero=True\n"
            "dense name=fa units=8 activation=tanh\n"
            "dense name=fb inputs=emb units=8 activation=sigmoid\n"
            "conv1d name=c inputs=emb filters=8 kernel_size=3 padding=same\n"
            "multiply name=mul inputs=fa,fb\n"
            "maximum name=mx inputs=mul,fa\n"
            "global_average_pooling1d name=g1\n"
            "minimum name=mn inputs=c,fb\n"
            "global_average_pooling1d name=g2\n"
            "concatenate name=cat inputs=g1,g2\n"
            "dense name=head units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (0.0, 1.0),
        "seed_offset": 179, "pad": True,
    },
    # SeparableConv2D (--only sep_cnn): two kernels, the pointwise one with
    # the bias and the fused activation
    "sep_cnn": {
        "spec": (
            "# golden: SeparableConv2D (4, x2, same, relu) -> SeparableConv2D\n"
            "# (3, (2, 3), strides (2, 1)) -> Flatten -> Dense softmax\n"
            "input 6 5 3\n"
            "separable_conv2d filters=4 kernel_size=3 depth_multiplier=2 padding=same "
            "activation=relu\n"
            "separable_conv2d filters=3 kernel_size=2 kernel_w=3 strides=2 strides_w=1\n"
            "flatten\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 89, "keras_file": True,
    },
    # several inputs (--only multi_seq): a sequence through Conv1D joined
    # with a second sequence along the time axis (Concatenate axis=1), a
    # flat third input through Dense, the branches joined on the last axis;
    # gradients reach every branch
    "multi_seq": {
        "spec": (
            "# golden: three inputs, Concatenate on the time axis and the last\n"
            "input name=seq 6 3\n"
            "input name=tail 4 3\n"
            "input name=flat 5\n"
            "conv1d name=c1 inputs=seq filters=3 kernel_size=3 padding=same activation=relu\n"
            "concatenate name=join_t inputs=c1,tail axis=1\n"
            "conv1d name=c2 filters=4 kernel_size=3 activation=tanh\n"
            "global_average_pooling1d name=gap\n"
            "dense name=df inputs=flat units=4 activation=relu\n"
            "concatenate name=join inputs=gap,df\n"
            "dense name=head units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 107, "keras_file": True,
    },
    # Conv2DTranspose (--only ct_ae): a tiny autoencoder's shape, Conv2D
    # strides 2 -> Conv2DTranspose strides 2 (same, relu) ->
    # Conv2DTranspose (2, 3) strides (2, 1), valid, output_padding (1, 0),
    # no bias, tanh -> Conv2D strides 2 -> Dense
    "ct_ae": {
        "spec": (
            "# golden: Conv2D s2 -> Conv2DTranspose s2 same relu -> Conv2DTranspose\n"
            "# (2, 3) s (2, 1) output_padding (1, 0) tanh -> Conv2D s2 -> Dense softmax\n"
            "input 6 6 1\n"
            "conv2d filters=4 kernel_size=3 strides=2 padding=same activation=relu\n"
            "conv2d_transpose filters=3 kernel_size=3 strides=2 padding=same activation=relu\n"
            "conv2d_transpose filters=2 kernel_size=2 kernel_w=3 strides=2 strides_w=1 "
            "output_padding=1 output_padding_w=0 use_bias=False activation=tanh\n"
            "conv2d filters=2 kernel_size=3 strides=2\n"
            "flatten\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 97, "keras_file": True,
    },
    # The ReLU and Softmax layer classes (--only acts3): a MobileNet-style
    # block, ReLU(max_value=6) after the convolutions (inputs in [-6, 6],
    # so the clip at 6 is reached), ReLU() unclipped, and Softmax over the
    # channels of each position before the pooling
    "acts3": {
        "spec": (
            "# golden: Conv2D -> ReLU(6) -> DepthwiseConv2D -> ReLU(6) -> 1x1 Conv2D\n"
            "# -> ReLU -> 1x1 Conv2D -> Softmax (channels) -> GAP2D -> Dense softmax\n"
            "input 6 6 2\n"
            "conv2d filters=4 kernel_size=3 padding=same\n"
            "re_lu max_value=6\n"
            "depthwise_conv2d kernel_size=3 padding=same\n"
            "re_lu max_value=6\n"
            "conv2d filters=6 kernel_size=1\n"
            "re_lu\n"
            "conv2d filters=5 kernel_size=1\n"
            "softmax axis=-1\n"
            "global_average_pooling2d\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-6.0, 6.0),
        "seed_offset": 109, "keras_file": True,
    },
    # Rescaling in front of an image CNN (--only rescale_cnn): the inputs in
    # [-1, 1) scaled to [-3, 1) and again to [-1.25, 0.75) (scales and
    # offsets exact in float32, so Keras's float64 run uses xo's values)
    "rescale_cnn": {
        "spec": (
            "# golden: Rescaling(2, -1) -> Rescaling(0.5, 0.25) -> Conv2D relu\n"
            "# -> Flatten -> Dense softmax\n"
            "input 6 5 2\n"
            "rescaling scale=2 offset=-1\n"
            "rescaling scale=0.5 offset=0.25\n"
            "conv2d filters=3 kernel_size=3 activation=relu\n"
            "flatten\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 127, "keras_file": True,
    },
    # Normalization in front of an MLP (--only norm_mlp): its mean and
    # variance drawn as an adapted layer's (initial_weights), the inputs in
    # [-1, 1); training leaves them bit-identical (make asserts it, and the
    # trained files are compared as every variable)
    "norm_mlp": {
        "spec": (
            "# golden: Normalization (adapted) -> Dense relu -> Dense softmax\n"
            "input 6\n"
            "normalization\n"
            "dense units=8 activation=relu\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 131, "keras_file": True,
    },
    # LeakyReLU on a 1-D CNN (--only leaky_cnn): the layer with a slope of
    # its own (0.25, exact in float32 as every slope here) and Keras's
    # default 0.3, and the "leaky_relu" activation string (0.2) on a Conv1D;
    # inputs in [-1, 1) so both sides of every kink are reached
    "leaky_cnn": {
        "spec": (
            "# golden: Conv1D -> LeakyReLU(0.25) -> Conv1D leaky_relu -> LeakyReLU\n"
            "# -> Flatten -> Dense softmax\n"
            "input 12 3\n"
            "conv1d filters=4 kernel_size=3\n"
            "leaky_re_lu negative_slope=0.25\n"
            "conv1d filters=4 kernel_size=3 activation=leaky_relu\n"
            "leaky_re_lu\n"
            "flatten\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 139, "keras_file": True,
    },
    # ELU with an alpha of its own (--only elu_cnn): after a Conv1D with the
    # "elu" activation string (alpha 1), ELU(alpha=0.75) and ELU() (1.0)
    "elu_cnn": {
        "spec": (
            "# golden: Conv1D elu -> ELU(0.75) -> Conv1D -> ELU -> Flatten\n"
            "# -> Dense softmax\n"
            "input 12 3\n"
            "conv1d filters=4 kernel_size=3 activation=elu\n"
            "elu alpha=0.75\n"
            "conv1d filters=4 kernel_size=3\n"
            "elu\n"
            "flatten\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 149, "keras_file": True,
    },
    # MultiHeadAttention with attention_mask= a model input (--only
    # mha_mask): the mask input drawn as padding masks (mask_inputs, draw:
    # each sample keeps a random prefix of the keys, some query rows none,
    # Keras's uniform average there), ANDed with the causal mask; SGD as
    # mha_enc (the key bias's gradient is identically 0)
    "mha_mask": {
        "spec": (
            "# golden: self-attention with an attention_mask input (2 heads, key_dim 4)\n"
            "input name=x 6 4\n"
            "input name=mask 6 6\n"
            "dense name=proj inputs=x units=8\n"
            "multi_head_attention name=mha inputs=proj,proj attention_mask=mask num_heads=2 "
            "key_dim=4 use_causal_mask=True\n"
            "add name=res inputs=proj,mha\n"
            "global_average_pooling1d name=gap\n"
            "dense name=head units=3 activation=softmax\n"
            "compile loss=categorical_crossentropy optimizer=sgd learning_rate=0.05 "
            "momentum=0.9 metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 113, "mask_inputs": ("mask",),
    },
    # Keras's mask of Embedding(mask_zero=True) into the recurrent layers
    # (--only emb_mask_rnn --only emb_mask_bidir): ids padded at the end,
    # every third row at the start (pad_front), one row all padding where
    # Keras's output is finite (pad_empty: LSTM -> GRU carry the zero
    # state; a masked mean of no step would be NaN); LSTM returning
    # sequences (its output masked) into a GRU returning its last kept
    # state; Bidirectional GRU (zero_output_for_mask forced) into the
    # masked mean
    "emb_mask_rnn": {
        "spec": (
            "# golden: Embedding(20, 6, mask_zero) -> LSTM(5, return_sequences)\n"
            "# -> GRU(4) -> Dense softmax, T = 8\n"
            "input 8 dtype=int32\n"
            "embedding input_dim=20 output_dim=6 mask_zero=True\n"
            "lstm units=5 return_sequences=True\n"
            "gru units=4\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (0.0, 1.0),
        "seed_offset": 157, "pad": True, "pad_front": True, "pad_empty": True,
    },
    "emb_mask_bidir": {
        "spec": (
            "# golden: Embedding(20, 6, mask_zero) -> Bidirectional(GRU(4,\n"
            "# return_sequences)) -> masked GlobalAveragePooling1D -> Dense softmax\n"
            "input 8 dtype=int32\n"
            "embedding input_dim=20 output_dim=6 mask_zero=True\n"
            "bidirectional layer=gru units=4 return_sequences=True\n"
            "global_average_pooling1d\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (0.0, 1.0),
        "seed_offset": 163, "pad": True, "pad_front": True,
    },
    # Keras's Masking(0.0) on a float sequence into the recurrent layers
    # (--only masking_rnn --only masking_bidir): whole zero steps at each row's end,
    # every third row at its start, a kept step 0 in feature 0 only
    "masking_rnn": {
        "spec": (
            "# golden: Masking(0.0) -> LSTM(5, return_sequences) -> GRU(4)\n"
            "# -> Dense softmax, T = 8, 3 features\n"
            "input 8 3\n"
            "masking mask_value=0\n"
            "lstm units=5 return_sequences=True\n"
            "gru units=4\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 193, "pad": True, "pad_front": True,
    },
    "masking_bidir": {
        "spec": (
            "# golden: Masking(0.0) -> Bidirectional(GRU(4, return_sequences))\n"
            "# -> masked GlobalAveragePooling1D -> Dense softmax\n"
            "input 8 3\n"
            "masking mask_value=0\n"
            "bidirectional layer=gru units=4 return_sequences=True\n"
            "global_average_pooling1d\n"
            "dense units=3 activation=softmax\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 197, "pad": True, "pad_front": True,
    },
    # MultiHeadAttention fed Embedding(mask_zero=True)'s mask (--only
    # mha_pad): the query's and the value's masks ANDed into its attention
    # mask, its output masked by the query's through the residual Add and
    # LayerNormalization to the masked mean; SGD as mha_enc
    "mha_pad": {
        "spec": (
            "# golden: the tiny transformer with padding (2 heads, key_dim 4, T 8)\n"
            "input 8 dtype=int32\n"
            "embedding name=emb input_dim=20 output_dim=8 mask_zero=True\n"
            "multi_head_attention name=mha inputs=emb,emb num_heads=2 key_dim=4\n"
            "add name=res inputs=emb,mha\n"
            "layer_normalization name=ln\n"
            "global_average_pooling1d name=gap\n"
            "dense name=head units=3 activation=softmax\n"
            "compile loss=categorical_crossentropy optimizer=sgd learning_rate=0.05 "
            "momentum=0.9 metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (0.0, 1.0),
        "seed_offset": 167, "pad": True,
    },
    # two masked encoder blocks (--only mha_pad2): Keras's first
    # MultiHeadAttention erases the mask attached to the embedding's output
    # at run time, so the residual Add after it, the second block and its
    # attention see none, while the pooling takes the mask recorded when the
    # model was built (the masked mean); SGD as mha_enc
    "mha_pad2": {
        "spec": (
            "# golden: two post-norm encoder blocks with padding (2 heads, key_dim 4)\n"
            "input 8 dtype=int32\n"
            "embedding name=emb input_dim=20 output_dim=8 mask_zero=True\n"
            "multi_head_attention name=mha1 inputs=emb,emb num_heads=2 key_dim=4\n"
            "add name=res1 inputs=emb,mha1\n"
            "layer_normalization name=ln1\n"
            "dense name=ff1 units=16 activation=relu\n"
            "dense name=ff2 units=8\n"
            "add name=res2 inputs=ln1,ff2\n"
            "layer_normalization name=ln2\n"
            "multi_head_attention name=mha2 inputs=ln2,ln2 num_heads=2 key_dim=4\n"
            "add name=res3 inputs=ln2,mha2\n"
            "layer_normalization name=ln3\n"
            "global_average_pooling1d name=gap\n"
            "dense name=head units=3 activation=softmax\n"
            "compile loss=categorical_crossentropy optimizer=sgd learning_rate=0.05 "
            "momentum=0.9 metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (0.0, 1.0),
        "seed_offset": 241, "pad": True, "keras_file": True,
    },
    # cross attention with a bool attention_mask Input (--only mha_bool):
    # its masks drawn as mha_mask's, given to Keras's bool Input as 0/1
    "mha_bool": {
        "spec": (
            "# golden: cross attention, a bool attention_mask input (2 heads, key_dim 4)\n"
            "input name=q 4 3\n"
            "input name=v 6 5\n"
            "input name=keep 4 6 dtype=bool\n"
            "dense name=proj inputs=q units=8\n"
            "multi_head_attention name=mha inputs=proj,v attention_mask=keep num_heads=2 "
            "key_dim=4\n"
            "global_average_pooling1d name=gap\n"
            "dense name=head units=3 activation=softmax\n"
            "compile loss=categorical_crossentropy optimizer=sgd learning_rate=0.05 "
            "momentum=0.9 metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 173, "mask_inputs": ("keep",),
    },
    # both masks (--only mha_pad_mask): mha_pad's self-attention called with
    # attention_mask= a bool input too, which Keras ANDs with the ids'
    # masks; the mask is the first input, the ids (padded as mha_pad's) the
    # second
    "mha_pad_mask": {
        "spec": (
            "# golden: the tiny transformer with padding and an attention mask input\n"
            "input name=keep 8 8 dtype=bool\n"
            "input name=ids 8 dtype=int32\n"
            "embedding name=emb inputs=ids input_dim=20 output_dim=8 mask_zero=True\n"
            "multi_head_attention name=mha inputs=emb,emb attention_mask=keep num_heads=2 "
            "key_dim=4\n"
            "add name=res inputs=emb,mha\n"
            "layer_normalization name=ln\n"
            "global_average_pooling1d name=gap\n"
            "dense name=head units=3 activation=softmax\n"
            "compile loss=categorical_crossentropy optimizer=sgd learning_rate=0.05 "
            "momentum=0.9 metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (0.0, 1.0),
        "seed_offset": 179, "pad": True, "mask_inputs": ("keep",),
    },
    # the cross-entropies from logits (Keras's from_logits=True: a linear
    # last layer, the loss takes log_softmax / log_sigmoid of its output,
    # no clip); x in [-3, 3) makes logits of a few units, so the softmax is
    # far from uniform; the accuracy is Keras's on the logits themselves
    "logits_cce": {
        "spec": (
            "# golden: CategoricalCrossentropy(from_logits=True) + Adam, a\n"
            "# linear last layer\n"
            "input 6\n"
            "dense units=8 activation=tanh\n"
            "dense units=4\n"
            "compile loss=categorical_crossentropy from_logits=True optimizer=adam "
            "metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-3.0, 3.0),
        "seed_offset": 211, "keras_file": True,
    },
    "logits_scce": {
        "spec": (
            "# golden: SparseCategoricalCrossentropy(from_logits=True) + SGD,\n"
            "# class ids as labels, a linear last layer\n"
            "input 5\n"
            "dense units=7 activation=relu\n"
            "dense units=5\n"
            "compile loss=sparse_categorical_crossentropy from_logits=True optimizer=sgd "
            "learning_rate=0.05 momentum=0.9 nesterov=False metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-3.0, 3.0),
        "seed_offset": 223, "keras_file": True,
    },
    "logits_bce": {
        "spec": (
            "# golden: BinaryCrossentropy(from_logits=True) + RMSprop, 3\n"
            "# independent logits (binary accuracy on the logits, as Keras)\n"
            "input 6\n"
            "dense units=8 activation=tanh\n"
            "dense units=3\n"
            "compile loss=binary_crossentropy from_logits=True optimizer=rmsprop "
            "metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-3.0, 3.0),
        "seed_offset": 227, "keras_file": True,
    },
    # from_logits on a softmax output (a user's slip Keras runs as asked:
    # log_softmax of the probabilities): the gradient goes through the
    # softmax layer's own derivative, not the fused (p - t) of the
    # probabilities' loss
    "logits_softmax": {
        "spec": (
            "# golden: CategoricalCrossentropy(from_logits=True) on a softmax\n"
            "# output\n"
            "input 6\n"
            "dense units=8 activation=tanh\n"
            "dense units=4 activation=softmax\n"
            "compile loss=categorical_crossentropy from_logits=True optimizer=adam "
            "learning_rate=0.01 metrics=accuracy\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-3.0, 3.0),
        "seed_offset": 229,
    },
    # a regression MLP ending in Normalization(invert=True) (--only
    # norm_inv_mlp): Normalization (adapted on x) -> Dense relu -> Dense(1)
    # -> Normalization(invert=True) (adapted on y, its mean and variance
    # drawn as norm_mlp's), mean_squared_error; both normalizations' mean
    # and variance stay bit-identical through training (make asserts it)
    "norm_inv_mlp": {
        "spec": (
            "# golden: Normalization -> Dense relu -> Dense -> Normalization(invert)\n"
            "input 6\n"
            "normalization\n"
            "dense units=8 activation=relu\n"
            "dense units=1\n"
            "normalization invert=True\n"
            "compile loss=mean_squared_error optimizer=adam\n"
        ),
        "n_pred": 12, "n_train": 40, "batch": 16, "epochs": 2, "x_range": (-1.0, 1.0),
        "seed_offset": 233, "keras_file": True,
    },
}


def margins(kind, v):
    """A spec margin list (padding=1,2 ...) as Keras's argument: an int, a
    (begin, end) pair, or for the 2-D layers (height, width) or ((top,
    bottom), (left, right))."""
    m = tuple(int(a) for a in v.split(","))
    if len(m) == 1:
        return m[0]
    if len(m) == 4:
        return ((m[0], m[1]), (m[2], m[3]))
    return m


def parse_compile(text):
    """The spec's compile line as Keras's compile() arguments (the
    seed's categorical_crossentropy + Adam + accuracy without one)."""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split()
        if line and line[0] == "compile":
            args = dict(tok.split("=", 1) for tok in line[1:])
            break
    else:
        args = {"loss": "categorical_crossentropy", "optimizer": "adam",
                "metrics": "accuracy"}
    loss = args.pop("loss")
    opt = args.pop("optimizer")
    metrics = args.pop("metrics", "none" if loss == "mean_squared_error" else "accuracy")
    logits = args.pop("from_logits", "False") in ("True", "true", "1")
    kw = {k: (v in ("True", "true", "1")) if k == "nesterov" else float(v)
          for k, v in args.items()}
    cls = {"adam": keras.optimizers.Adam, "sgd": keras.optimizers.SGD,
           "rmsprop": keras.optimizers.RMSprop}[opt]
    return loss, cls(**kw), (["accuracy"] if metrics == "accuracy" else []), logits


def keras_loss(name, logits):
    """compile()'s loss: the name, or with from_logits=True the Loss object
    (its config, from_logits true, is what the saved files carry)."""
    if not logits:
        return name
    return {"categorical_crossentropy": keras.losses.CategoricalCrossentropy,
            "sparse_categorical_crossentropy": keras.losses.SparseCategoricalCrossentropy,
            "binary_crossentropy": keras.losses.BinaryCrossentropy}[name](from_logits=True)


def input_dtype(text):
    """int32 when the input line says dtype=int32 (an embedding's ids)."""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split()
        if line and line[0] == "input":
            return "int32" if "dtype=int32" in line else "float32"
    return "float32"


def parse_spec(text):
    """The spec as (input shape, [(kind, {arg: value})]); mirrors model/spec.c
    for the subset used here."""
    shape, layers = None, []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        if line[0] == "input":
            shape = tuple(int(v) for v in line[1:] if "=" not in v)
            continue
        if line[0] == "compile":
            continue
        args = dict(tok.split("=", 1) for tok in line[1:])
        layers.append((line[0], args))
    return shape, layers


def padding_mask(rng, n, shape):
    """n attention masks [Tq][Tk] of 0 and 1: each sample keeps the keys
    before a random length in [1, Tk], and a query row keeps none with
    probability 1/4."""
    tq, tk = shape
    m = np.zeros((n, tq, tk), np.float32)
    for s in range(n):
        m[s, :, :rng.integers(1, tk + 1)] = 1.0
        m[s, rng.uniform(0.0, 1.0, tq) < 0.25, :] = 0.0
    return m


def spec_inputs(text):
    """The input lines as [(name, shape)]: the first unnamed one is
    "input"; a model of several inputs names each (docs/model.md)."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split()
        if line and line[0] == "input":
            args = dict(tok.split("=", 1) for tok in line[1:] if "=" in tok)
            out.append((args.get("name", "input"),
                        tuple(int(v) for v in line[1:] if "=" not in v)))
    return out


def spec_int_inputs(text):
    """The names of the input lines that say dtype=int32 (an embedding's ids)."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split()
        if line and line[0] == "input" and "dtype=int32" in line:
            args = dict(tok.split("=", 1) for tok in line[1:] if "=" in tok)
            out.append(args.get("name", "input"))
    return out


def spec_bool_inputs(text):
    """The names of the input lines that say dtype=bool (attention masks)."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split()
        if line and line[0] == "input" and "dtype=bool" in line:
            args = dict(tok.split("=", 1) for tok in line[1:] if "=" in tok)
            out.append(args.get("name", "input"))
    return out


def joined(xs):
    """Several inputs' samples as one array, each sample's inputs one
    after the other (as xo's model API and its x.npy take them)."""
    return np.concatenate([x.reshape(len(x), -1) for x in xs], axis=1)


def spec_names(text):
    """Layer names as crossover (and a fresh Keras session) gives them:
    explicit name=, else conv1d, conv1d_1, ... counted per kind."""
    counts, names = {}, []
    for kind, args in parse_spec(text)[1]:
        if "name" in args:
            names.append(args["name"])
            continue
        c = counts.get(kind, 0)
        names.append(kind if c == 0 else f"{kind}_{c}")
        counts[kind] = c + 1
    return names


MERGES = {"add": keras.layers.Add, "subtract": keras.layers.Subtract,
          "multiply": keras.layers.Multiply, "average": keras.layers.Average,
          "maximum": keras.layers.Maximum, "minimum": keras.layers.Minimum,
          "concatenate": keras.layers.Concatenate}


def is_graph(text):
    """A functional graph: some layer says inputs= or merges, or the model
    has several inputs."""
    return len(spec_inputs(text)) > 1 or \
        any("inputs" in a or k in MERGES for k, a in parse_spec(text)[1])


def body_layers(model):
    """The model's layers without the InputLayer (a Functional lists it)."""
    return [l for l in model.layers if not isinstance(l, keras.layers.InputLayer)]


def build(text):
    shape, layers = parse_spec(text)
    graph = is_graph(text)
    model_ins = spec_inputs(text)
    inp = keras.Input(shape=shape, dtype=input_dtype(text))
    tensors, names, last = {"input": inp}, spec_names(text), inp
    if len(model_ins) > 1:  # several inputs: each named as the spec names it
        # dtype=bool: a bool attention mask Input (Keras casts the 0/1 floats)
        # dtype=int32: an embedding's ids
        inps = [keras.Input(shape=sh, name=n, dtype="bool" if n in spec_bool_inputs(text)
                            else "int32" if n in spec_int_inputs(text) else None)
                for n, sh in model_ins]
        tensors = dict(zip([n for n, _ in model_ins], inps))
        inp = last = inps[0]
    ints = ("filters", "kernel_size", "strides", "dilation_rate", "pool_size", "units",
            "input_dim", "output_dim", "size", "depth_multiplier", "axis", "output_padding",
            "num_heads", "key_dim", "value_dim", "output_shape")
    # the 2-D layers' width keys: Keras takes (height, width) pairs
    width_of = {"kernel_w": "kernel_size", "strides_w": "strides", "dilation_w": "dilation_rate",
                "pool_w": "pool_size", "size_w": "size", "output_padding_w": "output_padding"}
    model = None if graph else keras.Sequential([inp])
    for (kind, args), lname in zip(layers, names):
        args = dict(args)
        srcs = args.pop("inputs", None)
        kw = {}
        if kind.endswith("2d") or kind == "conv2d_transpose":
            for wk, hk in width_of.items():
                if wk in args or hk in args:
                    h = int(args[hk]) if hk in args else {"strides": 1, "dilation_rate": 1,
                                                          "pool_size": 2, "size": 2}[hk]
                    if hk == "strides" and "strides" not in args and \
                            kind not in ("conv2d", "depthwise_conv2d", "separable_conv2d",
                                         "conv2d_transpose"):
                        h = int(args.get("pool_size", 2))
                    kw[hk] = (h, int(args.pop(wk)) if wk in args else h)
                    args.pop(hk, None)
        for k, v in args.items():
            if kind == "rescaling" and k in ("scale", "offset"):  # numbers, not BN's flags
                kw[k] = float(v)
            elif k in ints:
                kw[k] = int(v)
            elif k == "use_bias":
                kw[k] = v in ("True", "true", "1")
            elif k in ("rate", "momentum", "epsilon", "max_value", "mask_value",
                       "negative_slope", "alpha"):
                kw[k] = float(v)
            elif k in ("center", "scale", "return_sequences", "go_backwards", "reset_after",
                       "use_causal_mask", "mask_zero", "invert"):
                kw[k] = v in ("True", "true", "1")
            elif k == "activation":
                kw[k] = None if v in ("None", "none", "linear") else v
            elif k in ("padding", "cropping") and kind.startswith(("zero_padding", "cropping")):
                kw[k] = margins(kind, v)
            elif k in ("dims", "target_shape"):
                kw[k] = tuple(int(t) for t in v.split(","))
            elif k == "n":
                kw[k] = int(v)
            else:
                kw[k] = v
        cls = {"conv1d": keras.layers.Conv1D, "max_pooling1d": keras.layers.MaxPooling1D,
               "average_pooling1d": keras.layers.AveragePooling1D,
               "global_average_pooling1d": keras.layers.GlobalAveragePooling1D,
               "global_max_pooling1d": keras.layers.GlobalMaxPooling1D,
               "flatten": keras.layers.Flatten, "dropout": keras.layers.Dropout,
               "dense": keras.layers.Dense, "activation": keras.layers.Activation,
               "batch_normalization": keras.layers.BatchNormalization,
               "layer_normalization": keras.layers.LayerNormalization,
               "embedding": keras.layers.Embedding, "simple_rnn": keras.layers.SimpleRNN,
               "lstm": keras.layers.LSTM, "gru": keras.layers.GRU,

               "conv2d": keras.layers.Conv2D, "max_pooling2d": keras.layers.MaxPooling2D,
               "global_average_pooling2d": keras.layers.GlobalAveragePooling2D,
               "zero_padding1d": keras.layers.ZeroPadding1D,
               "cropping1d": keras.layers.Cropping1D,
               "up_sampling1d": keras.layers.UpSampling1D,
               "zero_padding2d": keras.layers.ZeroPadding2D,
               "cropping2d": keras.layers.Cropping2D,
               "up_sampling2d": keras.layers.UpSampling2D,
               "repeat_vector": keras.layers.RepeatVector, "permute": keras.layers.Permute,
               "reshape": keras.layers.Reshape,
               "depthwise_conv2d": keras.layers.DepthwiseConv2D,
               "depthwise_conv1d": keras.layers.DepthwiseConv1D,
               "separable_conv2d": keras.layers.SeparableConv2D, **MERGES,
               "conv2d_transpose": keras.layers.Conv2DTranspose,
               "multi_head_attention": keras.layers.MultiHeadAttention,
               "re_lu": keras.layers.ReLU, "softmax": keras.layers.Softmax,
               "masking": keras.layers.Masking,
               "rescaling": keras.layers.Rescaling,
               "normalization": keras.layers.Normalization,
               "leaky_re_lu": keras.layers.LeakyReLU, "elu": keras.layers.ELU,
               "time_distributed": None, "bidirectional": None}[kind]
        if kind == "time_distributed":  # the wrapped layer takes the arguments
            inner = {"dense": keras.layers.Dense, "conv1d": keras.layers.Conv1D}[kw.pop("layer")]
            cls = lambda **a: keras.layers.TimeDistributed(inner(**a))  # noqa: E731
        if kind == "bidirectional":  # the wrapped RNN takes the arguments
            rnn = {"simple_rnn": keras.layers.SimpleRNN, "lstm": keras.layers.LSTM,
                   "gru": keras.layers.GRU}[kw.pop("layer")]
            mode = kw.pop("merge_mode", "concat")
            cls = lambda **a: keras.layers.Bidirectional(rnn(**a), merge_mode=mode)  # noqa: E731
        if not graph:
            model.add(cls(**kw))
            continue
        ins = [tensors[n] for n in srcs.split(",")] if srcs else [last]
        if kind == "multi_head_attention":  # mha(query, value), the masks call arguments
            causal = kw.pop("use_causal_mask", False)
            am = kw.pop("attention_mask", None)
            last = cls(**kw)(ins[0], ins[1], use_causal_mask=causal,
                             attention_mask=tensors[am] if am else None)
        else:
            last = cls(**kw)(ins if kind in MERGES else ins[0])
        tensors[lname] = last
    if len(model_ins) > 1:
        return keras.Model([tensors[n] for n, _ in model_ins], last)
    return model if not graph else keras.Model(inp, last)


def no_dropout(text):
    out = []
    for raw in text.splitlines():
        toks = raw.split()
        if toks and toks[0] == "dropout":
            raw = " ".join("rate=0.0" if t.startswith("rate=") else t for t in toks)
        out.append(raw)
    return "\n".join(out) + "\n"


def save(path, a):
    np.save(path, np.ascontiguousarray(a, dtype="<f4"))


def initial_weights(model, rng):
    """float32-valued Glorot-uniform kernels and small non-zero biases."""
    values = []
    for layer in body_layers(model):
        ws = []
        if isinstance(layer, (keras.layers.BatchNormalization,
                              keras.layers.LayerNormalization)):
            # gamma and the moving variance around 1 (a variance is >= 0),
            # beta and the moving mean around 0; all non-default
            for w in layer.weights:
                shp = tuple(w.shape)
                one = w.name in ("gamma", "moving_variance")
                ws.append(rng.uniform(0.5, 1.5, shp).astype(np.float32) if one
                          else rng.uniform(-0.1, 0.1, shp).astype(np.float32))
            values.append(ws)
            continue
        if isinstance(layer, keras.layers.Normalization):
            # as adapted: means around 0, variances in [0.25, 2); Keras's
            # count (int32) left 0
            ws = [rng.uniform(-0.5, 0.5, tuple(layer.adapt_mean.shape)).astype(np.float32),
                  rng.uniform(0.25, 2.0, tuple(layer.adapt_mean.shape)).astype(np.float32),
                  np.zeros((), np.int32)]
            values.append(ws)
            continue
        for w in layer.weights:
            shp = tuple(w.shape)
            if len(shp) > 1:
                rf = int(np.prod(shp[:-2])) if len(shp) > 2 else 1
                fan_in, fan_out = shp[-2] * rf, shp[-1] * rf
                lim = np.sqrt(6.0 / (fan_in + fan_out))
                ws.append(rng.uniform(-lim, lim, shp).astype(np.float32))
            else:
                ws.append(rng.uniform(-0.1, 0.1, shp).astype(np.float32))
        values.append(ws)
    return values


def set_weights(model, values):
    for layer, ws in zip(body_layers(model), values):
        if ws:
            layer.set_weights([w.astype(np.float64) if w.dtype.kind == "f" else w for w in ws])
        if isinstance(layer, keras.layers.Normalization):
            layer.finalize_state()  # set_weights leaves its constants as built


def write_weights(model, names, directory):
    """Files named by the spec's layer names (Keras's own names carry a
    session-wide counter)."""
    directory.mkdir(parents=True, exist_ok=True)
    # a Functional lists its layers in its own (topological) order: by
    # name (a graph spec names its layers, and Keras takes the names)
    layers = ([model.get_layer(n) for n in names] if isinstance(model, keras.Model) and
              not isinstance(model, keras.Sequential) else body_layers(model))
    for layer, name in zip(layers, names):
        ws = layer.get_weights()
        if not ws:
            continue
        if isinstance(layer, (keras.layers.BatchNormalization, keras.layers.Embedding,
                              keras.layers.SimpleRNN, keras.layers.LSTM, keras.layers.GRU,
                              keras.layers.LayerNormalization)):
            # gamma, beta, moving_mean, moving_variance; embeddings;
            # kernel, recurrent_kernel, bias: by Keras's own names
            for v, value in zip(layer.weights, ws):
                save(directory / f"{name}.{v.name}.npy", value)
            continue
        if isinstance(layer, keras.layers.Normalization):
            # mean and variance (xo holds no count)
            save(directory / f"{name}.mean.npy", ws[0])
            save(directory / f"{name}.variance.npy", ws[1])
            continue
        if isinstance(layer, keras.layers.Bidirectional):
            # each direction's kernel, recurrent_kernel, bias, named as xo
            # names them (forward_kernel, ..., backward_bias)
            half = len(ws) // 2
            for i, (v, value) in enumerate(zip(layer.weights, ws)):
                side = "forward" if i < half else "backward"
                save(directory / f"{name}.{side}_{v.name}.npy", value)
            continue
        if isinstance(layer, keras.layers.MultiHeadAttention):
            # query/kernel ... as xo names them: query_kernel ...
            for v, value in zip(layer.weights, ws):
                save(directory / f"{name}.{'_'.join(v.path.split('/')[-2:])}.npy", value)
            continue
        if isinstance(layer, keras.layers.SeparableConv2D):
            # depthwise_kernel, pointwise_kernel, bias: Keras's own names
            for v, value in zip(layer.weights, ws):
                save(directory / f"{name}.{v.name}.npy", value)
            continue
        save(directory / f"{name}.kernel.npy", ws[0])
        if len(ws) > 1:
            save(directory / f"{name}.bias.npy", ws[1])


def make(name, cfg, root, seed):
    rng = np.random.default_rng(seed)
    out = root / name
    out.mkdir(parents=True, exist_ok=True)
    spec = cfg["spec"]
    (out / "model.model").write_text(spec)
    has_dropout = any(k == "dropout" for k, _ in parse_spec(spec)[1])
    train_spec = no_dropout(spec) if has_dropout else spec
    if has_dropout:
        (out / "train.model").write_text(train_spec)

    model = build(spec)
    w0 = initial_weights(model, rng)
    set_weights(model, w0)
    write_weights(model, spec_names(spec), out / "weights")

    shape = model.input_shape[1:]
    lo, hi = cfg["x_range"]
    vocab = next((int(a["input_dim"]) for k, a in parse_spec(spec)[1] if k == "embedding"), 0)
    multi = [sh for _, sh in spec_inputs(spec)] if len(spec_inputs(spec)) > 1 else None

    def draw(n):
        """Inputs: uniform in x_range, or ids uniform in [0, vocab) (saved
        as float32 values, as crossover's x arrays carry them); several
        inputs: each input's samples."""
        if multi:
            return [padding_mask(rng, n, sh) if name in cfg.get("mask_inputs", ()) else
                    pad_ids(n, sh) if name in spec_int_inputs(spec) else
                    rng.uniform(lo, hi, (n,) + sh).astype(np.float32)
                    for (name, _), sh in zip(spec_inputs(spec), multi)]
        if vocab and cfg.get("pad"):
            return pad_ids(n, shape)
        if vocab:
            return rng.integers(0, vocab, (n,) + shape).astype(np.float32)
        if cfg.get("pad"):
            # a float sequence for Masking(0.0): whole zero steps at each
            # row's end after 1 to all its steps kept (every third row at
            # its start: pad_front), and a kept step 0 in feature 0 only
            x = rng.uniform(lo, hi, (n,) + shape)
            keep = rng.integers(1, shape[0] + 1, n)
            x[np.arange(shape[0])[None, :] >= keep[:, None]] = 0.0
            if cfg.get("pad_front"):
                for i in range(1, n, 3):
                    x[i] = np.roll(x[i], shape[0] - keep[i], axis=0)
            for i in range(n):
                x[i, int(np.flatnonzero(np.any(x[i] != 0, axis=-1))[0]), 0] = 0.0
            return x.astype(np.float32)
        return rng.uniform(lo, hi, (n,) + shape).astype(np.float32)

    def pad_ids(n, shape):
        """ids in [1, vocab), each row's tail padded with 0 (the mask of
        Embedding(mask_zero=True)) after 1 to all its steps kept; saved as
        float32 values."""
        ids = rng.integers(1, vocab, (n,) + shape)
        keep = rng.integers(1, shape[0] + 1, n)
        ids[np.arange(shape[0])[None, :] >= keep[:, None]] = 0
        if cfg.get("pad_front"):  # every third row padded at its start
            for i in range(1, n, 3):
                ids[i] = np.roll(ids[i], shape[0] - keep[i])
        if cfg.get("pad_empty"):  # one row all padding
            ids[n // 2] = 0
        return ids.astype(np.float32)

    def f64(x):
        return [v.astype(np.float64) for v in x] if multi else x.astype(np.float64)
    x = draw(cfg["n_pred"])
    save(out / "x.npy", joined(x) if multi else x)
    save(out / "pred.npy", model.predict(f64(x), batch_size=32, verbose=0))

    classes = model.output_shape[-1]
    loss_name, optimizer, metrics, logits = parse_compile(spec)
    xt = draw(cfg["n_train"])
    if loss_name == "sparse_categorical_crossentropy":
        # class ids, written as whole float32 numbers
        yt = rng.integers(0, classes, cfg["n_train"]).astype(np.float32)
    elif loss_name == "binary_crossentropy":
        yt = rng.integers(0, 2, (cfg["n_train"], classes)).astype(np.float32)
    elif loss_name == "mean_squared_error":
        yt = rng.uniform(-1.0, 1.0, (cfg["n_train"], classes)).astype(np.float32)
    else:
        yt = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, cfg["n_train"])]
    save(out / "x_train.npy", joined(xt) if multi else xt)
    save(out / "y_train.npy", yt)
    tm = build(train_spec)
    set_weights(tm, w0)
    tm.compile(optimizer=optimizer, loss=keras_loss(loss_name, logits), metrics=metrics)
    if cfg.get("keras_file"):
        # the compiled model with its initial weights, as a user saves it:
        # xo reads the compile from its compile_config and must train it as
        # Keras does (suites/test_model.c test_golden_keras_compile)
        # (built in float32, the dtype a user's file has and xo reads; the
        # weights are float32 values either way)
        keras.config.set_floatx("float32")
        keras.config.set_dtype_policy("float32")
        fm = build(train_spec)
        set_weights(fm, w0)
        fm.compile(optimizer=optimizer.__class__.from_config(optimizer.get_config()),
                   loss=keras_loss(loss_name, logits), metrics=metrics)
        fm.save(out / "model.keras")
        fm.save(out / "model.h5")  # legacy: its training_config
        keras.config.set_floatx("float64")
        keras.config.set_dtype_policy("float64")
    hist = tm.fit(f64(xt), yt.astype(np.float64), batch_size=cfg["batch"],
                  epochs=cfg["epochs"], shuffle=False, verbose=0)
    write_weights(tm, spec_names(spec), out / "trained")
    for f in (out / "weights").glob("*.npy"):  # Normalization's are not trained
        if f.name.endswith((".mean.npy", ".variance.npy")):
            assert np.array_equal(np.load(f), np.load(out / "trained" / f.name)), f.name
    save(out / "loss.npy", np.array(hist.history["loss"]))
    if metrics:
        save(out / "accuracy.npy", np.array(hist.history["accuracy"]))
    steps = -(-cfg["n_train"] // cfg["batch"]) * cfg["epochs"]
    (out / "meta.txt").write_text(
        f"batch_size={cfg['batch']}\nepochs={cfg['epochs']}\nsteps={steps}\n"
        f"keras={keras.__version__}\njax={jax.__version__}\n")
    print(f"{name}: {model.count_params()} params, loss {hist.history['loss']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent
                                         / "suites" / "golden"))
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--only", action="append", default=[],
                    help="make only this model (repeatable); the others keep their files")
    args = ap.parse_args()
    root = pathlib.Path(args.out)
    for i, (name, cfg) in enumerate(MODELS.items()):
        # a model's seed is fixed by its own seed_offset where it has one, so
        # adding a model never changes another's committed fixture
        if not args.only or name in args.only:
            make(name, cfg, root, args.seed + cfg.get("seed_offset", i))


if __name__ == "__main__":
    main()
