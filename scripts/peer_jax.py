#!/usr/bin/env python3
"""peer_jax.py - the strongest peer available here for `xo seed --model FILE`:
JAX on the CPU with jax.jit over the whole training step, reading the same
Keras model file.

    KERAS_BACKEND=jax /tmp/kvenv/bin/python scripts/peer_jax.py --model m.keras \
        [--samples 20000] [--batch-size 512] [--predict-batch 32] [--repeat 5] [--json]
        [--out peer.json]

The model is loaded with keras.saving.load_model (its weights and layers as
Keras built them) and run through Keras's stateless_call, so the forward
pass is Keras's own; everything around it is pure JAX and the whole
training step is ONE jax.jit'ed function (donated buffers): forward
(training=True: Dropout active, its seed state threaded through), Keras's
categorical crossentropy on the softmax output (probabilities clipped to
[1e-7, 1 - 1e-7], as keras/src/backend/jax/nn.py does with from_logits
False), jax.grad, and Adam exactly as keras/src/optimizers/adam.py's
update_step (Keras 3.15.1) computes it, in float32:

    t = iterations + 1
    alpha = lr * sqrt(1 - beta_2**t) / (1 - beta_1**t)
    m += (g - m) * (1 - beta_1)
    v += (g*g - v) * (1 - beta_2)
    w -= m * alpha / (sqrt(v) + epsilon)      # epsilon outside the sqrt

with Keras's defaults lr 1e-3, beta_1 0.9, beta_2 0.999, epsilon 1e-7.
Predict is one jit'ed function (training=False) called per batch.

Protocol (the seed's, as `xo seed` runs it; docs/model.md): --samples
synthetic samples (x uniform in [0, 1) in the model's input shape, or ids uniform
in [0, input_dim) for an integer input into an Embedding; labels
uniform over its classes; numpy seed 1), 80/20 train/test; an epoch is
fit(validation_split=0.2): the training part's first 80% in shuffled
batches of --batch-size (one jit'ed step each) plus the forward pass over the
last 20% at the same batch size; predict the test part at batch 32 (or
--predict-batch, as `xo seed --predict-batch`) and as one batch. Each is timed --repeat times after a warm-up that compiles every shape;
the medians are printed (--json: one object). --out FILE writes the samples
in the format `xo perf import --peer jax-cpu --json FILE` reads
(perfdb/import.c): train_step per step at --batch-size, predict per call at
batch 32 and at the test size. Exit 2 on bad usage, 3 when JAX/Keras are
missing.
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
try:
    import jax
    import jax.numpy as jnp
    import keras
    import numpy as np
except ImportError as e:
    print(f"peer_jax.py: JAX/Keras are not installed for {sys.executable} ({e}); "
          "try /tmp/kvenv/bin/python", file=sys.stderr)
    sys.exit(3)

LR, BETA_1, BETA_2, EPSILON = 1e-3, 0.9, 0.999, 1e-7
CCE_EPS = 1e-7  # keras.backend.epsilon(): the clip of categorical_crossentropy


def make_functions(model):
    """The jit'ed training step and predict of model (stateless)."""

    def loss_fn(tv, ntv, x, y):
        p, ntv = model.stateless_call(tv, ntv, x, training=True)
        p = jnp.clip(p, CCE_EPS, 1.0 - CCE_EPS)
        return -jnp.mean(jnp.sum(y * jnp.log(p), axis=-1)), ntv

    def step(tv, ntv, m, v, it, xs, ys, idx):
        x, y = xs[idx], ys[idx]  # the batch is gathered inside the jit, too
        (loss, ntv), g = jax.value_and_grad(loss_fn, has_aux=True)(tv, ntv, x, y)
        t = (it + 1).astype(jnp.float32)
        alpha = LR * jnp.sqrt(1.0 - BETA_2 ** t) / (1.0 - BETA_1 ** t)
        m = [mi + (gi - mi) * (1.0 - BETA_1) for mi, gi in zip(m, g)]
        v = [vi + (gi * gi - vi) * (1.0 - BETA_2) for vi, gi in zip(v, g)]
        tv = [w - mi * alpha / (jnp.sqrt(vi) + EPSILON) for w, mi, vi in zip(tv, m, v)]
        return tv, ntv, m, v, it + 1, loss

    def predict(tv, ntv, x):
        return model.stateless_call(tv, ntv, x, training=False)[0]

    return jax.jit(step, donate_argnums=(0, 1, 2, 3)), jax.jit(predict)


def check_adam(model_path):
    """One step of the peer against Keras's own fit (Adam, no shuffle) on a
    model without dropout: the weights agree to float32 rounding."""
    model = keras.saving.load_model(model_path, compile=False)
    shape, classes = tuple(model.input_shape[1:]), int(model.output_shape[-1])
    rng = np.random.default_rng(2)
    x = synthetic_x(model, rng, (64,) + shape)
    y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, 64)]
    step, _ = make_functions(model)
    tv = [jnp.array(np.asarray(w.value)) for w in model.trainable_variables]
    ntv = [jnp.array(np.asarray(w.value)) for w in model.non_trainable_variables]
    m = [jnp.zeros_like(w) for w in tv]
    v = [jnp.zeros_like(w) for w in tv]
    tv, ntv, m, v, _, _ = step(tv, ntv, m, v, jnp.asarray(0, jnp.int32), jnp.asarray(x),
                               jnp.asarray(y), jnp.arange(64))
    model.compile(optimizer=keras.optimizers.Adam(), loss="categorical_crossentropy")
    model.fit(x, y, batch_size=64, epochs=1, shuffle=False, verbose=0)
    return max(float(jnp.max(jnp.abs(a - b.value))) for a, b in zip(tv, model.trainable_variables))


