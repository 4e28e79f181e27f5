#!/usr/bin/env python3
"""explain_attention.py XO SRC [cl] - `xo explain --json` on a model with a
MultiHeadAttention (the golden mha_enc: 8 steps, a dense projection to 16
features, MultiHeadAttention 2 heads x key_dim 8) names attention's parts at
every point. Exit 0 pass, 1 fail.

Each point (cpu, batch 2 and 32, predict and train step) carries one
"attention" entry for the layer (index 1), with the shapes and the parts of
perfdb/cost.h's xo_cost_attention against hand-computed amounts:
  GEMM-shaped  scores Q K^T 2 n h Tq Tk dk and P V 2 n h Tq Tk dv FLOPs, x3
               in training; the projections the layer's FLOPs less those
  memory-bound the softmax: 8 bytes a score (x3 in training)
  head split/merge  0 bytes (strided views)
  serial       cpu: n h pairs, 2 small GEMM calls a pair (7 in training)
and "bound" one of GEMM, softmax, serial, with a diagnosis sentence that
names each part. The layer's term in the prediction is max(its roofline_s,
its serial_s): predicted_attention_serial_s is serial_s where that won, else
0 (which wins depends on the machine's probe: under ASan the GEMM rate is
low enough for the roofline to win at batch 2). A model without attention has no "attention" key.
With cl (batch 2 on the OpenCL device; exit 77, skipped, when there is none
unless XO_REQUIRE_OPENCL=1): the serial part is one work-item's chain of
Tk (3 dk + dv) multiply-adds (x3 in training), no calls, and the softmax's
bytes are the K and V rows each query row reads, 4 (3 dk + dv) a score.
"""
import json
import os
import subprocess
import sys


def explain(xo, model, *batches, device="cpu", code=0):
    args = [xo, "explain", "--device", device, "--repeat", "1", "--budget", "0.2", "--json",
            "--no-progress"]
    if model:
        args += ["--model", model]
    for b in batches:
        args += ["--batch", str(b)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode and code is None:
        return None
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    return json.loads(p.stdout)


def check_cl(xo, model, h, t, dk, dv):
    out = explain(xo, model, 2, device="cl", code=None)
    if out is None:
        if os.environ.get("XO_REQUIRE_OPENCL") == "1":
            print("explain_attention: no OpenCL device, XO_REQUIRE_OPENCL=1")
            return 1
        print("explain_attention: no OpenCL device: skipped")
        return 77
    for pt in out["points"]:
        train = pt["what"] == "train_step"
        passes = 3 if train else 1
        a = pt["attention"][0]
        assert a["serial_chain_macs"] == t * (3 * dk + dv) * passes, a
        assert a["serial_calls"] is None, a
        assert a["softmax_bytes"] == passes * 2 * h * t * t * 4 * (3 * dk + dv), a
        assert "one work-item per (sample, query row, head)" in a["diagnosis"], a
        want = a["serial_s"] if a["serial_s"] > a["roofline_s"] else 0
        assert pt["predicted_attention_serial_s"] == want, (pt, a)
    print("explain_attention cl: ok")
    return 0


def main():
    xo, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    model = os.path.join(src, "suites", "golden", "mha_enc", "model.model")
    h, t, dk, dv, d = 2, 8, 8, 8, 16
    # the four projections per sample: query, key, value 16 -> 2 x 8 and
    # output 16 -> 16, over 8 rows each
    proj = 2 * t * (3 * d * h * dk + h * dv * d)
    if sys.argv[3:] == ["cl"]:
        return check_cl(xo, model, h, t, dk, dv)
    out = explain(xo, model, 2, 32)
    assert len(out["points"]) == 4, out["points"]
    serial_won = False
    for pt in out["points"]:
        n, train = pt["batch"], pt["what"] == "train_step"
        passes = 3 if train else 1
        att = pt.get("attention")
        assert att and len(att) == 1, pt
        a = att[0]
        assert (a["layer"], a["heads"], a["len_q"], a["len_kv"], a["key_dim"],
                a["value_dim"]) == (1, h, t, t, dk, dv), a
        scores = n * h * t * t
        assert a["gemm_scores_flops"] == passes * 2 * scores * dk, a
        assert a["gemm_wsum_flops"] == passes * 2 * scores * dv, a
        assert abs(a["gemm_proj_flops"] - passes * n * proj) <= 1e-9 * n * proj, (a, proj)
        assert a["softmax_bytes"] == passes * 8 * scores, a
        assert a["head_split_merge_bytes"] == 0, a
        assert a["pairs"] == n * h and a["serial_calls"] == n * h * (7 if train else 2), a
        assert a["serial_chain_macs"] is None, a
        for k in ("gemm_s", "softmax_s", "serial_s"):
            assert a[k] > 0, (k, a)
        assert a["bound"] in ("GEMM", "softmax", "serial"), a
        # the layer costs max(its roofline, its serial part) (perfdb/cost.h):
        # the serial part where it wins, in the step's compute
        want = a["serial_s"] if a["serial_s"] > a["roofline_s"] else 0
        assert pt["predicted_attention_serial_s"] == want, (pt, a)
        assert pt["predicted_compute_s"] >= max(a["serial_s"], a["roofline_s"]), (pt, a)
        serial_won = serial_won or want > 0
        for words in ("GEMM-shaped", "Q K^T", "P V", "memory-bound: the softmax",
                      "head split/merge: none", f"serial: {n * h} (sample, head) pairs",
                      "largest part: " + a["bound"]):
            assert words in a["diagnosis"], (words, a["diagnosis"])
    if not serial_won:
        print("explain_attention: note: the roofline won at every point (no serial term seen)")
    seed = explain(xo, None, 2)
    assert all("attention" not in p for p in seed["points"]), seed["points"]
    print("explain_attention: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
