#!/usr/bin/env python3
"""zoo.py - the speed targets on a zoo of eight small Keras models,
`xo` cpu and the JAX peer (scripts/peer_jax.py) side by side in one run.

    KERAS_BACKEND=jax /tmp/kvenv/bin/python scripts/zoo.py --xo build/cli/xo \
        [--repeat 5] [--json FILE] [--keep DIR]

The zoo (built with Keras 3 into a temporary directory, float32, seeds fixed):
  seed     the seed model (DESIGN section 1): Conv1D/MaxPooling1D x2, Dropout, Dense x2
  mlp      Dense 256 relu, Dense 128 relu, Dense 10 softmax on 64 features
  cnn2d    Conv2D 16 3x3 relu, MaxPooling2D 2, Conv2D 32 3x3 relu, MaxPooling2D 2,
           Flatten, Dense 10 softmax on 16x16x1
  cnn_bn   Conv2D 16 3x3, BatchNormalization, Activation relu, MaxPooling2D 2,
           Flatten, Dense 10 softmax on 16x16x1
  conv1d_sd Conv1D 16 k5 strides 2 relu, Conv1D 32 k3 dilation 2 relu,
           GlobalAveragePooling1D, Dense 8 softmax on 64x2
  res_cnn  Functional: Conv2D 16 3x3 same relu, then Conv2D 16 3x3 same relu,
           Conv2D 16 3x3 same added to its input (Add), Activation relu,
           MaxPooling2D 2, Flatten, Dense 10 softmax on 16x16x1
  sep_cnn  SeparableConv2D 16 3x3 relu, MaxPooling2D 2, SeparableConv2D 32 3x3
           relu, GlobalAveragePooling2D, Dense 10 softmax on 16x16x3
  transformer  Functional, a tiny transformer classifier: 32 int ids ->
           Embedding(1000, 32) -> MultiHeadAttention(2 heads, key_dim 16)
           self-attention, Add, LayerNormalization -> Dense 64 relu, Dense 32,
           Add, LayerNormalization -> GlobalAveragePooling1D -> Dense 10
           softmax (no positional embedding: Keras has no layer for it and a
           user writes it as a custom layer, which no loader reads)
  lstm     (only when named in --only) LSTM(64), Dense 10 softmax on
           50 steps x 16 features
Protocol per model, both sides: the seed's (`xo seed --model`, docs/model.md):
20000 synthetic samples, 80/20 split, an epoch = fit(batch_size=512,
validation_split=0.2) (25 steps + the validation pass), predict the 4000 test
samples at batch 32 and as one batch. xo: ONE `xo seed --model F --device cpu
--epochs R --repeat R --json` process; its epoch_ms is the median of the R
epochs, predict_s/predict_s_one_batch the medians of R timed calls after a
warm-up. Peer: one peer_jax.py process, medians of R after a warm-up that
compiles. The ratio is peer time / xo time (> 1: xo faster); the
targets are >= 3x, and never slower (>= 1x), on every model and workload.
A model xo cannot load yet is reported with xo's one-line error and the run
goes on.

The lstm workload (its target: cpu >= 3x JAX jit, training and
predict, at batch 32 and 512) runs the same protocol once per batch B in
(32, 512): `xo seed --model lstm.keras --device cpu --batch-size B
--predict-batch B --epochs R --repeat R --json` and `peer_jax.py
--batch-size B --predict-batch B --repeat R`; its table gives the training
step (train_ms_per_step, the median over the epochs; the peer's median over
its full steps) and predicting the 4000 test samples at batch B, with the
CPU time (user + sys, from getrusage of the child) beside each process's
wall time and the load average before and after.

Also printed: per workload, the GEMM FLOPs (Dense, Conv1D, Conv2D,
MultiHeadAttention's projections and products; an epoch
= 12800 x (forward + dW + dX, no dX for the first layer) + 3200 validation
forwards, predict = 4000 forwards), JAX's rate on them, and the rate xo's
kernels would need to be 3x faster than JAX, marked "(beyond peak)" where it
exceeds `xo probe --device cpu`'s FMA peak: no kernel reaches those. Per
model at batch 512, the GEMM FLOPs of a training step (3x the forward's)
over xo's measured ms/step (the whole step's time: a LOWER bound on the
GEMM layers' rate), and the real table: `xo bench --layers` times each
GEMM-shaped layer's forward, dW and dX alone on its exact shapes (wall and
CPU medians), against the FMA peak (target >= 50%), with the reason for
each product below it (K < 16: not GEMM-efficient; N below the vector
width; a small call). And the peak RSS of a seed-sized
`xo seed --device cpu`: the experiment's own (peak_rss_mb) and the whole
xo process's (process_peak_rss_mb, after the closing diagnosis, whose cost
model probe runs in a child `xo probe`: probe_peak_rss_mb, reported apart);
target < 64 MB. Exit 0 when everything ran (targets missed are reported, not
failed), 2 on bad usage.
"""
import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("KERAS_BACKEND", "jax")