def synthetic_x(model, rng, shape):
    """The seed's inputs: uniform in [0, 1) as float32, or for an integer
    input (ids into an Embedding) uniform ids in [0, input_dim) as int32,
    as `xo seed` draws them (cli/seed.c)."""
    if "int" not in str(model.inputs[0].dtype):
        return rng.random(shape, dtype=np.float32)
    vocab = [l.input_dim for l in model.layers if type(l).__name__ == "Embedding"]
    if not vocab:
        raise SystemExit(f"peer_jax.py: an integer input without an Embedding: {model.name}")
    return rng.integers(0, vocab[0], shape, dtype=np.int32)


def timed(fn, repeat):
    fn()  # warm-up: compiles every shape the runs use
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--predict-batch", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--name", default=None, help="the model's name in the store (default: stem)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--check-adam", action="store_true",
                    help="one step against Keras's fit (a model without dropout), then exit")
    a = ap.parse_args()
    if a.check_adam:
        err = check_adam(a.model)
        print(f"peer step vs Keras fit, one Adam step: max |w difference| {err:.3g}")
        return 0 if err < 1e-6 else 1
    if a.samples < 25 or a.batch_size < 1 or a.predict_batch < 1 or a.repeat < 1:
        print("peer_jax.py: --samples >= 25, --batch-size, --predict-batch and --repeat >= 1",
              file=sys.stderr)
        return 2
    if not os.path.isfile(a.model):
        print(f"peer_jax.py: {a.model}: no such file", file=sys.stderr)
        return 2
    keras.config.set_floatx("float32")
    model = keras.saving.load_model(a.model, compile=False)
    shape = tuple(model.input_shape[1:])
    classes = int(model.output_shape[-1])
    rng = np.random.default_rng(1)
    x = synthetic_x(model, rng, (a.samples,) + shape)
    y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, a.samples)]
    nte = a.samples // 5
    ntr = a.samples - nte
    nval = int(ntr * 0.2)
    nfit = ntr - nval
    xfit, yfit = jnp.asarray(x[:nfit]), jnp.asarray(y[:nfit])
    xval, xte = jnp.asarray(x[nfit:ntr]), jnp.asarray(x[ntr:])

    step, predict = make_functions(model)
    state = {
        "tv": [jnp.array(np.asarray(w.value)) for w in model.trainable_variables],
        "ntv": [jnp.array(np.asarray(w.value)) for w in model.non_trainable_variables],
    }
    state["m"] = [jnp.zeros_like(w) for w in state["tv"]]
    state["v"] = [jnp.zeros_like(w) for w in state["tv"]]
    state["it"] = jnp.asarray(0, jnp.int32)
    steps_s = []

    def epoch():
        perm = jnp.asarray(rng.permutation(nfit))
        for i in range(0, nfit, a.batch_size):
            idx = perm[i:i + a.batch_size]
            t0 = time.perf_counter()
            (state["tv"], state["ntv"], state["m"], state["v"], state["it"],
             loss) = step(state["tv"], state["ntv"], state["m"], state["v"], state["it"],
                          xfit, yfit, idx)
            loss.block_until_ready()
            steps_s.append(time.perf_counter() - t0)
        for i in range(0, nval, a.batch_size):
            predict(state["tv"], state["ntv"], xval[i:i + a.batch_size]).block_until_ready()

    def predict_at(batch):
        def run():
            for i in range(0, nte, batch):
                predict(state["tv"], state["ntv"], xte[i:i + batch]).block_until_ready()
        return run

    epochs = timed(epoch, a.repeat)
    nsteps = -(-nfit // a.batch_size)
    steps_s = steps_s[nsteps:]  # the warm-up epoch's steps compile
    full = [s for k, s in enumerate(steps_s) if (k % nsteps) < nfit // a.batch_size]
    p32 = timed(predict_at(a.predict_batch), a.repeat)
    p1 = timed(predict_at(nte), a.repeat)
    calls32 = -(-nte // a.predict_batch)
    name = a.name or os.path.basename(a.model).split(".")[0]
    note = (f"jax {jax.__version__}, keras {keras.__version__}, jit over the whole step, "
            f"float32, {jax.devices()[0].platform}")
    res = {
        "peer": "jax", "model": name, "note": note, "repeat": a.repeat,
        "samples": a.samples, "batch_size": a.batch_size, "predict_samples": nte,
        "predict_batch": a.predict_batch,
        "epoch_s": statistics.median(epochs),
        "train_ms_per_step": statistics.median(full) * 1e3 if full else None,
        "predict_s": statistics.median(p32),
        "predict_s_one_batch": statistics.median(p1),
    }
    if a.out:
        imp = {"device": "jax-cpu", "model": name, "note": note, "results": [
            {"benchmark": "train_step", "batch": a.batch_size, "samples_s": full},
            {"benchmark": "predict", "batch": a.predict_batch,
             "samples_s": [s / calls32 for s in p32]},
            {"benchmark": "predict", "batch": nte, "samples_s": p1}]}
        with open(a.out, "w") as f:
            json.dump(imp, f)
    if a.json:
        print(json.dumps(res))
    else:
        print(f"{note}; medians of {a.repeat} runs after a warm-up")
        print(f"{name}: epoch {res['epoch_s']*1e3:.2f} ms ({res['train_ms_per_step']:.3f} ms/step "
              f"at batch {a.batch_size}), predict {nte} at batch {a.predict_batch} "
              f"{res['predict_s']*1e3:.2f} ms, "
              f"as one batch {res['predict_s_one_batch']*1e3:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
