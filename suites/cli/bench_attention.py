#!/usr/bin/env python3
"""bench_attention.py XO SRC json|text - `xo bench --layers` on a model
with a MultiHeadAttention (the golden mha_enc: a dense projection to 16
features over 8 steps, MultiHeadAttention 2 heads x key_dim 8, a
feed-forward block, a dense head) lists attention's GEMM-shaped products.
One run per mode (each measures the FMA peaks and times every entry for
0.05 s at least: two ctest tests). Exit 0 pass, 1 fail.

- The attention layer's entries, in this order after the layer before it:
  its query, key, value and output projections as dense GEMMs (M = batch x
  steps, K the input features, N heads x key_dim or the output features),
  then on cpu each step of the attention op's forward alone: scores Q K^T
  (M = batch x heads x Tq, K = key_dim, N = Tk), the softmax (no FLOPs)
  and the weighted sum P V (K = Tk, N = value_dim), then the whole op
  (K = key_dim + value_dim: both products) whose backward is rated by its
  four products (bwd_flops = 2 x the forward's).
- json: each GEMM entry's FLOPs are 2 M K N and its times are positive; the
  steps have a forward only (dW, dX null); the whole op a forward and a
  backward.
- text: the table prints each product's GFLOP/s and % of the peak, the
  softmax's as '-'.
"""
import json
import os
import re
import subprocess
import sys


def run(xo, *args):
    p = subprocess.run([xo, "bench", "--layers", "--repeat", "1", "--threads", "1", *args],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, (args, p.returncode, p.stderr[-2000:])
    return p.stdout


def main():
    xo, src, mode = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
    model = os.path.join(src, "suites", "golden", "mha_enc", "model.model")
    b, t, h, dk, d = 16, 8, 2, 8, 16
    if mode == "text":
        return check_text(xo, model)
    out = json.loads(run(xo, "--model", model, "--batch", str(b), "--json"))
    want = [("proj", "dense", None, b * t, 4, d),
            ("mha/query", "dense", None, b * t, d, h * dk),
            ("mha/key", "dense", None, b * t, d, h * dk),
            ("mha/value", "dense", None, b * t, d, h * dk),
            ("mha/output", "dense", None, b * t, h * dk, d),
            ("mha/scores", "attention", "scores", b * h * t, dk, t),
            ("mha/softmax", "attention", "softmax", b * h * t, 0, t),
            ("mha/weighted_sum", "attention", "weighted_sum", b * h * t, t, dk),
            ("mha/attention", "attention", "attention", b * h * t, 2 * dk, t),
            ("ff1", "dense", None, b * t, d, 32),
            ("ff2", "dense", None, b * t, 32, d),
            ("head", "dense", None, b, d, 3)]
    got = [(l["layer"], l["op"], l.get("part"), l["m"], l["k"], l["n"]) for l in out["layers"]]
    assert got == want, (got, want)
    for l in out["layers"]:
        assert l["flops"] == 2 * l["m"] * l["k"] * l["n"], l
        assert l["fwd_us"] > 0 and l["fwd_cpu_us"] > 0, l
        part = l.get("part")
        if part in ("scores", "softmax", "weighted_sum"):
            assert l["dw_us"] is None and l["bwd_us"] is None, l
        elif part == "attention":
            assert l["bwd_us"] > 0 and l["dw_us"] is None, l
            assert l["bwd_flops"] == 2 * l["flops"], l
        else:
            assert l["dw_us"] > 0, l
            assert (l["bwd_us"] is None) == (l["layer"] == "proj"), l
    print("bench_attention json: ok")
    return 0


def check_text(xo, model):
    text = run(xo, "--model", model, "--batch", "16")
    rate = r"\s+\d+\.\d\d\s+-?\d+\.\d%\s+\d+\.\d%$"
    for name, shape in (("mha/query", "128x16x16"), ("mha/scores", r"32x\(8x8x8\)"),
                        ("mha/weighted_sum", r"32x\(8x8x8\)"),
                        ("mha/attention", r"32x\(8x16x8\)")):
        line = [x for x in text.splitlines() if x.split()[:1] == [name]]
        assert len(line) == 1, (name, text)
        assert re.search(shape + r"\s+fwd\s+\d+\.\d\d\s+\d+\.\d\d" + rate, line[0]), line
    sm = [x for x in text.splitlines() if x.split()[:1] == ["mha/softmax"]]
    assert len(sm) == 1 and re.search(r"fwd\s+\d+\.\d\d\s+\d+\.\d\d\s+-\s+-\s+-$", sm[0]), sm
    bwd = text.splitlines()[text.splitlines().index([x for x in text.splitlines()
                                                      if x.split()[:1] == ["mha/attention"]][0]) + 1]
    assert re.search(r"^\s+bwd\s+\d+\.\d\d\s+\d+\.\d\d" + rate, bwd), bwd
    print("bench_attention text: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