def build_zoo(d):
    import keras
    from keras import layers as L

    keras.config.set_floatx("float32")
    keras.utils.set_random_seed(1)
    zoo = {
        "seed": keras.Sequential([
            keras.Input((29, 1)),
            L.Conv1D(16, 3, activation="relu"), L.MaxPooling1D(3),
            L.Conv1D(32, 3, activation="relu"), L.MaxPooling1D(3),
            L.Flatten(), L.Dropout(0.5),
            L.Dense(32, activation="sigmoid"), L.Dense(12, activation="softmax")]),
        "mlp": keras.Sequential([
            keras.Input((64,)),
            L.Dense(256, activation="relu"), L.Dense(128, activation="relu"),
            L.Dense(10, activation="softmax")]),
        "cnn2d": keras.Sequential([
            keras.Input((16, 16, 1)),
            L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(2),
            L.Conv2D(32, 3, activation="relu"), L.MaxPooling2D(2),
            L.Flatten(), L.Dense(10, activation="softmax")]),
        "cnn_bn": keras.Sequential([
            keras.Input((16, 16, 1)),
            L.Conv2D(16, 3), L.BatchNormalization(), L.Activation("relu"),
            L.MaxPooling2D(2), L.Flatten(), L.Dense(10, activation="softmax")]),
        "conv1d_sd": keras.Sequential([
            keras.Input((64, 2)),
            L.Conv1D(16, 5, strides=2, activation="relu"),
            L.Conv1D(32, 3, dilation_rate=2, activation="relu"),
            L.GlobalAveragePooling1D(), L.Dense(8, activation="softmax")]),
        "res_cnn": residual_cnn(keras, L),
        "sep_cnn": keras.Sequential([
            keras.Input((16, 16, 3)),
            L.SeparableConv2D(16, 3, activation="relu"), L.MaxPooling2D(2),
            L.SeparableConv2D(32, 3, activation="relu"),
            L.GlobalAveragePooling2D(), L.Dense(10, activation="softmax")]),
        "transformer": tiny_transformer(keras, L),
    }
    paths, flops = {}, {}
    for name, m in zoo.items():
        paths[name] = os.path.join(d, name + ".keras")
        m.save(paths[name])
        flops[name] = gemm_flops_per_sample(m)
    return paths, flops


def residual_cnn(keras, L):
    """A Functional residual block: Conv2D, then two 3x3 convolutions whose
    output is added to their input, relu, pooling and a Dense head."""
    inp = keras.Input((16, 16, 1))
    x = L.Conv2D(16, 3, padding="same", activation="relu")(inp)
    y = L.Conv2D(16, 3, padding="same", activation="relu")(x)
    y = L.Conv2D(16, 3, padding="same")(y)
    x = L.Activation("relu")(L.Add()([x, y]))
    x = L.Flatten()(L.MaxPooling2D(2)(x))
    return keras.Model(inp, L.Dense(10, activation="softmax")(x))


def tiny_transformer(keras, L):
    """A Functional transformer encoder block as a classifier: token
    embedding, self-attention and a feed-forward block each with a residual
    Add and a post-LayerNormalization, average over the sequence, softmax."""
    inp = keras.Input((32,), dtype="int32")
    x = L.Embedding(1000, 32)(inp)
    x = L.LayerNormalization()(L.Add()([x, L.MultiHeadAttention(2, 16)(x, x)]))
    f = L.Dense(32)(L.Dense(64, activation="relu")(x))
    x = L.LayerNormalization()(L.Add()([x, f]))
    x = L.GlobalAveragePooling1D()(x)
    return keras.Model(inp, L.Dense(10, activation="softmax")(x))


def attention_flops(layer):
    """A MultiHeadAttention's forward FLOPs per sample (self-attention,
    query = value): the query, key, value and output projections
    (EinsumDense, GEMMs over the sequence's rows) and per head the scores
    Q K^T and the weighted sum P V (Tq x Tk x dk and Tq x Tk x dv)."""
    t, d = layer.output.shape[1], layer.output.shape[-1]
    h, dk = layer.num_heads, layer.key_dim
    dv = layer.value_dim or dk
    proj = t * (d * h * dk * 2 + d * h * dv + h * dv * d)
    return 2 * (proj + t * t * h * (dk + dv))


def gemm_flops_per_sample(m):
    """Forward FLOPs (2 per multiply-add) of the GEMM-shaped layers (Dense,
    Conv1D/2D, a separable convolution's pointwise product, a
    MultiHeadAttention) for one sample, and those of the first one when no
    layer with parameters comes before it (training computes no dX for it;
    after an Embedding it does, and the first's count is 0)."""
    total, first = 0, None
    for layer in m.layers:
        kind = type(layer).__name__
        if kind == "Embedding":  # parameters before the first GEMM: it takes dX
            first = 0
        if kind == "MultiHeadAttention":
            f = attention_flops(layer)
            first = f if first is None else first
            total += f
            continue
        if kind not in ("Dense", "Conv1D", "Conv2D", "SeparableConv1D", "SeparableConv2D"):
            continue
        out = layer.output.shape[1:]
        # a separable convolution's GEMM is its pointwise product (the
        # depthwise taps are per channel, not GEMM-shaped)
        kernel = layer.pointwise_kernel.shape if kind.startswith("Separable") else layer.kernel.shape
        positions = 1
        for s in out[:-1]:
            positions *= s
        macs_per_out = 1
        for s in kernel[:-1]:
            macs_per_out *= s
        f = 2 * positions * out[-1] * macs_per_out
        first = f if first is None else first
        total += f
    return total, first or 0


# The protocol's sample counts (xo seed, docs/model.md): 20000 samples, 16000
# for fit, of which validation_split=0.2 holds out the last 3200; 4000 test
# samples predicted.
FIT_TRAIN, FIT_VAL, PREDICT_N = 12800, 3200, 4000


def workload_gemm_flops(fwd, first):
    """GEMM FLOPs of each workload: an epoch trains FIT_TRAIN samples (forward,
    dW, and dX except the first layer's: 3 fwd - first) and runs the
    validation forward on FIT_VAL; predict is PREDICT_N forwards either way.
    Only the GEMM-shaped layers count: a lower bound on the work."""
    return {"epoch": FIT_TRAIN * (3 * fwd - first) + FIT_VAL * fwd,
            "predict b32": PREDICT_N * fwd, "predict 1 batch": PREDICT_N * fwd}


def layer_reason(l, share, vw):
    """Why a GEMM-shaped layer's product runs below half the peak."""
    if share is None or share >= 0.5:
        return ""
    why = []
    if l.get("calls"):  # an attention step: one small GEMM per (sample, head)
        why.append(f"{l['calls']} products of {l['flops'] / l['calls'] / 1e3:.0f} kFLOP, "
                   "one BLAS call each: the call's set-up and packing weigh")
    if l["k"] < 16:
        why.append(f"K={l['k']}: {l['k']}-term dot products, not GEMM-efficient "
                   "(loads and the epilogue per FMA)")
    if l["n"] < vw:
        why.append(f"N={l['n']} fills {l['n']} of {vw} vector lanes")
    if l["flops"] < 4e6:
        why.append(f"{l['flops']/1e6:.1f} MFLOP a call: per-call cost (threads, "
                   "bias/activation pass) weighs")
    return "; ".join(why) or "see docs/cpu.md"


CHILD_CPU = [0.0]  # CPU seconds (user + sys) of the last child run() waited for


def run(cmd, timeout=1800):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    CHILD_CPU[0] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return p.returncode, p.stdout, p.stderr


LSTM_BATCHES = (32, 512)


def build_lstm(d):
    import keras
    from keras import layers as L

    keras.config.set_floatx("float32")
    keras.utils.set_random_seed(2)
    m = keras.Sequential([keras.Input((50, 16)), L.LSTM(64),
                          L.Dense(10, activation="softmax")])
    path = os.path.join(d, "lstm.keras")
    m.save(path)
    return path


def lstm_workload(xo, path, repeat):
    """Both sides at each batch of LSTM_BATCHES; one row per (batch, workload)."""
    rows = []
    for b in LSTM_BATCHES:
        t0 = time.time()
        rc, out, err = run([xo, "seed", "--model", path, "--device", "cpu", "--epochs",
                            str(repeat), "--repeat", str(repeat), "--batch-size", str(b),
                            "--predict-batch", str(b), "--json"])
        xcpu, xwall = CHILD_CPU[0], time.time() - t0
        x = json.loads(out)[0] if rc == 0 else None
        xerr = None if x else (err.strip().splitlines() or [f"exit {rc}"])[-1]
        t0 = time.time()
        rc, out, err = run([sys.executable, os.path.join(HERE, "peer_jax.py"), "--model", path,
                            "--repeat", str(repeat), "--batch-size", str(b),
                            "--predict-batch", str(b), "--json"])
        pcpu, pwall = CHILD_CPU[0], time.time() - t0
        p = json.loads(out.strip().splitlines()[-1]) if rc == 0 else None
        perr = None if p else (err.strip().splitlines() or [f"exit {rc}"])[-1]
        for label, key, scale in (("train step", "train_ms_per_step", 1e-3),
                                  ("predict 4000", "predict_s", 1.0)):
            xt = x[key] * scale if x else None
            pt = p[key] * scale if p and p.get(key) else None
            rows.append({"batch": b, "workload": label, "xo_s": xt, "jax_s": pt,
                         "ratio": pt / xt if xt and pt else None, "xo_error": xerr,
                         "peer_error": perr, "xo_process_cpu_s": xcpu,
                         "xo_process_wall_s": xwall, "peer_process_cpu_s": pcpu,
                         "peer_process_wall_s": pwall})
    return rows


def print_lstm(rows, repeat):
    print(f"\nlstm: LSTM(64) + Dense(10) softmax, 50 steps x 16 features; medians of {repeat}")
    print(f"{'batch':>5} {'workload':<13} {'xo cpu ms':>10} {'jax ms':>10} {'jax/xo':>8}  "
          "3x target   process CPU s / wall s (xo; jax)")
    held = 0
    for r in rows:
        if r["xo_s"] is None:
            print(f"{r['batch']:>5} {r['workload']:<13} xo failed: {r['xo_error']}")
            continue
        ok = r["ratio"] is not None and r["ratio"] >= 3.0
        held += ok
        jt = f"{r['jax_s'] * 1e3:10.3f}" if r["jax_s"] else f"{'n/a':>10}"
        rt = f"{r['ratio']:.2f}x" if r["ratio"] else "n/a"
        print(f"{r['batch']:>5} {r['workload']:<13} {r['xo_s'] * 1e3:10.3f} {jt} {rt:>8}  "
              f"{'holds ' if ok else 'MISSED'}      {r['xo_process_cpu_s']:.1f}/"
              f"{r['xo_process_wall_s']:.1f}; {r['peer_process_cpu_s']:.1f}/"
              f"{r['peer_process_wall_s']:.1f}")
    print(f"lstm 3x target: held {held} of {len(rows)}")


def xo_side(xo, path, repeat):
    rc, out, err = run([xo, "seed", "--model", path, "--device", "cpu", "--epochs", str(repeat),
                        "--repeat", str(repeat), "--json"])
    if rc:
        line = [l for l in err.strip().splitlines() if l.startswith("xo")]
        return None, line[-1] if line else err.strip()[-300:]
    return json.loads(out)[0], None


def layers_side(xo, path, repeat, threads):
    """`xo bench --layers` on the model: each GEMM-shaped layer alone at
    batch 512 (forward, dW, dX), medians of repeat, wall and CPU time."""
    rc, out, err = run([xo, "bench", "--layers", "--model", path, "--batch", "512",
                        "--repeat", str(repeat), "--threads", str(threads), "--json"])
    if rc:
        return None, err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
    return json.loads(out), None


def peer_side(path, repeat):
    rc, out, err = run([sys.executable, os.path.join(HERE, "peer_jax.py"), "--model", path,
                        "--repeat", str(repeat), "--json"])
    if rc:
        return None, err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
    return json.loads(out.strip().splitlines()[-1]), None


def seed_rss(xo):
    """Peak RSS of a seed-sized `xo seed --device cpu`, in a fresh Python
    child whose only child is xo (RUSAGE_CHILDREN is the max over children)."""
    code = ("import json,resource,subprocess,sys;"
            "p=subprocess.run([sys.argv[1],'seed','--device','cpu','--json'],"
            "capture_output=True,text=True);"
            "print(json.dumps({'rc':p.returncode,'maxrss_kb':"
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
            "'seed':json.loads(p.stdout)[0] if p.returncode==0 else None}))")
    rc, out, err = run([sys.executable, "-c", code, xo])
    return json.loads(out) if rc == 0 else {"rc": rc, "error": err[-300:]}


def machine():
    model, flags = "unknown", set()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return {"cpu": model, "avx2": "avx2" in flags, "avx512f": "avx512f" in flags,
            "cores": os.cpu_count(), "platform": platform.platform(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def fma_peak(xo):
    rc, out, _ = run([xo, "probe", "--device", "cpu", "--json"], timeout=300)
    if rc:
        return None
    return json.loads(out)[0].get("flops")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xo", default=os.path.join(HERE, "..", "build", "cli", "xo"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default=None, help="comma-separated model names")
    ap.add_argument("--json", default=None, help="write every figure to this file")
    ap.add_argument("--keep", default=None, help="build the zoo here and keep it")
    ap.add_argument("--layer-threads", type=int, default=2,
                    help="threads of the per-layer table (xo bench --layers --threads)")
    a = ap.parse_args()
    if a.repeat < 5:
        print("zoo.py: --repeat must be >= 5 (medians of at least 5 runs)", file=sys.stderr)
        return 2
    if not os.access(a.xo, os.X_OK):
        print(f"zoo.py: --xo {a.xo}: not an executable", file=sys.stderr)
        return 2
    xo = os.path.abspath(a.xo)
    m = machine()
    print(f"zoo: {m['date']}; {m['cpu']}, {m['cores']} cores, avx2 "
          f"{'yes' if m['avx2'] else 'no'}, avx512f {'yes' if m['avx512f'] else 'no'}; "
          f"xo cpu vs JAX (jit over the whole step), medians of {a.repeat}")
    only = a.only.split(",") if a.only else None
    if only == ["lstm"]:  # the lstm workload alone
        load0 = os.getloadavg()
        with tempfile.TemporaryDirectory() as tmp:
            d = a.keep or tmp
            os.makedirs(d, exist_ok=True)
            lrows = lstm_workload(xo, build_lstm(d), a.repeat)
        load1 = os.getloadavg()
        print(f"load average before {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}, "
              f"after {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f}")
        print_lstm(lrows, a.repeat)
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"machine": m, "load_before": load0, "load_after": load1,
                           "lstm": lrows}, f, indent=1)
        return 0
    rss = seed_rss(xo)  # first: RUSAGE_CHILDREN must see xo alone
    peak = fma_peak(xo)
    rows = []
    lrows = None
    with tempfile.TemporaryDirectory() as tmp:
        d = a.keep or tmp
        os.makedirs(d, exist_ok=True)
        paths, flops = build_zoo(d)
        if only and "lstm" in only:
            lrows = lstm_workload(xo, build_lstm(d), a.repeat)
        for name, path in paths.items():
            if only and name not in only:
                continue
            x, xerr = xo_side(xo, path, a.repeat)
            p, perr = peer_side(path, a.repeat)
            lay, lerr = layers_side(xo, path, a.repeat, a.layer_threads) if x else (None, xerr)
            rows.append({"model": name, "xo": x, "xo_error": xerr, "peer": p,
                         "peer_error": perr, "gemm_flops_per_sample": flops[name][0],
                         "gemm_flops_first_layer": flops[name][1],
                         "layers": lay, "layers_error": lerr})
            print(f"  {name}: xo {'ok' if x else 'not supported'}, peer {'ok' if p else perr}",
                  file=sys.stderr)

    work = (("epoch", "epoch_ms", 1e-3, "epoch_s", 1.0),
            ("predict b32", "predict_s", 1.0, "predict_s", 1.0),
            ("predict 1 batch", "predict_s_one_batch", 1.0, "predict_s_one_batch", 1.0))
    print(f"\n{'model':<10} {'workload':<16} {'xo cpu ms':>10} {'jax ms':>10} {'jax/xo':>8}  "
          f"{'3x target':<9} {'GEMM MFLOP':>10} {'jax GFLOP/s':>11} {'3x needs':>9}")
    held = missed = beyond = slower = 0
    for r in rows:
        if not r["xo"]:
            print(f"{r['model']:<10} not supported by this build: {r['xo_error']}")
            continue
        r["ratios"], r["needs_3x_gflops"] = {}, {}
        wf = workload_gemm_flops(r["gemm_flops_per_sample"], r["gemm_flops_first_layer"])
        for label, xk, xs, pk, ps in work:
            xt = r["xo"][xk] * xs
            pt = r["peer"][pk] * ps if r["peer"] else None
            ratio = pt / xt if pt else None
            r["ratios"][label] = ratio
            ok = ratio is not None and ratio >= 3.0
            held += ok
            missed += not ok
            slower += ratio is not None and ratio < 1.0
            # the GEMM FLOPs alone at 3x the peer's speed: the rate xo's
            # kernels would need; above the FMA peak no kernel can do it
            need = 3 * wf[label] / pt if pt else None
            r["needs_3x_gflops"][label] = need / 1e9 if need else None
            over = bool(need and peak and need > peak)
            beyond += over
            print(f"{r['model']:<10} {label:<16} {xt*1e3:>10.3f} "
                  f"{(pt*1e3 if pt else float('nan')):>10.3f} "
                  f"{(f'{ratio:.2f}x' if ratio else 'n/a'):>8}  {'holds' if ok else 'MISSED':<9} "
                  f"{wf[label]/1e6:>10.1f} {(wf[label]/pt/1e9 if pt else float('nan')):>11.1f} "
                  + (f"{need/1e9:>9.1f}" if need else f"{'n/a':>9}")
                  + (f" = {100*need/peak:.0f}% of peak" if need and peak else "")
                  + (" (beyond peak)" if over else ""))
    print(f"3x target: held {held}, missed {missed} (of the workloads that ran); "
          f"{beyond} workloads would need more than the measured FMA peak"
          + (f" ({peak/1e9:.1f} GFLOP/s, xo probe)" if peak else "")
          + " for their GEMM FLOPs alone (GEMM MFLOP: epoch = 12800 x (3 fwd - the first "
          "layer's dX) + 3200 fwd, predict = 4000 fwd; 3x needs = 3 x GEMM FLOPs / jax time)")
    print(f"never slower than JAX: {'holds' if not slower else 'MISSED'} ({slower} of "
          f"{held + missed} workloads slower)")

    print(f"\nGEMM-shaped layers at batch 512 (FMA peak {peak/1e9:.1f} GFLOP/s from xo probe; "
          "whole-step time, so a lower bound):" if peak else "\nno FMA peak (xo probe failed)")
    for r in rows:
        if not r["xo"] or not peak:
            continue
        step_s = r["xo"]["train_ms_per_step"] * 1e-3
        rate = 3 * r["gemm_flops_per_sample"] * 512 / step_s
        r["gemm_gflops_lower_bound"] = rate / 1e9
        print(f"  {r['model']:<10} {3 * r['gemm_flops_per_sample'] * 512 / 1e6:8.2f} MFLOP/step in "
              f"{step_s*1e3:.3f} ms: >= {rate/1e9:.1f} GFLOP/s = {100*rate/peak:.1f}% of peak "
              f"(target 50%: {'holds' if rate >= 0.5 * peak else 'not shown'})")

    if lrows:
        print_lstm(lrows, a.repeat)
    print(f"\nGEMM-shaped layers timed alone at batch 512 (xo bench --layers --threads "
          f"{a.layer_threads}; medians of {a.repeat}): each product's GFLOP/s by wall time "
          "against the run's N-thread FMA peak, and per CPU-second against one core's "
          "peak (load cannot lower it; the pool's spinning counts, so a lower bound); "
          "dX = the backward with dx minus without; target 50%:")
    for r in rows:
        lay = r.get("layers")
        if not lay:
            if r["xo"]:
                print(f"  {r['model']:<10} no per-layer table: {r['layers_error']}")
            continue
        p1, pn = lay["peak_gflops_1"] * 1e9, lay["peak_gflops_n"] * 1e9
        vw = 16 if lay["isa"] == "avx512" else 8 if lay["isa"] == "avx2" else 1
        print(f"  {r['model']} (peak {p1/1e9:.1f} GFLOP/s one core, {pn/1e9:.1f} "
              f"{lay['threads']} threads; load {lay['load_average']:.1f})")
        tot_f = tot_c = 0.0
        for l in lay["layers"]:
            shape = f"{l['m']}x{l['k']}x{l['n']}"
            # recurrent layers: the backward calls' FLOPs differ from the
            # forward's (xo bench --layers: dw_flops, dx_flops)
            # an attention layer's steps and whole op (xo bench --layers:
            # part); the op's backward is rated by its four products
            if l.get("part"):
                shape = f"{l['m']}x{l['k']}x{l['n']}"
            calls = [("fwd", "fwd_us", "fwd_cpu_us", "flops"),
                     ("dW", "dw_us", "dw_cpu_us", "dw_flops"),
                     ("dX", "dx_us", "dx_cpu_us", "dx_flops")]
            if l.get("part") == "attention":
                calls = [calls[0], ("bwd", "bwd_us", "bwd_cpu_us", "bwd_flops")]
            for call, wk, ck, fk in calls:
                w, c, f = l.get(wk), l.get(ck), l.get(fk, l["flops"])
                if w is None or c is None or w <= 0 or c <= 0:
                    continue
                if not f:  # the softmax step: no GEMM
                    print(f"    {l['layer']:<12} {l['op']:<7} {shape:>14} {call:<3} "
                          f"{w:9.1f} us {c:9.1f} us cpu  (exp and memory, no GEMM)")
                    continue
                tot_f += f
                tot_c += c * 1e-6
                share = f / (c * 1e-6) / p1
                print(f"    {l['layer']:<12} {l['op']:<7} {shape:>14} {call:<3} "
                      f"{w:9.1f} us {c:9.1f} us cpu {f/(w*1e-6)/1e9:7.1f} GFLOP/s "
                      f"{100*f/(w*1e-6)/pn:5.1f}% of {lay['threads']}-thread peak, "
                      f"{100*share:5.1f}% of a core per CPU-s"
                      + (f"  below 50%: {layer_reason(l, share, vw)}" if share < 0.5 else "")
                      + ("  (dX over the peak by wall time: a difference of two medians "
                         "under load, noise)" if call == "dX" and
                         f / (w * 1e-6) > pn else ""))
        if tot_c:
            r["gemm_layers_core_share"] = tot_f / tot_c / p1
            print(f"    all GEMM products together: {100*tot_f/tot_c/p1:.1f}% of a core's peak "
                  "per CPU-second (FLOP-weighted)")

    if rss.get("rc") == 0:
        tree = rss["maxrss_kb"] / 1024
        sd = rss["seed"]
        exp = sd["peak_rss_mb"]
        proc = sd.get("process_peak_rss_mb")
        child = sd.get("probe_peak_rss_mb")
        print(f"\npeak RSS of a seed-sized xo seed --device cpu: {exp:.1f} MB the experiment "
              f"(peak_rss_mb), "
              + (f"{proc:.1f} MB the whole xo process (process_peak_rss_mb; the diagnosis's "
                 f"probe ran in a child: {child:.1f} MB, its triad arrays exceed the LLC)"
                 if sd.get("probe_in_child") else
                 f"{tree:.1f} MB the whole process (getrusage; the probe ran in it)")
              + f"; target < 64 MB: {'holds' if exp < 64 else 'MISSED'} for the experiment, "
              f"{'holds' if (proc if sd.get('probe_in_child') else tree) < 64 else 'MISSED'} "
              "for the process")
    else:
        print(f"\npeak RSS: the seed run failed: {rss}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": m, "fma_peak": peak, "rss": rss, "models": rows,
                       "lstm": lrows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
